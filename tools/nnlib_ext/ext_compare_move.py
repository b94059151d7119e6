# Comparison rows of the `move` area, part 1 (exec'd at the end of the oracle's compare.py: Stat, cop, cmp3, proj,
# rng, N, S, I32, rshape, q8, rr, rand_range, L, OPC, C, np). Every case runs nnlib's C (libnnref.so) and the project
# (run_op through proj) on the same inputs. Ranges: zero-excluding, zero-width, tiny, huge (the C only copies them);
# odd sizes, batch > 1, negative / out-of-range parameters as the C reads them.


def _mv_range():
    k = rng.random()
    if k < 0.7: return rr()
    if k < 0.8: v = np.float32(rng.uniform(-5, 5)); return v, v                       # zero width
    if k < 0.9: return np.float32(rng.uniform(0.5, 3)), np.float32(rng.uniform(-3, -0.5))   # min > max
    return rand_range(rng.choice(["nozero_pos", "nozero_neg", "tiny", "huge"]))


def _mv_rearm(op, ins, kw, p):
    """Arm the golden recorder again (one proj call, several recorded outputs: Split parts, TopK values/indices)."""
    g = globals().get("_gold_proj")
    if g: g(op, ins, kw, p)


def _mv_multi(st, sym, ins, pyop, outs, desc, code_outs, range_outs=(), node_type=0, padding=0, **kw):
    """Compare an op with several data outputs: C outs ``outs`` [(dtype, n)], project outputs in the same order.
    ``code_outs`` / ``range_outs``: output positions compared as data / as (min, max) pairs (recorded one
    st.add per data output, each with the ranges)."""
    rc, r = cop(sym, ins, outs, node_type, padding)
    p = proj(pyop, ins, padding=padding, **kw)
    if refused(st, p, rc, desc):
        return
    if len(p) != len(outs):
        st.cases += 1; st.first = st.first or f"{desc}: C gives {len(outs)} outputs, proj {len(p)}"; return
    rc_r = [r[k].item() for k in range_outs]; rp_r = [p[k].item() for k in range_outs]
    for n, k in enumerate(code_outs):
        if n: _mv_rearm(pyop, ins, dict(padding=padding, **kw), p)
        if r[k].shape != p[k].shape:
            st.cases += 1; st.first = st.first or f"{desc}: output {k} shape C={r[k].shape} proj={p[k].shape}"; continue
        st.add(r[k], p[k], rc_r, rp_r, f"{desc} (output {k})")


# ---------------- QuantizedSlice_8 (op_slice.c slice_run / slice_prepare) ----------------
st = Stat("move QuantizedSlice_8")
for t in range(N):
    sh = rshape(2000); x = q8(sh); mn, mx = _mv_range()
    k = int(rng.integers(1, 5)); dims = sh[4 - k:]
    starts = [int(rng.integers(0, n)) for n in dims]
    sizes = [int(rng.choice([-1, rng.integers(1, n - b + 1)])) for n, b in zip(dims, starts)]
    if t % 9 == 0: j = int(rng.integers(0, k)); sizes[j] = int(rng.choice([0, dims[j] - starts[j] + 1, -2]))
    if t % 13 == 0: j = int(rng.integers(0, k)); starts[j] = dims[j]            # start at the end
    ins = [x, I32(starts), I32(sizes), S(mn), S(mx)]
    cmp3(st, "move_slice", ins, "QuantizedSlice_8", ins, np.uint8, 8 * x.size + 4096,   # room for the C overrun (see kernel)
         f"{sh} start={starts} size={sizes} range=[{mn},{mx}]")
st.out()

# ---------------- QuantizedStridedSlice_8 (op_stridedslice.c strided_slice_impl) ----------------
st = Stat("move QuantizedStridedSlice_8")
for t in range(N):
    sh = rshape(2000); x = q8(sh); mn, mx = _mv_range()
    k = int(rng.integers(1, 5)); dims = sh[4 - k:]
    steps = [int(rng.choice([1, 1, 2, 3, -1, -2])) for _ in dims]
    begins, ends = [], []
    for n, s in zip(dims, steps):
        b = int(rng.integers(-n, n)); e = int(rng.integers(-n - 1, n + 1))
        if rng.random() < 0.5: b, e = (b, e) if (s > 0) == (b < e) else (e, b)
        begins.append(b); ends.append(e)
    if t % 17 == 0: steps[int(rng.integers(0, k))] = 0
    if t % 11 == 0: ends[int(rng.integers(0, k))] = int(rng.integers(dims[0] + 1, dims[0] + 4))   # past the end
    bm, em, sm = (int(rng.integers(0, 16)) if rng.random() < 0.5 else 0 for _ in range(3))
    if t % 19 == 0: bm, em, sm = bm | 0x30, em | 0x100, sm | 0x40                       # bits past 3: ignored
    ins = [x, I32(begins), I32(ends), I32(steps), I32(bm), I32(em), I32(sm), S(mn), S(mx)]
    cmp3(st, "move_sslice", ins, "QuantizedStridedSlice_8", ins, np.uint8, x.size,
         f"{sh} begin={begins} end={ends} step={steps} masks={bm},{em},{sm}")
st.out()

