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


def refused(st, p, rc, desc, per_side=True):
    """Book a case that the C (``rc`` != 0) or the project (``p`` an exception) refused; False when both ran.

    Both refusing is agreement (counted exact, and in ``errs``). One side alone is a difference: with
    ``per_side`` it is counted in ``c_err`` / ``proj_err`` with the first message in ``first_err`` (the
    harness's bookkeeping for its generic rows), else only the first message is kept in ``first``."""
    if not (isinstance(p, Exception) or rc):
        return False
    st.cases += 1
    if isinstance(p, Exception) and rc:
        st.exact += 1
        st.errs += 1
        return True
    c_msg = f" ({C.string_at(L.hx_error()).decode()})" if rc else ""
    msg = f"{desc}: C rc={rc}{c_msg} proj={str(p)[:160] if isinstance(p, Exception) else 'ok'}"
    if per_side:
        if rc:
            st.c_err += 1
        else:
            st.proj_err += 1
        st.first_err = st.first_err or msg
    else:
        st.first = st.first or msg
    return True
