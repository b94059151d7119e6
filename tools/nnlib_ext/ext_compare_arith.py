# Comparison rows of the `arith` area (exec'd at the end of the oracle's compare.py: Stat, cop, cmp3, proj, rng,
# N, S, I32, rshape, q8, rr, rand_range, L, OPC, C, np). Every case runs nnlib's C (libnnref.so) and the project
# (run_op through proj) on the same inputs: edge ranges (zero-excluding, tiny, huge, zero-width), odd sizes,
# batch > 1, broadcast.


def _ar_range():
    """An input range: the harness's kinds, plus zero-width and degenerate ones now and then."""
    k = rng.random()
    if k < 0.06:
        v = np.float32(rng.choice([0.0, rng.uniform(-5, 5)]))
        return v, v                                                   # zero-width
    if k < 0.10:
        lo = np.float32(rng.uniform(-3, 3)); return lo, np.float32(lo + np.float32(rng.choice([1e-6, 1e-4])))
    if k < 0.14:
        return rand_range("huge")
    return rr()


_ar_shapes = pair_shapes  # ext_compare_00_common.py


def _ar_bshape(sa, sb):
    return tuple(max(x, y) for x, y in zip(sa, sb))


# ---------------- QuantizedAdd_8p8to32 / QuantizedSub_8p8to32 (op_addsubmul_8to32.c, _ref path) ----------------
for _op in ["QuantizedAdd_8p8to32", "QuantizedSub_8p8to32"]:
    st = Stat(f"arith {_op}")
    for t in range(N):
        sa, sb = _ar_shapes(t)
        a, b = q8(sa), q8(sb)
        (amn, amx), (bmn, bmx) = _ar_range(), _ar_range()
        if t % 9 == 0: bmn, bmx = amn, amx
        ins = [a, b, S(amn), S(amx), S(bmn), S(bmx)]
        cmp3(st, "arith_addsub_832_ref", ins, _op, ins, np.int32, int(np.prod(_ar_bshape(sa, sb))),
             f"a{sa}=[{amn},{amx}] b{sb}=[{bmn},{bmx}]", node_type=OPC(_op + "_ref"))
    st.out()

# ---------------- QuantizedMul_8x8to8 (op_mul.c mul_8x8to8_execute) ----------------
st = Stat("arith QuantizedMul_8x8to8")
for t in range(N):
    sa, sb = _ar_shapes(t)
    if t % 13 == 0: sa, sb = (1, 1, 1, 1), (1, 1, 1, 1)
    a, b = q8(sa), q8(sb)
    (amn, amx), (bmn, bmx) = _ar_range(), _ar_range()
    if t % 17 == 0: a[...] = 0
    ins = [a, b, S(amn), S(amx), S(bmn), S(bmx)]
    cmp3(st, "arith_mul_8x8to8", ins, "QuantizedMul_8x8to8", ins, np.uint8, int(np.prod(_ar_bshape(sa, sb))),
         f"a{sa}=[{amn},{amx}] b{sb}=[{bmn},{bmx}]")
st.out()


def _ar_i32(sh, kind):
    """int32 operands: small, full-range, or near the wrap points."""
    if kind == 0: return rng.integers(-1000, 1000, sh).astype(np.int32)
    if kind == 1: return rng.integers(-2**31, 2**31, sh, dtype=np.int64).astype(np.int32)
    v = rng.choice(np.array([-2**31, -2**31 + 1, -1, 0, 1, 2**31 - 1, 2**30, -2**30], np.int64), sh)
    return v.astype(np.int32)


