# Harness rows for the Supernode output stage (exec'd at the end of the harness's compare.py).
# C side: glue/supernode_glue.c hx_sn_run (verbatim supernode_utils.h constants / bias / range logic,
# hand-written model of the HVX per-element arithmetic); project side: run_op through proj().
from hexnn_import.ops.output_stage import nnlib_constants as _snf

_F = C.c_float
L.hx_sn_run.restype = C.c_int
L.hx_sn_run.argtypes = [C.c_int] * 3 + [C.c_void_p] + [C.c_int] * 4 + [C.c_void_p] + [C.c_int] * 6 + [_F] * 4 + \
    [C.c_void_p, _F, _F, _F, _F, C.c_void_p, C.c_int, C.c_int, C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]


def _sn_case(t, dwise, bias32, scales):
    """A random small convolution: inputs for the C model and for run_op."""
    b = int(rng.choice([1, 1, 2])); h = int(rng.integers(1, 7)); w = int(rng.integers(1, 7))
    if dwise:
        din = int(rng.integers(1, 40)); fh = int(rng.integers(1, 4)); fw = int(rng.integers(1, 4)); fd, fb = din, 1
        dout = din
    else:
        din = int(rng.integers(1, 40)); fh = int(rng.integers(1, 4)); fw = int(rng.integers(1, 4))
        dout = int(rng.integers(1, 40)); fd, fb = din, dout
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pad = int(rng.choice([1, 2]))
    if pad == 2: h, w = max(h, fh), max(w, fw)
    x = q8((b, h, w, din)); f_ = q8((fh, fw, fd, fb))
    imn, imx = rr(); fmn, fmx = rr()
    if t % 9 == 0: f_[...] = f_.flat[0]
    if bias32:
        bias = (rng.normal(0, 2.0 ** rng.integers(4, 28), dout)).clip(-2**31, 2**31 - 1).astype(np.int32)
        bmx = np.float32(rng.uniform(1, 1e4) if t % 3 else rng.uniform(1e-3, 1)); bmn = -bmx
    else:
        bias = q8((dout,)); bmn, bmx = rr()
    kind = t % 6
    if kind == 0: omn, omx = np.float32(-np.inf), np.float32(np.inf)
    elif kind == 1: omn, omx = np.float32(0.0), np.float32(np.inf)
    elif kind == 2: omn, omx = np.float32(-np.inf), np.float32(rng.uniform(0, 20))
    elif kind == 3: omn, omx = np.float32(-rng.uniform(0, 20)), np.float32(np.inf)
    else: omn, omx = rand_range(rng.choice(["normal", "pos", "neg", "tiny", "huge"]))
    cs = None
    if scales:
        cs = rng.uniform(1.0 / 2048, 1.0, dout).astype(np.float32)
        if t % 4 == 0: cs[rng.integers(0, dout)] = 1.0
        if t % 7 == 1: cs[rng.integers(0, dout)] = np.float32(1.0 / 2048)    # load_channel_scales' inclusive low end
        elif t % 11 == 2: cs[:] = 1.0                                          # all 1.0: still "present" in the C
        elif t % 13 == 3: cs = np.ones(1, np.float32)                          # a single 1.0: "absent"
        elif t % 17 == 4 and dout > 1: cs = cs[:-1].copy()                     # wrong size: the C's error
        elif t % 19 == 5: cs[rng.integers(0, dout)] = np.float32(rng.choice([1.0000001, 1.0 / 2049, 0.0]))  # out of range
    return dict(b=b, h=h, w=w, din=din, fh=fh, fw=fw, fd=fd, fb=fb, dout=dout, sh=sh, sw=sw, pad=pad, x=x, f=f_,
                imn=imn, imx=imx, fmn=fmn, fmx=fmx, bias=bias, bmn=bmn, bmx=bmx, omn=omn, omx=omx, cs=cs)


def _sn_c(c, dwise, bias32, nruns=1):
    n_out = c["b"] * 64 * 64 * c["dout"]
    out = np.zeros(n_out, np.uint8); ranges = np.zeros(2 * nruns, np.float32)
    consts = np.zeros(4 + 2 * c["dout"], np.int64); fl = np.zeros(5, np.float32)
    x = np.ascontiguousarray(c["x"]); f_ = np.ascontiguousarray(c["f"]); bias = np.ascontiguousarray(c["bias"])
    cs = None if c["cs"] is None else np.ascontiguousarray(c["cs"])
    rc = L.hx_sn_run(int(dwise), int(bias32), c["pad"], P(x), c["b"], c["h"], c["w"], c["din"], P(f_), c["fh"], c["fw"],
                     c["fd"], c["fb"], c["sh"], c["sw"], c["imn"], c["imx"], c["fmn"], c["fmx"], P(bias), c["bmn"],
                     c["bmx"], c["omn"], c["omx"], None if cs is None else P(cs), 0 if cs is None else cs.size, nruns, P(out), P(ranges),
                     P(consts), P(fl))
    return rc, out, ranges, consts, fl


