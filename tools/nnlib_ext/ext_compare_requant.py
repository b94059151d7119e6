# Comparison rows of the `requant` area (exec'd at the end of the oracle's compare.py: Stat, cop, cmp3, proj, rng,
# N, S, I32, rshape, q8, rr, rand_range, L, OPC, C, np). Every case runs nnlib's C (libnnref.so) and the project
# (run_op through proj) on the same inputs; edge ranges (zero-excluding, tiny, huge, zero-width), odd sizes, batch > 1.


class _BitStat(Stat):
    """A row whose outputs are float32: exact means bit-identical (max_code_diff counts float32 ULPs).
    Stat.add still runs first, so the golden recorder keeps the case (the C's float32 values as codes)."""

    def add(s, q_c, q_p, rc, rp, desc):
        q_c = np.asarray(q_c, np.float32); q_p = np.asarray(q_p, np.float32)
        before = s.exact
        with np.errstate(invalid="ignore", over="ignore"):
            Stat.add(s, q_c, q_p, rc, rp, desc)
        same = q_c.shape == q_p.shape and np.array_equal(q_c.view(np.int32), q_p.view(np.int32))
        if s.exact > before and not same:
            s.exact -= 1
        if not same and q_c.shape == q_p.shape and q_c.size:
            ulp = np.abs(q_c.view(np.int32).astype(np.int64) - q_p.view(np.int32).astype(np.int64)).reshape(-1)
            i = int(np.argmax(ulp)); s.maxd = max(s.maxd, int(ulp[i]))
            s.first = s.first if s.first and "ULP" in s.first else f"{desc}; elem {i}: C={q_c.flat[i]!r} proj={q_p.flat[i]!r} ({int(ulp[i])} ULP)"


def _rq_range():
    k = rng.random()
    if k < 0.70: return rr()
    if k < 0.80: return np.float32(0.0), np.float32(0.0)                       # zero-width
    if k < 0.90: v = np.float32(rng.uniform(-5, 5)); return v, v                # zero-width off 0
    a = np.float32(-rng.uniform(0, 1e-30)); return a, np.float32(a + np.float32(rng.uniform(0, 1e-30)))  # denormal steps


# ---------------- Dequantize (op_quantize.c dequantize_execute, hvx_do_dequantize modelled) ----------------
st = _BitStat("requant Dequantize [HVX model]")
for t in range(N):
    sh = rshape(3000); q = q8(sh); mn, mx = _rq_range()
    if t % 37 == 0: mn, mx = np.float32(-1.7e38), np.float32(1.7e38)            # step near 2**120 (exponent edge)
    ins = [q, S(mn), S(mx)]
    cmp3(st, "requant_dequantize", ins, "Dequantize", ins, np.float32, q.size, f"{sh} range=[{mn},{mx}]", n_range_out=0)
st.out()