def _ar_hvx_buf(a, pad=256):
    """``a`` copied into a 128-byte-aligned buffer with ``pad`` spare bytes after it (HVX code reads and writes
    whole 128-byte vectors)."""
    raw = np.zeros(a.nbytes + pad + 128, np.uint8)
    off = (-raw.ctypes.data) % 128
    out = raw[off: off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


# ---------------- int32 elementwise (op_add_f.c / op_sub_f.c / op_mul.c / op_bitwise.c) ----------------
for _sym, _op in [("add", "Add"), ("sub", "Sub"), ("mul", "Mul"), ("and", "BitwiseAnd"), ("ior", "BitwiseOr"),
                  ("xor", "BitwiseXor")]:
    st = Stat(f"arith {_op}_int32")
    for t in range(N):
        sa, sb = _ar_shapes(t)
        a, b = _ar_i32(sa, t % 3), _ar_i32(sb, (t // 3) % 3)
        if t % 11 == 0: b[...] = rng.choice([0, -1])
        ins = [a, b]
        rc, r = cop(f"arith_{_sym}_int32", ins, [(np.int32, int(np.prod(_ar_bshape(sa, sb))))])
        p = proj(f"{_op}_int32", ins)
        if refused(st, p, rc, f"a{sa} b{sb}", per_side=False):
            continue
        st.add(r[0], p[0].reshape(r[0].shape) if p[0].size == r[0].size else p[0], [], [], f"a{sa} b{sb}")
    st.out()

# ---------------- Neg_int32 / Abs_int32 (op_neg.c unary_op_execute, HVX intrinsics modelled) ----------------
for _op in ["Neg_int32", "Abs_int32"]:
    st = Stat(f"arith {_op}")
    for t in range(N):
        sh = rshape(1500); x = _ar_hvx_buf(_ar_i32(sh, t % 3))
        rc, r = cop("arith_unary", [x], [(np.int32, x.size + 64)], node_type=OPC(_op))
        p = proj(_op, [x])
        if refused(st, p, rc, f"{sh}", per_side=False):
            continue
        st.add(r[0], p[0], [], [], f"{sh} kind={t % 3}")
    st.out()

# ---------------- Range_int32 (op_range.c range_execute) ----------------
st = Stat("arith Range_int32")
for t in range(N):
    start = int(rng.integers(-50, 50)); limit = int(start + rng.integers(-60, 61) * (t % 4 != 0))
    delta = int(rng.choice([1, 2, 3, 7, -1, -2, -5, 0]))
    if t % 13 == 0: start, limit, delta = -2**31 + 1, 2**31 - 1, 2**30           # int32 wrap of limit-start
    ins = [I32(start), I32(limit), I32(delta)]
    rc, r = cop("arith_range_int32", ins, [(np.int32, 4096)])
    p = proj("Range_int32", ins)
    if refused(st, p, rc, f"start={start} limit={limit} delta={delta}", per_side=False):
        continue
    if r[0].shape != p[0].shape:
        st.cases += 1; st.first = st.first or f"start={start} limit={limit} delta={delta}: shape C={r[0].shape} proj={p[0].shape}"; continue
    st.add(r[0], p[0], [], [], f"start={start} limit={limit} delta={delta}")
st.out()

# ---------------- QuantizedNeg_8 (op_neg.c, 1's complement HVX run function modelled) ----------------
st = Stat("arith QuantizedNeg_8")
for t in range(N):
    sh = rshape(); x = _ar_hvx_buf(q8(sh)); mn, mx = _ar_range()
    ins = [x, S(mn), S(mx)]
    cmp3(st, "arith_unary", ins, "QuantizedNeg_8", ins, np.uint8, x.size + 256, f"{sh} range=[{mn},{mx}]",
         node_type=OPC("QuantizedNeg_8"))
st.out()

# ---------------- QuantizedSqrt_8 (op_sqrt.c: HVX table lookup modelled) ----------------
st = Stat("arith QuantizedSqrt_8")
for t in range(N):
    sh = rshape(); x = _ar_hvx_buf(q8(sh)); mn, mx = _ar_range()
    if t % 2 == 0: mn = np.float32(0.0)
    elif t % 4 == 1: mn = np.float32(abs(mn))
    if t % 9 == 0: x.reshape(-1)[:256] = np.arange(min(256, x.size))
    ins = [x, S(mn), S(mx)]
    cmp3(st, "arith_sqrt", ins, "QuantizedSqrt_8", ins, np.uint8, x.size + 256, f"{sh} range=[{mn},{mx}]")
st.out()

# ---------------- QuantizedInstanceNorm_8 (op_instancenorm.c execute_qinstancenorm_ref) ----------------
st = Stat("arith QuantizedInstanceNorm_8")
for t in range(N):
    sh = rshape(1500)
    if t % 5 == 0: sh = (int(rng.integers(2, 5)), sh[1], sh[2], int(rng.choice([1, 2, 3])))   # batches > depth
    x = q8(sh); mn, mx = _ar_range()
    k = t % 7
    if k == 1: x[...] = x // 64 + 100                                      # narrow spread
    if k == 2: x[..., 0] = 37                                              # a constant channel
    if k == 3: x[...] = 200                                                # all constant
    ins = [x, S(mn), S(mx)]
    cmp3(st, "arith_instancenorm", ins, "QuantizedInstanceNorm_8", ins, np.uint8, x.size, f"{sh} kind={k}")
st.out()