def _k_present(cs):
    """The scales check_channelscale_present passes on (None: absent or a single 1.0)."""
    return None if cs is None or (cs.size == 1 and cs[0] == np.float32(1.0)) else cs


def _sn_proj_ins(c, bias32):
    ins = [c["x"], c["f"], S(c["imn"]), S(c["imx"]), S(c["fmn"]), S(c["fmx"]),
           np.zeros((1, c["sh"], c["sw"], 1), np.int32), c["bias"].reshape(1, 1, 1, -1), S(c["bmn"]), S(c["bmx"]),
           S(c["omn"]), S(c["omx"])]
    if c["cs"] is not None: ins.append(c["cs"].reshape(1, 1, 1, -1))
    return ins


for _op, _dw, _b32, _sc in [("Supernode_8x8p32to8", 0, 1, 0), ("Supernode_8x8p8to8", 0, 0, 0),
                             ("Supernode_8x8p32to8", 0, 1, 1), ("DepthwiseSupernode_8x8p32to8", 1, 1, 0),
                             ("DepthwiseSupernode_8x8p8to8", 1, 0, 0), ("DepthwiseSupernode_8x8p32to8", 1, 1, 1)]:
    _tag = " +channel scales" if _sc else ""
    st = Stat(f"{_op}{_tag} [C constants + HVX model]")
    stk = Stat(f"{_op}{_tag} [output-stage constants]")
    for t in range(N):
        c = _sn_case(t, _dw, _b32, _sc)
        rc, out, ranges, consts, fl = _sn_c(c, _dw, _b32)
        p = proj(_op, _sn_proj_ins(c, _b32), padding=c["pad"])
        desc = (f"x={c['x'].shape} f={c['f'].shape} s={c['sh']}x{c['sw']} pad={c['pad']} in=[{c['imn']},{c['imx']}] "
                f"f=[{c['fmn']},{c['fmx']}] b=[{c['bmn']},{c['bmx']}] out=[{c['omn']},{c['omx']}]")
        if not refused(st, p, rc, desc):
            q = p[0].reshape(-1)
            st.add(out[: q.size], q, ranges[:2], [p[1].item(), p[2].item()], desc)
        if rc == 0:   # the engine's own constants for the final range, from the same inputs
            try:
                e = _snf.debug_constants(c["imn"], c["imx"], c["fmn"], c["fmx"], c["f"], c["bias"], c["bmn"], c["bmx"],
                                         bool(_b32), bool(_dw), _k_present(c["cs"]), c["omn"], c["omx"],
                                         fl[2], fl[3], bool(fl[4]))
                stk.add(consts, e[0], fl[:2], e[1], desc + " (consts: shamt, recip_val, in_off, w_off, recip[], bias+gx[])")
            except Exception as ex:
                stk.cases += 1; stk.proj_err += 1; stk.first_err = stk.first_err or f"{desc}: {ex}"
    st.out(); stk.out()

# Three executions of one node on the same inputs: the output range found by a run persists in the node
# (supernode_info_new), so runs 2 and 3 start from it. The C of run k is hx_sn_run(nruns=k) (fresh node,
# same data); the engine runs one state three times.
for _op, _dw, _b32, _sc in [("Supernode_8x8p32to8", 0, 1, 0), ("DepthwiseSupernode_8x8p32to8", 1, 1, 0),
                             ("DepthwiseSupernode_8x8p8to8", 1, 0, 1)]:
    _tag = " +channel scales" if _sc else ""
    st = Stat(f"{_op}{_tag} [3 runs, persistent range]")
    for t in range(N):
        c = _sn_case(t, _dw, _b32, _sc)
        state = {}
        for run in range(1, 4):
            rc, out, ranges, _, _ = _sn_c(c, _dw, _b32, nruns=run)
            p = proj(_op, _sn_proj_ins(c, _b32), padding=c["pad"], state=state)
            desc = (f"run {run} x={c['x'].shape} f={c['f'].shape} in=[{c['imn']},{c['imx']}] f=[{c['fmn']},{c['fmx']}] "
                    f"b=[{c['bmn']},{c['bmx']}] out=[{c['omn']},{c['omx']}]")
            if refused(st, p, rc, desc, per_side=True):
                break
            q = p[0].reshape(-1)
            st.add(out[: q.size], q, ranges[2 * run - 2: 2 * run], [p[1].item(), p[2].item()], desc)
    st.out()
