# nonlin rows (project extension, exec'd at the end of the harness compare.py).
# ---------------- QuantizedTanh_8_d32 / QuantizedSigmoid_8_d32 (op_tanh_d32.c table) ----------------
from hexnn_import.ops.d32 import to_d32 as _to_d32
L.hx_tanh_d32_table.argtypes = [C.c_float, C.c_float, C.c_int, C.c_void_p]
for _op in ["QuantizedTanh_8_d32", "QuantizedSigmoid_8_d32"]:
    st = Stat(_op + " [op_tanh_d32.c operate_ref_function table]")
    for t in range(N):
        sh = rshape(); x = q8(sh); mn, mx = rr()
        if t % 9 == 0: x[...] = np.arange(x.size).reshape(sh) % 256
        if t % 13 == 0: mn, mx = np.float32(-rng.uniform(500, 3000)), np.float32(rng.uniform(500, 3000))  # rsh < 0
        tab = np.zeros(256 + 64, np.uint8)
        L.hx_tanh_d32_table(C.c_float(mn), C.c_float(mx), int("Sigmoid" in _op), P(tab))
        rc_ = (0.0, 1.0) if "Sigmoid" in _op else (-1.0, float(np.float32(128.0 / 127.0)))
        p = proj(_op, [_to_d32(x), S(mn), S(mx)])
        desc = f"{sh} range=[{mn},{mx}]"
        if isinstance(p, Exception):
            st.cases += 1; st.proj_err += 1; st.first_err = st.first_err or f"{desc}: proj={str(p)[:120]}"
            continue
        st.add(tab[x], p[0].logical(), list(rc_), [p[1].item(), p[2].item()], desc)
    st.out()

# ---------------- flat QuantizedTanh_8 / QuantizedSigmoid_8: nnlib registers them with tanh_d32_execute ----------------
for _op in ["QuantizedTanh_8", "QuantizedSigmoid_8"]:
    st = Stat(_op + " [flat op = op_tanh_d32.c table]")
    for t in range(N):
        sh = rshape(); x = q8(sh); mn, mx = rr()
        if t % 9 == 0: x[...] = np.arange(x.size).reshape(sh) % 256
        if t % 13 == 0: mn, mx = np.float32(-rng.uniform(500, 3000)), np.float32(rng.uniform(500, 3000))
        tab = np.zeros(256 + 64, np.uint8)
        L.hx_tanh_d32_table(C.c_float(mn), C.c_float(mx), int("Sigmoid" in _op), P(tab))
        rc_ = (0.0, 1.0) if "Sigmoid" in _op else (-1.0, float(np.float32(128.0 / 127.0)))
        p = proj(_op, [x, S(mn), S(mx)])
        desc = f"{sh} range=[{mn},{mx}]"
        if isinstance(p, Exception):
            st.cases += 1; st.proj_err += 1; st.first_err = st.first_err or f"{desc}: proj={str(p)[:120]}"
            continue
        st.add(tab[x], p[0], list(rc_), [p[1].item(), p[2].item()], desc)
    st.out()
