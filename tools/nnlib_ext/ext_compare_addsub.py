# addsub rows (exec'd at the end of the harness's compare.py; its namespace: Stat, proj, rng, N, S, L, P, f, TD, ...).

def _as_run(sym, ins, outs):
    """Run hx_addsub_<sym> (glue/addsub_minmax.c runner, zero-filled scratch): -> (rc, [arrays])."""
    ins = [np.ascontiguousarray(a) for a in ins]
    ti = (TD * len(ins))(); to = (TD * len(outs))(); obuf = []
    for k, a in enumerate(ins):
        sh = (1,) * (4 - a.ndim) + a.shape
        ti[k] = TD(*sh, a.ctypes.data, a.nbytes, a.nbytes)
    for k, (dt, n) in enumerate(outs):
        b = np.zeros(max(int(n), 1) + 256, dt); obuf.append(b)
        to[k] = TD(1, 1, 1, 1, b.ctypes.data, int(n) * b.itemsize, 0)
    rc = getattr(L, "hx_addsub_" + sym)(len(ins), ti, len(outs), to)
    res = []
    for k, b in enumerate(obuf):
        sh = (to[k].b, to[k].h, to[k].w, to[k].d)
        res.append(b[: int(np.prod(sh))].reshape(sh) if rc == 0 else None)
    return rc, res


def _as_cmp(st, sym, ins, pyop, n_out, desc):
    rc, r = _as_run(sym, ins, [(np.uint8, n_out), (np.float32, 1), (np.float32, 1)])
    p = proj(pyop, ins)
    if refused(st, p, rc, desc):
        return
    if r[0].shape != p[0].shape:
        st.cases += 1; st.first = st.first or f"{desc}: shape C={r[0].shape} proj={p[0].shape}"; return
    st.add(r[0], p[0], [x.item() for x in r[1:]], [x.item() for x in p[1:3]], desc)


_as_shapes = pair_shapes  # ext_compare_00_common.py


# ---------------- QuantizedMaximum_8 / QuantizedMinimum_8 (op_minimum_maximum.c) ----------------
for _sym, _pyop in [("maximum", "QuantizedMaximum"), ("minimum", "QuantizedMinimum")]:
    st = Stat(f"Quantized{_pyop[9:]}_8 [addsub]")
    for t in range(N):
        sa, sb = _as_shapes(t)
        a, b = q8(sa), q8(sb)
        (amn, amx), (bmn, bmx) = rr(), rr()
        if t % 5 == 0: bmn, bmx = amn, amx                       # equal ranges: codes pass through
        if t % 11 == 0: a = np.zeros(sa, np.uint8)                # scalar / broadcast constants of code 0
        n_in = int(rng.choice([6, 6, 7, 8, 8]))
        extra = []
        if n_in >= 7:
            omn, omx = rr()
            if t % 3 == 0: omn, omx = min(amn, bmn), max(amx, bmx)
            if t % 13 == 0: omn, omx = omx, omn                  # min >= max: both must refuse
            extra = [S(omn)] + ([S(omx)] if n_in == 8 else [])
        ins = [a, b, S(amn), S(amx), S(bmn), S(bmx)] + extra
        n_out = int(np.prod(np.broadcast_shapes(sa, sb)))
        _as_cmp(st, _sym, ins, _pyop, n_out, f"a{sa}=[{amn},{amx}] b{sb}=[{bmn},{bmx}] extra={[float(x.item()) for x in extra]}")
    st.out()

