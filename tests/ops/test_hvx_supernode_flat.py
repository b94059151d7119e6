"""Supernode_8x8p32to8 / Supernode_8x8p8to8 (flat) against hexagon_nn's device code (op_supernode.c).

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode_flat`` (issue 36): op_supernode.c compiled
whole and unedited, the flat ops' registered ``supernode_check_ref`` then ``supernode_execute_hvx`` (im2col, asm
``gvconvsum2dbbb_asm`` / ``gvconv2dbbb_asm`` / ``gvmsumb_asm``, its own range growth) on the same nodes as the _d32
row (``test_hvx_supernode.py``), input and output plain. The engine's flat Supernode computes what the _d32 node
computes (op_supernode_new.c, exact on every run of that row): prepare.c turns a graph's flat supernodes into _d32
ones. The registered flat op is older code and agrees on 10 of 641 runs; this test pins down how it differs.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def test_flat_supernode_device_differs_as_traced() -> None:
    """- The device refuses exactly the nodes with batches > 1 whose ``filt_height * filt_width * depth`` is not a
      multiple of 32 (op_supernode.c ``supernode_execute_hvx``: "Batch size > 1 not supported with odd in depth
      for now"); the engine computes them.
    - An auto output maximum starts at 1/128 and doubles until the sums fit (``supernode_check_ref``:
      ``info->maxval = 1.0f/128.0f``; ``nodeinfo->maxval *= 2``): every such device range ends on a power of two,
      where the engine (op_supernode_new.c's rule) finds the data's range; a given range is used as given, not
      moved to put 0 on a code (``adjust_minmax_for_zero``). So the codes differ too; 10 runs agree."""
    meta = json.loads((GOLDEN / "supernode_flat.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and meta["source"].endswith("ops/src/op_supernode.c")
    assert "qemu-hexagon" in meta and meta["random_cases"] >= 200
    with np.load(GOLDEN / "supernode_flat.npz") as f:
        g = {k: f[k] for k in f.files}
    h, rc, r8 = g["hdr"], g["run_case"], g["ranges"]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    cut = lambda k, i: g[k][g[f"{k}_off"][i]:g[f"{k}_off"][i + 1]]
    exact, refused = 0, 0
    for i in range(len(h)):
        b, hh, w, din, fh, fw, dout, sh, sw, pad, bias32, n_in = (int(v) for v in h[i][:12])
        r = r8[i]
        ins = [cut("x", i).reshape(b, hh, w, din), cut("f", i).reshape(fh, fw, din, dout), s(r[0]), s(r[1]), s(r[2]),
               s(r[3]), np.zeros((1, sh, sw, 1), np.int32),
               cut("bias", i).astype(np.int32 if bias32 else np.uint8).reshape(1, 1, 1, dout), s(r[4]), s(r[5]),
               s(r[6]), s(r[7])]
        if n_in == 13:
            ins.append(cut("scales", i).reshape(1, 1, 1, dout))
        op = "Supernode_8x8p32to8" if bias32 else "Supernode_8x8p8to8"
        state: dict = {}
        for k in np.flatnonzero(rc == i):
            q, mn, mx = run_op(op, ins, padding=pad, state=state)
            if g["status"][k]:
                assert b > 1 and (fh * fw * din) % 32, i
                refused += 1
                continue
            assert not (b > 1 and (fh * fw * din) % 32), i
            if not np.isfinite(r[7]):
                assert np.log2(g["out_max"][k]) % 1 == 0, (i, k)
            dev = g["codes"][g["offsets"][k]:g["offsets"][k + 1]].reshape(g["out_shape"][k])
            exact += (np.array_equal(q, dev) and mn.astype(F).tobytes() == g["out_min"][k].tobytes()
                      and mx.astype(F).tobytes() == g["out_max"][k].tobytes())
    assert (exact, refused, len(rc)) == (10, 140, 641)
