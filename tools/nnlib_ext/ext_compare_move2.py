# Comparison rows of the `move` area, part 2 (same namespace as ext_compare_move.py: _mv_range, _mv_multi).

# ---------------- SpaceToBatchND_8 / BatchToSpaceND_8 (op_batchspace.c) ----------------
st = Stat("move SpaceToBatchND_8"); st2 = Stat("move BatchToSpaceND_8")
for t in range(N):
    nb = int(rng.choice([1, 2, 2])); blk = [int(rng.integers(1, 4)) for _ in range(nb)]
    b, d = int(rng.integers(1, 3)), int(rng.choice([1, 2, 3, 8, 16]))
    pads = [int(rng.integers(0, 3)) if t % 3 else 0 for _ in range(2 * nb)]
    if t % 17 == 0: pads[0] = -1
    bw = blk[1] if nb == 2 else 1
    h = blk[0] * int(rng.integers(1, 5)) - pads[0] - pads[1]; w = bw * int(rng.integers(1, 5)) - (pads[2] + pads[3] if nb == 2 else 0)
    if t % 11 == 0: h += 1
    h, w = max(h, 1), max(w, 1)
    x = q8((b, h, w, d)); mn, mx = _mv_range()
    ins = [x, I32(blk), np.array(pads, np.int32).reshape(1, 1, nb, 2), S(mn), S(mx)]
    cmp3(st, "move_s2b", ins, "SpaceToBatchND_8", ins, np.uint8, 4 * x.size + 4096, f"{x.shape} block={blk} pads={pads} range=[{mn},{mx}]")
    bb = int(np.prod(blk)) * int(rng.integers(1, 3)) + (1 if t % 13 == 0 else 0)
    h2, w2 = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    crops = [int(rng.integers(0, blk[0])) for _ in range(2)] + ([int(rng.integers(0, bw)) for _ in range(2)] if nb == 2 else [])
    y = q8((bb, h2, w2, d))
    ins = [y, I32(blk), np.array(crops, np.int32).reshape(1, 1, nb, 2), S(mn), S(mx)]
    cmp3(st2, "move_b2s", ins, "BatchToSpaceND_8", ins, np.uint8, y.size + 64, f"{y.shape} block={blk} crops={crops}")
st.out(); st2.out()

