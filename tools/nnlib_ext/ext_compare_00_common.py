# Shared by the project's harness rows (exec'd first: the ext_compare_* files run in file-name order, in
# the namespace of the harness's compare.py).


def pair_shapes(t):
    """Operand shapes of a binary row, cycling over: same, scalar either side, per-depth either side,
    two-sided broadcast."""
    sa = rshape(1500)
    b, h, w, d = sa
    mode = t % 7
    if mode == 0: return sa, sa
    if mode == 1: return sa, (1, 1, 1, 1)
    if mode == 2: return (1, 1, 1, 1), sa
    if mode == 3: return sa, (1, 1, 1, d)
    if mode == 4: return (1, 1, 1, d), sa
    if mode == 5: return (b, h, 1, d), (1, h, w, 1)
    return (1, 1, w, 1), (b, h, 1, d)
