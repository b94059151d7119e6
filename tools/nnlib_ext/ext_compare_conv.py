# Extra comparison rows for the 8x8->32 convolutions, bias adds, relus, channel scale and pools (AREA conv).
# exec'd at the end of the nnlib harness's compare.py (same namespace: Stat, cop, cmp3, proj, rng, N, S, I32,
# q8, rr, rand_range, L, P, f, OPC ...); it calls only nnlib functions the harness already compiles.
# Edge cases the base rows do not reach: NA and unknown padding values, ranges far from 0 (offsets past
# int32 products: wrap-around, int64 sums), long reductions, MatMul A of any shape, scales outside (0, 1],
# zero-width ranges, windows of more than 32768 taps.


def _far_range():
    """A narrow range far from 0 (huge quantize_int offsets), [0, 0], or a random one.

    Zero-width ranges away from 0 are left out: their offsets overflow the float->int conversion,
    which saturates on Hexagon (what the engine models) but gives INT_MIN on x86.
    """
    k = int(rng.integers(0, 3))
    if k == 0:
        c = np.float32(rng.choice([-1, 1]) * rng.uniform(100, 2000)); return c, np.float32(c + rng.uniform(1e-3, 1e-1))
    if k == 1:
        return np.float32(0.0), np.float32(0.0)
    return rr()


st = Stat("QuantizedConv2d_8x8to32_ref [edge: padding NA/other, far ranges]")
for t in range(N):
    b, h, w, d = int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(1, 6))
    fh, fw, od = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh_, sw_ = int(rng.integers(1, 4)), int(rng.integers(1, 4)); pad = int(rng.choice([0, 1, 2, 5, 3]))
    x, f_ = q8((b, h, w, d)), q8((fh, fw, d, od)); (imn, imx), (fmn, fmx) = _far_range(), _far_range()
    ins = [x, f_, S(imn), S(imx), S(fmn), S(fmx), np.zeros((1, sh_, sw_, 1), np.int32)]
    cmp3(st, "conv2d_ref", ins, "QuantizedConv2d_8x8to32", ins, np.int32, b * (h + 4) * (w + 4) * od,
         f"in={x.shape} filt={f_.shape} stride={sh_}x{sw_} pad={pad} in=[{imn},{imx}] f=[{fmn},{fmx}]", padding=pad)
st.out()

st = Stat("QuantizedDepthwiseConv2d_8x8to32_ref [edge: padding NA/other, far ranges]")
for t in range(N):
    b, h, w, d = int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(1, 6))
    fh, fw, m = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.choice([1, 2, 3]))
    sh_, sw_ = int(rng.integers(1, 4)), int(rng.integers(1, 4)); pad = int(rng.choice([0, 1, 2, 5, 4]))
    x, f_ = q8((b, h, w, d)), q8((fh, fw, d, m)); (imn, imx), (fmn, fmx) = _far_range(), _far_range()
    ins = [x, f_, S(imn), S(imx), S(fmn), S(fmx), np.zeros((1, sh_, sw_, 1), np.int32)]
    cmp3(st, "dwconv_ref", ins, "QuantizedDepthwiseConv2d_8x8to32", ins, np.int32, b * (h + 4) * (w + 4) * d * m,
         f"in={x.shape} filt={f_.shape} stride={sh_}x{sw_} pad={pad} in=[{imn},{imx}] f=[{fmn},{fmx}]", padding=pad)
st.out()

