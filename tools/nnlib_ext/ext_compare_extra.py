# Comparison rows of the `extra` area (exec'd at the end of the oracle's compare.py: Stat, cop, cmp3, proj, rng,
# N, S, I32, rshape, q8, rr, rand_range, L, OPC, C, np). Every case runs nnlib's C (libnnref.so) and the project
# (run_op through proj) on the same inputs; edge ranges (zero-excluding, tiny, huge), odd sizes and batch > 1.


def _xr_kind():
    return rr() if rng.random() < 0.85 else rand_range(rng.choice(["tiny", "huge", "nozero_pos", "nozero_neg"]))


# ---------------- QuantizedLRN_8 (op_lrn.c lrn_check + lrn_8_execute_ref) ----------------
st = Stat("extra QuantizedLRN_8")
for t in range(N):
    sh = rshape(1500); x = q8(sh); mn, mx = _xr_kind()
    wh, ww, wd = int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 2, 3, 5, 7]))
    win = np.zeros((1, wh, ww, wd), np.float32)
    k = t % 10
    win.flat[0] = np.float32(wh * ww * wd if k < 7 else (rng.uniform(0.5, 12) if k < 9 else 0.0))   # window_size = (int)data[0]
    bias = np.float32(rng.uniform(1.0, 3.0) if t % 13 else rng.choice([0.5, 1.0]))
    alpha = np.float32(rng.choice([rng.uniform(0, 1e-3), rng.uniform(0, 0.5), rng.uniform(0, 5), 0.0]) if t % 17 else -0.1)
    beta = np.float32(rng.choice([0.75, 0.5, 1.0, rng.uniform(0, 2), 0.0]))
    ins = [x, S(mn), S(mx), win, S(bias), S(alpha), S(beta)]
    cmp3(st, "extra_lrn", ins, "QuantizedLRN_8", ins, np.uint8, x.size,
         f"{sh} range=[{mn},{mx}] win={win.shape} wsize={win.flat[0]} bias={bias} alpha={alpha} beta={beta}")
st.out()

# ---------------- QuantizedL2Pool_8 (op_l2pool.c l2pool_execute_ref; sqrt_fx of op_sqrth_8.h) ----------------
st = Stat("extra QuantizedL2Pool_8")
for t in range(N):
    b, h, w, d = int(rng.integers(1, 4)), int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.choice([1, 2, 3, 5, 8, 17]))
    wh, ww, sh_, sw_ = (int(rng.integers(1, 5)) for _ in range(4))
    pad = int(rng.choice([1, 2, 5]))
    x = q8((b, h, w, d)); mn, mx = _xr_kind()
    if t % 11 == 0: x[...] = 255 if t % 2 else 0
    ins = [x, S(mn), S(mx), np.zeros((1, wh, ww, 1), np.int32), np.zeros((1, sh_, sw_, 1), np.int32)]
    cmp3(st, "extra_l2pool", ins, "QuantizedL2Pool_8", ins, np.uint8, x.size,
         f"in={x.shape} win={wh}x{ww} stride={sh_}x{sw_} pad={pad} range=[{mn},{mx}]", padding=pad)
st.out()

# ---------------- QuantizedPRelu_8 (op_prelu.c prelu_execute: the _ref fixed-point path) ----------------
st = Stat("extra QuantizedPRelu_8_ref")
for t in range(N):
    sh = rshape(); x = q8(sh); mn, mx = _xr_kind()
    ad = sh[3] if t % 3 else 1
    if t % 23 == 0: ad = sh[3] + 1                                   # depth mismatch (error when > 1)
    al = rng.uniform(0, 1, (1, 1, 1, ad)).astype(np.float32)
    if t % 5 == 0: al.flat[0] = np.float32(rng.choice([0.0, 1.0, 0.5, 1.0 / 3]))
    if t % 19 == 0: al.flat[-1] = np.float32(rng.choice([-0.25, 1.5]))   # out-of-contract alphas
    ins = [x, S(mn), S(mx), al]
    cmp3(st, "extra_prelu_ref", ins, "QuantizedPRelu_8", ins, np.uint8, x.size,
         f"{sh} range=[{mn},{mx}] alphas{al.shape} first={al.flat[0]}")
st.out()

# ---------------- QuantizedPad_8 (op_pad.c pad_q_execute / pad_generic_execute) ----------------
st = Stat("extra QuantizedPad_8")
for t in range(N):
    sh = rshape(1500); x = q8(sh); mn, mx = _xr_kind()
    n = int(rng.integers(1, 5))
    pads = rng.integers(0, 4, (1, 1, n, 2)).astype(np.int32)
    if t % 29 == 0: pads.flat[int(rng.integers(0, pads.size))] = -1
    ins = [x, S(mn), S(mx), pads]
    k = t % 6
    if k >= 1:
        span = float(mx) - float(mn)
        v = rng.choice([rng.uniform(float(mn), float(mx)), 0.0, float(mn), float(mx), float(mn) - 0.005 * span,
                        float(mx) + 0.005 * span, float(mx) + 0.5 * span + 1, np.inf, -np.inf])
        ins.append(S(np.float32(v)))
    if k >= 4:
        ins.append(I32(int(rng.integers(0, 2))))
    cmp3(st, "extra_pad", ins, "QuantizedPad_8", ins, np.uint8, int(np.prod([s + 8 for s in sh])),
         f"{sh} range=[{mn},{mx}] pads={pads.reshape(-1).tolist()} extra={[i.item() for i in ins[4:]]}")
st.out()

# ---------------- QuantizedResizeBilinear_8 (op_resizebilinear.c general path / same-size copy) ----------------
def _rb_fast(b, h, w, d, ho, wo, al):
    """True when resizebilinear_qu8_execute would pick an HVX path (2x, 4x, align-corners 4x): not compiled."""
    p2 = lambda v: v & (v - 1) == 0
    if not al and wo == 2 * w and ho == 2 * h and p2(d) and (d >= 128 or p2(w)): return True
    if not al and wo == 4 * w and ho == 4 * h and d < 32 and p2(d): return True
    if (wo, ho) == (w, h): return False
    return bool(al and w * 4 == wo and (w - 1) % 3 == 0 and w * d < 384)

st = Stat("extra QuantizedResizeBilinear_8")
_rb_hit = C.c_int.in_dll(L, "hx_extra_resize_fastpath_hit")
for t in range(N):
    while True:
        b, h, w, d = int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.choice([1, 2, 3, 5, 8, 33]))
        k = t % 5
        ho, wo = ((int(rng.integers(1, 17)), int(rng.integers(1, 17))) if k < 3 else
                  (h * int(rng.integers(1, 4)), w * int(rng.integers(1, 4))) if k == 3 else (h, w))
        al = int(rng.integers(0, 2)) if t % 2 else None
        if al and (ho <= 1 or wo <= 1): continue                     # C divides by (out-1): undefined
        if not _rb_fast(b, h, w, d, ho, wo, bool(al)): break
    x = q8((b, h, w, d)); mn, mx = _xr_kind()
    ins = [x, I32([ho, wo]), S(mn), S(mx)] + ([I32(al)] if al is not None else [])
    _rb_hit.value = 0
    cmp3(st, "extra_resize", ins, "QuantizedResizeBilinear_8", ins, np.uint8, b * ho * wo * d,
         f"in={x.shape} out={ho}x{wo} align={al} range=[{mn},{mx}]")
    assert _rb_hit.value == 0, "an HVX fast path was taken"
st.out()