# ---------------- Dequantize_qint32_f (op_quantize.c dequantize_i32_execute) ----------------
st = _BitStat("requant Dequantize_qint32_f")
for t in range(N):
    sh = rshape(3000); scale = 2.0 ** rng.integers(0, 32)
    x = np.clip(rng.normal(0, scale, sh), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    if t % 10 == 0: x.flat[0] = 2 ** 31 - 1; x.flat[-1] = -2 ** 31
    mn, mx = _rq_range()
    ins = [x, S(mn), S(mx)]
    cmp3(st, "requant_dequantize_i32", ins, "Dequantize_qint32_f", ins, np.float32, x.size, f"{sh} range=[{mn},{mx}]",
         n_range_out=0)
st.out()

# ---------------- Requantize_32to8 / QuantizeDownAndShrinkRange_32to8 / RequantizationRange_32, device path,
#                  edge input ranges (asymmetric, zero-excluding, zero-width) and 4-D shapes with batch > 1 ----------
st = Stat("requant Requantize_32to8 [device dispatch, edge ranges, 4-D]")
st2 = Stat("requant QuantizeDownAndShrinkRange_32to8 [device dispatch, edge ranges, 4-D]")
st3 = Stat("requant RequantizationRange_32 [edge ranges, 4-D]")
for t in range(N):
    sh = rshape(3000); n = int(np.prod(sh)); scale = 2.0 ** rng.integers(0, 31)
    acc = np.clip(rng.normal(rng.choice([0, scale, -scale]), scale, n), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    if t % 13 == 0: acc[:] = 0
    if t % 10 == 1: acc[0] = 2 ** 31 - 1; acc[-1] = -2 ** 31
    imn, imx = _rq_range() if t % 3 else rr()
    omn, omx = _rq_range()
    if t % 7 == 0: omn, omx = np.float32(-1e-6), np.float32(1e-6)
    a4 = acc.reshape(sh)
    out = np.zeros(n, np.uint8); res = np.zeros(2, np.float32)
    rc = L.hx_Requantize_32to8(P(acc), n, f(imn), f(imx), f(omn), f(omx), P(out), P(res), 1)
    p = proj("Requantize_32to8", [a4, S(imn), S(imx), S(omn), S(omx)])
    desc = f"{sh} in=[{imn},{imx}] out_req=[{omn},{omx}]"
    if isinstance(p, Exception) or rc:
        st.cases += 1; st.first = st.first or f"{desc}: C rc={rc} proj={str(p)[:100] if isinstance(p, Exception) else 'ok'}"
    else: st.add(out.reshape(sh), p[0], res, [p[1].item(), p[2].item()], desc)
    out = np.zeros(n, np.uint8); res = np.zeros(2, np.float32)
    rc = L.hx_QuantizeDownAndShrinkRange_32to8(P(acc), n, f(imn), f(imx), P(out), P(res), 1)
    p = proj("QuantizeDownAndShrinkRange_32to8", [a4, S(imn), S(imx)])
    desc = f"{sh} in=[{imn},{imx}]"
    if isinstance(p, Exception) or rc:
        st2.cases += 1; st2.first = st2.first or f"{desc}: C rc={rc} proj={str(p)[:100] if isinstance(p, Exception) else 'ok'}"
    else: st2.add(out.reshape(sh), p[0], res, [p[1].item(), p[2].item()], desc)
    res = np.zeros(2, np.float32)
    L.hx_RequantizationRange_32(P(acc), n, f(imn), f(imx), P(res))
    p = proj("RequantizationRange_32", [a4, S(imn), S(imx)])
    if isinstance(p, Exception):
        st3.cases += 1; st3.first = st3.first or f"{desc}: proj={str(p)[:100]}"
    else: st3.add(np.zeros(0), np.zeros(0), res, [p[0].item(), p[1].item()], desc)
for s in (st, st2, st3): s.out()

# ---------------- Quantize / AutoQuantize / Quantize_int32: 4-D shapes, batch > 1, edge data ----------------
st = Stat("requant Quantize [ref, device casts, 4-D]"); st2 = Stat("requant AutoQuantize [ref, 4-D]")
st3 = Stat("requant Quantize_int32 [4-D, edge ranges]")
for t in range(N):
    sh = rshape(3000); n = int(np.prod(sh))
    mn, mx = rand_range(rng.choice(["normal", "pos", "neg", "tiny", "huge"]))
    x = rng.uniform(mn * 1.3 - 0.1, mx * 1.3 + 0.1, n).astype(np.float32)
    if t % 5 == 0:
        st_ = (mx - mn) / 255; x[: n // 2] = (mn + (rng.integers(0, 255, n // 2) + 0.5) * st_).astype(np.float32)
    if t % 9 == 0: x[0] = np.float32(3e38); x[-1] = np.float32(-3e38)     # saturating codes
    x4 = x.reshape(sh)
    cmp3(st, "requant_quantize_ref", [x4, S(mn), S(mx)], "Quantize", [x4, S(mn), S(mx)], np.uint8, n,
         f"{sh} range=[{mn},{mx}]")
    if t % 9 == 0: x[0] = np.float32(mx * 3); x[-1] = np.float32(mn * 3)        # AutoQuantize: finite data only
    out = np.zeros(n, np.uint8); res = np.zeros(2, np.float32)
    L.hx_AutoQuantize(P(x), n, P(out), P(res))
    p = proj("AutoQuantize", [x4])
    st2.add(out.reshape(sh), p[0], res, [p[1].item(), p[2].item()], f"{sh} data=[{x.min()},{x.max()}]")
    qmn, qmx = _rq_range() if t % 2 else (mn, mx)
    xs = (x * np.float32(rng.choice([1, 1e3, 1e6]))).astype(np.float32)
    o3 = np.zeros(n, np.int32); res3 = np.zeros(2, np.float32)
    L.hx_Quantize_int32(P(xs), n, f(qmn), f(qmx), P(o3), P(res3))
    p = proj("Quantize_int32", [xs.reshape(sh), S(qmn), S(qmx)])
    if isinstance(p, Exception): st3.cases += 1; st3.first = st3.first or f"proj error {p}"
    else: st3.add(o3.reshape(sh), p[0], res3, [p[1].item(), p[2].item()], f"{sh} range=[{qmn},{qmx}]")
for s in (st, st2, st3): s.out()