st = Stat("QuantizedMatMul_8x8to32_ref [edge: any A shape, long K, far ranges]")
for t in range(max(N // 4, 10)):
    K = int(rng.choice([1, 7, 64, 40000])); Nn = int(rng.integers(1, 4)); M = int(rng.integers(1, 4))
    extra = int(rng.integers(0, K)) if t % 3 == 0 else 0
    total = M * K + extra
    shapes = [(1, 1, 1, total)] + ([(M, 1, 1, K), (1, M, 1, K)] if not extra else [])
    a = q8(shapes[t % len(shapes)]); bm = q8((1, 1, K, Nn))
    if t % 4 == 1: a[...] = 255; bm[...] = 255      # extreme codes: sums past int32 for K = 40000
    (amn, amx), (bmn, bmx) = _far_range(), _far_range()
    ins = [a, bm, S(amn), S(amx), S(bmn), S(bmx)]
    cmp3(st, "matmul_ref", ins, "QuantizedMatMul_8x8to32", ins, np.int32, M * Nn + 8,
         f"A={a.shape} B={bm.shape} a=[{amn},{amx}] b=[{bmn},{bmx}]")
st.out()

st = Stat("QuantizedBiasAdd_8p8to32 [edge: far ranges]"); st2 = Stat("QuantizedBiasAdd_32p32to32 [edge: zero-width, wrap]")
for t in range(N):
    sh = rshape(600); x = q8(sh); bias = q8((1, 1, 1, sh[3]))
    (imn, imx), (bmn, bmx) = _far_range(), _far_range()
    if imn == imx == 0 and bmn == bmx == 0: bmx = np.float32(1.0)   # 0/0 gains: (int)NaN differs x86 / Hexagon
    ins = [x, bias, S(imn), S(imx), S(bmn), S(bmx)]
    cmp3(st, "biasadd_8p8to32", ins, "QuantizedBiasAdd_8p8to32", ins, np.int32, x.size, f"{sh} in=[{imn},{imx}] bias=[{bmn},{bmx}]")
    x32 = rng.integers(-2**31, 2**31, sh, dtype=np.int64).astype(np.int32)
    b32 = rng.integers(-2**31, 2**31, (1, 1, 1, sh[3]), dtype=np.int64).astype(np.int32)
    if t % 3 == 0: b32.flat[0] = 0
    r1 = float(rng.choice([0.0, rng.uniform(1e-3, 10), rng.uniform(1e3, 1e6)]))
    lo2 = float(rng.uniform(-1e4, 0)); hi2 = lo2 + float(rng.choice([0.0, rng.uniform(1e-3, 1e5)]))
    ins = [x32, b32, S(-r1), S(r1 if t % 2 else r1 * 0.5), S(lo2), S(hi2)]
    cmp3(st2, "biasadd_32p32to32", ins, "QuantizedBiasAdd_32p32to32", ins, np.int32, x32.size, f"{sh} in=[{-r1},{r1}] bias=[{lo2},{hi2}]")
st.out(); st2.out()

for op, sym in [("QuantizedRelu_8", "relu"), ("QuantizedReluX_8", "reluX"), ("QuantizedClamp_8", "clamp")]:
    st = Stat(op + " [edge: far / zero-width ranges, reversed clamp]")
    for t in range(N):
        sh = rshape(600); x = q8(sh); mn, mx = _far_range()
        ins = [x, S(mn), S(mx)]
        span = float(mx - mn) + 1.0
        # over a zero-width range any limit but ~0 overflows the float->int conversion (x86 != Hexagon)
        lim = (lambda: S(np.float32(rng.choice([0.0, 1e-30, -1e-30])))) if mn == mx else \
              (lambda: S(np.float32(rng.uniform(mn - span, mx + span))))
        ins += [lim() for _ in range({"relu": 0, "reluX": 1, "clamp": 2}[sym])]
        cmp3(st, sym, ins, op, ins, np.uint8, x.size, f"{sh} range=[{mn},{mx}] extra={[i.item() for i in ins[3:]]}")
    st.out()

st = Stat("QuantizedChannelScale_32xf [edge: scales outside (0,1]]")
for t in range(N):
    sh = rshape(600)
    x = rng.integers(-2**31, 2**31, sh, dtype=np.int64).astype(np.int32)
    d = sh[3] if t % 3 else 1
    # |scale| < 8: beyond, scale * 2**28 overflows the float->int conversion (saturating on Hexagon, INT_MIN on x86)
    scl = rng.choice([0.0, -0.5, 1.0, 1.0001, 1.5, 3.0, 1e-9, 7.0, -7.0, 2.0 ** -29], (1, 1, 1, d)).astype(np.float32)
    scl *= rng.uniform(0.9, 1.1, scl.shape).astype(np.float32) if t % 2 else np.float32(1)
    ins = [x, scl, S(-5.0), S(float(rng.uniform(-1, 9)))]
    cmp3(st, "channelscale_32xf", ins, "QuantizedChannelScale_32xf", ins, np.int32, x.size,
         f"{sh} scales={scl.reshape(-1)[:4].tolist()}")
st.out()

for op, pyop in [("avgpool", "QuantizedAvgPool_8"), ("maxpool", "QuantizedMaxPool_8")]:
    st = Stat(pyop + "_ref [edge: padding NA/other, huge windows, far ranges]")
    fn = getattr(L, "hx_" + op)
    for t in range(max(N // 2, 10)):
        big = t % 5 == 0
        b, d = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        h, w = (int(rng.integers(150, 200)), int(rng.integers(180, 240))) if big else (int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        wh, ww = (h, w) if big else (int(rng.integers(1, 11)), int(rng.integers(1, 11)))
        sh_, sw_ = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        pad = int(rng.choice([1, 2, 5])) if big else int(rng.choice([0, 1, 2, 3, 5]))
        x = rng.integers(0, 256, (b, h, w, d)).astype(np.uint8)
        mn, mx = _far_range()
        out = np.zeros(b * (h + 8) * (w + 8) * d + 64, np.uint8); osh = np.zeros(4, np.int32); res = np.zeros(2, np.float32)
        rc = fn(P(x), b, h, w, d, f(mn), f(mx), wh, ww, sh_, sw_, pad, P(out), out.size, P(osh), P(res))
        win = np.zeros((1, wh, ww, 1), np.int32); strd = np.zeros((1, sh_, sw_, 1), np.int32)
        p = proj(pyop, [x, S(mn), S(mx), win, strd], padding=pad)
        desc = f"in={x.shape} win={wh}x{ww} stride={sh_}x{sw_} pad={pad} range=[{mn},{mx}]"
        if refused(st, p, rc, desc, per_side=False):
            continue
        oc = out[: int(np.prod(osh))].reshape(osh)
        if oc.shape != p[0].shape:
            st.cases += 1; st.first = st.first or f"{desc}: shape C={oc.shape} proj={p[0].shape}"; continue
        st.add(oc, p[0], res, [p[1].item(), p[2].item()], desc)
    st.out()