# ---------------- Transpose_8 (op_transpose.c + src/gentranspose.c) ----------------
st = Stat("move Transpose_8")
for t in range(N):
    sh = rshape(3000)
    if t % 7 == 0: sh = (int(rng.integers(1, 3)), int(rng.choice([4, 6, 8, 2])), int(rng.choice([8, 16, 6, 2, 4])), int(rng.choice([16, 4, 8, 64, 6])))
    x = q8(sh); mn, mx = _mv_range()
    k = int(rng.choice([2, 3, 4, 4, 4, 1]))
    perm = [int(v) for v in rng.permutation(k)]
    if t % 23 == 0 and k > 1: perm[0] = perm[1]                                          # not a permutation
    ins = [x, I32(perm), S(mn), S(mx)]
    cmp3(st, "move_transpose", ins, "Transpose_8", ins, np.uint8, x.size, f"{sh} perm={perm}", node_type=OPC("Transpose_8"))
st.out()

# ---------------- QuantizedReshape / QuantizedFlatten (op_reshape.c, op_flatten.c) ----------------
st = Stat("move QuantizedReshape"); st2 = Stat("move QuantizedFlatten")
for t in range(N):
    sh = rshape(2000); x = q8(sh); mn, mx = _mv_range(); n = x.size
    k = int(rng.integers(1, 5)); dims = [1] * k
    rest = n
    for i in range(k - 1):
        divs = [d for d in range(1, rest + 1) if rest % d == 0 and d <= 64]
        dims[i] = int(rng.choice(divs)); rest //= dims[i]
    dims[-1] = rest
    dims = [int(v) for v in rng.permutation(dims)]
    j = int(rng.integers(0, k)); c = t % 8
    if c == 1: dims[j] = -1
    elif c == 2: dims[j] = int(rng.choice([-2, -7]))
    elif c == 3: dims[j] += 1
    elif c == 4: dims[j] = 0
    elif c == 5 and k > 1: dims[0] = -1; dims[-1] = -1
    ins = [x, I32(dims), S(mn), S(mx)]
    cmp3(st, "move_reshape", ins, "QuantizedReshape", ins, np.uint8, x.size, f"{sh} -> {dims}")
    ins = [x, S(mn), S(mx)]
    cmp3(st2, "move_flatten", ins, "QuantizedFlatten", ins, np.uint8, x.size, f"{sh} range=[{mn},{mx}]")
st.out(); st2.out()

# ---------------- QuantizedSplit_8 (op_split.c qsplit_execute_8 / split_impl) ----------------
st = Stat("move QuantizedSplit_8")
for t in range(N):
    n_out = int(rng.integers(1, 5)); dim = int(rng.integers(-4, 4))
    sh = list(rshape(1500)); sh[dim % 4] *= n_out if t % 7 else 1
    x = q8(tuple(sh)); mn, mx = _mv_range()
    if t % 29 == 0: dim = int(rng.choice([4, -5]))
    ins = [I32(dim), x, S(mn), S(mx)]
    outs = [(np.uint8, x.size)] * n_out + [(np.float32, 1)] * 2
    _mv_multi(st, "move_split", ins, "QuantizedSplit_8", outs, f"{tuple(sh)} dim={dim} n={n_out}",
              list(range(n_out)), (n_out, n_out + 1), n_outputs=n_out + 2)
st.out()

# ---------------- QuantizedTile_8 (op_tile.c tile_execute) ----------------
st = Stat("move QuantizedTile_8")
for t in range(N):
    sh = rshape(600); x = q8(sh); mn, mx = _mv_range()
    k = int(rng.integers(1, 5)); mult = [int(rng.integers(1, 4)) for _ in range(k)]
    # (a multiple of 0 makes tile_execute write the un-multiplied rows past an empty output: not drawn)
    ins = [x, I32(mult), S(mn), S(mx)]
    m4 = [1] * (4 - k) + mult
    cmp3(st, "move_tile", ins, "QuantizedTile_8", ins, np.uint8, int(np.prod([a * b for a, b in zip(sh, m4)])),
         f"{sh} multiples={mult}")
st.out()

# ---------------- MirrorPad_8 (op_mirrorpad.c mirrorpad_check + mirrorpad_execute_8) ----------------
st = Stat("move MirrorPad_8")
for t in range(N):
    sh = rshape(1500); x = q8(sh); mn, mx = _mv_range()
    pad_mode = int(rng.choice([3, 4])) if t % 31 else int(rng.choice([0, 1, 2]))
    rows = 4 if t % 11 else int(rng.choice([2, 3, 5]))
    dims = (list(sh) + [1] * 4)[:rows]
    pads = np.array([[int(rng.integers(0, n)) for _ in range(2)] for n in dims], np.int32)
    if t % 7 == 0: pads.flat[int(rng.integers(0, pads.size))] = dims[0]                 # pad = size: an error in both modes
    if t % 13 == 0: pads.flat[int(rng.integers(0, pads.size))] = -1
    pads = pads.reshape(1, 1, rows, 2)
    ins = [x, pads, S(mn), S(mx)]
    outn = int(np.prod([n + 2 * 8 for n in sh]))
    cmp3(st, "move_mirrorpad", ins, "MirrorPad_8", ins, np.uint8, outn, f"{sh} pads={pads.reshape(-1).tolist()} mode={pad_mode}",
         padding=pad_mode)
st.out()