# ---------------- QuantizedSub_8p8to8: nnlib's check (qsub_reject) refuses the flat op ----------------
st = Stat("QuantizedSub_8p8to8 [addsub: check rejects]")
for t in range(max(1, N // 20)):
    a = q8((1, 1, 2, 3)); (amn, amx), (bmn, bmx) = rr(), rr()
    _as_cmp(st, "sub_check", [a, a, S(amn), S(amx), S(bmn), S(bmx)], "QuantizedSub_8p8to8", a.size, "sub")
st.out()

# ---------------- QuantizedAdd_8p8to8 same-shape path: half-auto ranges, any input ranges, re-runs ----------------
st = Stat("QuantizedAdd_8p8to8 [addsub: half-auto, any ranges, 3 runs]")
for t in range(N):
    n = int(rng.choice([1, 3, 127, 128, 129, 200, 1000, 3000]))
    (amn, amx), (bmn, bmx) = rr(), rr()
    mode = t % 6
    omn, omx = rr()
    if mode == 0: n_in, omx = 7, np.float32(np.inf)                       # min given, max auto (absent)
    elif mode == 1: n_in, omn = 8, np.float32(-np.inf)                     # min auto, max given
    elif mode == 2: n_in, omx = 8, np.float32(np.inf)                      # min given, max auto
    elif mode == 3:                                                        # narrow given range (underrange)
        n_in = 8; span = (float(amx) - float(amn) + float(bmx) - float(bmn)) / float(rng.uniform(40, 6000))
        omn = np.float32(-span * rng.uniform(0, 1)); omx = np.float32(float(omn) + span)
    elif mode == 4: n_in, omn, omx = 6, np.float32(-np.inf), np.float32(np.inf)
    else: n_in = 8                                                         # any given range
    blob = np.zeros(blob_size + 16, np.uint8); state = {}
    for run in range(3):
        a = rng.integers(0, 256, n).astype(np.uint8); b = rng.integers(0, 256, n).astype(np.uint8)
        if run == 1 and n > 2: a[: n // 2] = 255; b[: n // 2] = 255            # push an auto max
        out = np.zeros(n, np.uint8); res = np.zeros(2, np.float32)
        rc = L.hx_QuantizedAdd_8p8to8(P(a), P(b), n, f(amn), f(amx), f(bmn), f(bmx), n_in, f(omn), f(omx),
                                      P(blob), int(run == 0), P(out), P(res))
        ins = [a.reshape(1, 1, 1, n), b.reshape(1, 1, 1, n), S(amn), S(amx), S(bmn), S(bmx)] + [S(omn), S(omx)][: n_in - 6]
        p = proj("QuantizedAdd_8p8to8", ins, state=state)
        desc = f"run {run} n={n} n_in={n_in} a=[{amn},{amx}] b=[{bmn},{bmx}] out_req=[{omn},{omx}]"
        if refused(st, p, rc, desc, per_side=False):
            break
        st.add(out, p[0].reshape(-1), res, [p[1].item(), p[2].item()], desc)
st.out()

# ---------------- QuantizedAdd_8p8to8 with broadcast (op_add.c qadd_888_hvx + quant_add_spec_asm model) ----------------
# Depth broadcasts only and whole 128-element vectors (see glue/addsub_qadd_bcast.c: nnlib's expand is correct
# only for depth broadcasts, and its asm kernel's min/max read whole vectors).
L.hx_addsub_qadd_bcast.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_void_p, C.c_int]
st = Stat("QuantizedAdd_8p8to8 [addsub: broadcast along depth, 3 runs]")
for t in range(N):
    bb, hh = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    ww, dd = [(int(rng.integers(1, 4)), int(rng.choice([128, 256]))), (4, 32)][t % 2]
    full, thin = (bb, hh, ww, dd), (bb, hh, ww, 1)
    sa, sb = (full, thin) if t % 4 < 2 else (thin, full)
    (amn, amx), (bmn, bmx) = rr(), rr()
    mode = t % 5
    omn, omx = rr()
    if mode == 0: n_in, omx = 7, np.float32(np.inf)
    elif mode == 1: n_in, omn = 8, np.float32(-np.inf)
    elif mode == 2: n_in, omn, omx = 6, np.float32(-np.inf), np.float32(np.inf)
    elif mode == 3: n_in, omn, omx = 8, np.float32(float(min(amn, 0)) + float(min(bmn, 0))), np.float32(float(max(amx, 0)) + float(max(bmx, 0)))
    else: n_in = 8
    blob = np.zeros(blob_size + 16, np.uint8); state = {}
    n_out = int(np.prod(full))
    for run in range(3):
        a, b = q8(sa), q8(sb)
        ins = [a, b, S(amn), S(amx), S(bmn), S(bmx)] + [S(omn), S(omx)][: n_in - 6]
        ins = [np.ascontiguousarray(x) for x in ins]
        ti = (TD * len(ins))(*[TD(*((1,) * (4 - x.ndim) + x.shape), x.ctypes.data, x.nbytes, x.nbytes) for x in ins])
        obuf = [np.zeros(n_out + 256, np.uint8), np.zeros(4, np.float32), np.zeros(4, np.float32)]
        to = (TD * 3)(*[TD(1, 1, 1, 1, o.ctypes.data, sz, 0) for o, sz in zip(obuf, [n_out, 4, 4])])
        rc = L.hx_addsub_qadd_bcast(len(ins), C.cast(ti, C.c_void_p), C.cast(to, C.c_void_p), blob.ctypes.data, int(run == 0))
        p = proj("QuantizedAdd_8p8to8", ins, state=state)
        desc = f"run {run} a{sa}=[{amn},{amx}] b{sb}=[{bmn},{bmx}] n_in={n_in} out_req=[{omn},{omx}]"
        if refused(st, p, rc, desc, per_side=False):
            break
        oc = obuf[0][:n_out].reshape(to[0].b, to[0].h, to[0].w, to[0].d)
        if oc.shape != p[0].shape:
            st.cases += 1; st.first = st.first or f"{desc}: shape C={oc.shape} proj={p[0].shape}"; break
        st.add(oc, p[0], [obuf[1][0], obuf[2][0]], [p[1].item(), p[2].item()], desc)
st.out()