# ---------------- SpaceToDepth_8 / DepthToSpace_8 (op_depthspace.c) ----------------
st = Stat("move SpaceToDepth_8"); st2 = Stat("move DepthToSpace_8")
for t in range(N):
    blk = [int(rng.integers(1, 4))] if t % 2 else [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    bh, bw = blk[0], blk[-1]
    b, d = int(rng.integers(1, 3)), int(rng.choice([1, 2, 3, 5, 16]))
    h, w = bh * int(rng.integers(1, 5)) + (1 if t % 9 == 0 else 0), bw * int(rng.integers(1, 5))
    x = q8((b, h, w, d)); mn, mx = _mv_range()
    if t % 23 == 0: blk = [0]
    ins = [x, I32(blk), S(mn), S(mx)]
    cmp3(st, "move_s2d", ins, "SpaceToDepth_8", ins, np.uint8, x.size, f"{x.shape} block={blk}", node_type=OPC("SpaceToDepth_8"))
    d2 = bh * bw * int(rng.choice([1, 2, 3, 4])) + (1 if t % 13 == 0 else 0)
    h2, w2 = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    y = q8((b, h2, w2, d2))
    ins = [y, I32([bh, bw] if len(blk) == 2 else [bh]), S(mn), S(mx)]
    if t % 3: ins.append(I32([int(rng.integers(0, max(1, h2 * bh // 2 + 1))) for _ in range(2)] + [int(rng.integers(0, max(1, w2 * bw // 2 + 1))) for _ in range(2)]))
    cmp3(st2, "move_d2s", ins, "DepthToSpace_8", ins, np.uint8, y.size, f"{y.shape} block={ins[1].reshape(-1).tolist()} crops={ins[4].reshape(-1).tolist() if len(ins) > 4 else None}",
         node_type=OPC("DepthToSpace_8"))
st.out(); st2.out()

# ---------------- Gather_8 / Table_8 (op_gather.c) ----------------
st = Stat("move Gather_8"); st2 = Stat("move Table_8")
for t in range(N):
    tsh = rshape(600); table = q8(tsh); mn, mx = _mv_range()
    ir = int(rng.integers(0, 3)); ish = [1, 1, 1, 1]
    for i in range(ir): ish[3 - i] = int(rng.integers(1, 5))
    tab_n = max(tsh[4 - max(1, sum(1 for _ in range(1)))], 1)
    index = rng.integers(-2, max(tsh) + 2, ish).astype(np.int32)
    ins = [index, table, S(mn), S(mx)]
    c = t % 4
    if c >= 1: ins.append(I32(int(rng.integers(-2, 5))))
    if c >= 2: ins.append(I32(int(rng.integers(-2, 6))))
    pad = int(rng.choice([0, 1, 2, 0, 5]))
    cmp3(st, "move_gather", ins, "Gather_8", ins, np.uint8, 4 * table.size * max(1, index.size) + 64,
         f"index{tuple(ish)} table{tsh} extra={[int(a.item()) for a in ins[4:]]} pad={pad}", node_type=OPC("Gather_8"), padding=pad)
    # Table_8 with a partition structure: table [.., _NP*S, ..] or [.., _NP, S, ..]
    _NP, Sz = int(rng.integers(2, 5)), int(rng.integers(2, 5)); inner = int(rng.choice([1, 2, 3]))
    c = t % 4
    if c == 0: tb = q8((1, 1, _NP * Sz, inner)); struct = [2, _NP, Sz]
    elif c == 1: tb = q8((1, _NP, Sz, inner)); struct = [1, _NP, Sz]
    elif c == 2:
        sizes = [int(rng.integers(2, 5)) for _ in range(_NP)]; tb = q8((1, 1, sum(sizes), inner)); struct = [2, _NP] + sizes
    else: tb = q8((1, 1, 1, _NP * Sz)); struct = [3, _NP, Sz]
    if inner == 1 and c != 3: tb = tb.reshape(1, 1, 1, -1) if c == 0 or c == 2 else tb.reshape(1, 1, _NP, Sz); struct[0] += 1
    ipn = int(rng.integers(1, 2 * _NP + 2)); ish = (1, 1, int(rng.integers(1, 4)), ipn)
    index = rng.integers(-1, 6, ish).astype(np.int32)
    if t % 19 == 0: struct[0] = (struct[0] + 1) % 4
    ins = [index, tb, S(mn), S(mx), I32(struct)]
    if t % 2: ins.append(I32(int(rng.choice([0, 1, 2]))))
    cmp3(st2, "move_table", ins, "Table_8", ins, np.uint8, index.size * tb.size + 64,
         f"index{ish} table{tb.shape} struct={struct} strat={ins[5].item() if len(ins) > 5 else None}", node_type=OPC("Table_8"))
st.out(); st2.out()

# ---------------- ArgMax_8toInt32 / ArgMax_8 (op_argmax.c; HVX row kernels modelled when the axis has stride 1) ----------------
st = Stat("move ArgMax_8toInt32"); st2 = Stat("move ArgMax_8")
for t in range(N):
    sh = rshape(3000)
    if t % 4 == 0: sh = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.choice([127, 128, 129, 200, 256, 300])))
    x = q8(sh); mn, mx = _mv_range()
    if t % 5 == 0: x = (x // 64).astype(np.uint8)                                        # many ties
    axis = int(rng.integers(-4, 4)) if t % 3 else 3
    if t % 29 == 0: axis = int(rng.choice([4, -5]))
    ins = [x, I32(axis), S(mn), S(mx)]
    cmp3(st, "move_argmax32", ins, "ArgMax_8toInt32", ins, np.int32, x.size, f"{sh} axis={axis}", n_range_out=0)
    if -4 <= axis < 4 and sh[axis % 4] < 256:
        cmp3(st2, "move_argmax8", ins, "ArgMax_8", ins, np.uint8, x.size, f"{sh} axis={axis}")
st.out(); st2.out()

# ---------------- TopK_8 (op_topk_q.c) ----------------
st = Stat("move TopK_8")
for t in range(N):
    sh = rshape(2000); x = q8(sh); mn, mx = _mv_range()
    if t % 3 == 0: x = (x // 50 * 50).astype(np.uint8)
    if t % 7 == 0: x[..., : sh[3] // 2] = 255
    k = int(rng.integers(1, sh[3] + 3))
    ins = [x, I32(k), S(mn), S(mx)]
    n = x.size
    _mv_multi(st, "move_topk", ins, "TopK_8", [(np.uint8, n), (np.int32, n), (np.float32, 1), (np.float32, 1)],
              f"{sh} k={k}", [0, 1], (2, 3))
st.out()

# ---------------- ResizeNearestNeighbor_8 (op_resizenear.c, MT build) ----------------
st = Stat("move ResizeNearestNeighbor_8")
for t in range(N):
    b, h, w, d = int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.choice([1, 2, 3, 8]))
    ho, wo = (int(rng.integers(1, 20)), int(rng.integers(1, 20))) if t % 3 else (h * int(rng.integers(1, 4)), w * int(rng.integers(1, 4)))
    x = q8((b, h, w, d)); mn, mx = _mv_range()
    ins = [x, I32([ho, wo]), S(mn), S(mx)]
    if t % 2: ins.append(I32(int(rng.integers(0, 2))))
    cmp3(st, "move_resizenear", ins, "ResizeNearestNeighbor_8", ins, np.uint8, b * ho * wo * d,
         f"{x.shape} -> {ho}x{wo} align={ins[4].item() if len(ins) > 4 else None}")
st.out()

# ---------------- AxisShuffle_8 (op_axisshuffle.c) / QuantizedChannelShuffle_8 (op_chanshuffle.c) ----------------
st = Stat("move AxisShuffle_8"); st2 = Stat("move QuantizedChannelShuffle_8")
for t in range(N):
    sh = list(rshape(2000)); axis = int(rng.integers(-4, 4)); g = int(rng.integers(1, 5))
    sh[axis % 4] *= g if t % 7 else 1
    x = q8(tuple(sh)); mn, mx = _mv_range()
    if t % 17 == 0: g = int(rng.choice([0, -1]))
    ins = [x, I32(axis), I32(g), S(mn), S(mx)]
    cmp3(st, "move_axisshuffle", ins, "AxisShuffle_8", ins, np.uint8, x.size, f"{tuple(sh)} axis={axis} groups={g}",
         node_type=OPC("AxisShuffle_8"))
    ins = [I32(g), x, S(mn), S(mx)]
    cmp3(st2, "move_chanshuffle", ins, "QuantizedChannelShuffle_8", ins, np.uint8, x.size, f"{tuple(sh)} groups={g} range=[{mn},{mx}]",
         node_type=OPC("QuantizedChannelShuffle_8"))
st.out(); st2.out()
