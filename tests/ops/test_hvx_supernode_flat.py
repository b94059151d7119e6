"""Supernode_8x8p32to8 / Supernode_8x8p8to8 (flat) against hexagon_nn's device code (op_supernode.c).

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode_flat`` (issue 36): op_supernode.c compiled
whole and unedited, the flat ops' registered ``supernode_check_ref`` then ``supernode_execute_hvx`` (outputs of at
most 3 rows: ``supernode_execute_ref``; taller: im2col, asm ``gvconvsum2dbbb_asm`` / ``gvconv2dbbb_asm`` /
``gvmsumb_asm``, its own range growth), input and output plain. The engine's flat device code
(``ops/kernels/supernode_flat_device.py``, what a graph marked prepared runs) must give every run the device
gives, or refuse where the device reads bytes outside the node's padded input.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.kernels.supernode_flat_device import run_flat_device
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32
#: the engine's refusals where the device reads other bytes than the node's (module doc of supernode_flat_hvx)
TRACED = ("reads the rows as if 16-padded", "read past the rows op_supernode.c's fast_im2col_co writes",
          "read past the input")


def _golden() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "supernode_flat.npz") as f:
        return {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list, int, tuple[int, ...]]:
    b, hh, w, din, fh, fw, dout, sh, sw, pad, bias32, n_in = (int(v) for v in g["hdr"][i][:12])
    r = g["ranges"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    cut = lambda k: g[k][g[f"{k}_off"][i]:g[f"{k}_off"][i + 1]]
    ins = [cut("x").reshape(b, hh, w, din), cut("f").reshape(fh, fw, din, dout), s(r[0]), s(r[1]), s(r[2]), s(r[3]),
           np.zeros((1, sh, sw, 1), np.int32), cut("bias").astype(np.int32 if bias32 else np.uint8).reshape(1, 1, 1, dout),
           s(r[4]), s(r[5]), s(r[6]), s(r[7])]
    if n_in == 13:
        ins.append(cut("scales").reshape(1, 1, 1, dout))
    return ("Supernode_8x8p32to8" if bias32 else "Supernode_8x8p8to8"), ins, pad, (b, fh * fw * din, oh_rows(g, i))


def oh_rows(g: dict[str, np.ndarray], i: int) -> int:
    """The case's output rows as the device's shape says (or its input rows when it refused)."""
    k = np.flatnonzero(g["run_case"] == i)[0]
    return int(g["out_shape"][k][1]) if not g["status"][k] else int(g["hdr"][i][1])


def _replay(g: dict[str, np.ndarray], cases: range) -> tuple[int, int, int, int]:
    """``(runs the engine equals, both refuse, the engine refuses with a traced reason, of them with 4+ output
    rows equal)`` over ``cases``; any other outcome fails."""
    exact, refused, traced, hvx_exact = 0, 0, 0, 0
    for i in cases:
        op, ins, pad, (b, k_vals, rows) = _inputs(g, i)
        state: dict = {}
        for k in np.flatnonzero(g["run_case"] == i):
            try:
                q, mn, mx = run_flat_device(op, ins, padding=pad, state=state)
            except HexnnError as e:
                if g["status"][k]:
                    assert b > 1 and k_vals % 16, i
                    refused += 1
                else:
                    assert any(t in str(e) for t in TRACED), (i, str(e))
                    traced += 1
                continue
            assert not g["status"][k], i
            dev = g["codes"][g["offsets"][k]:g["offsets"][k + 1]].reshape(g["out_shape"][k])
            assert np.array_equal(q, dev), (i, k)
            assert mn.astype(F).tobytes() == g["out_min"][k].tobytes() and mx.tobytes() == g["out_max"][k].tobytes()
            exact += 1
            hvx_exact += rows > 3
    return exact, refused, traced, hvx_exact


def test_golden_provenance() -> None:
    """The golden file: nnlib df7ad3c's op_supernode.c under qemu-hexagon, 300 random nodes of each kind plus the
    edge cases, 1261 runs."""
    meta = json.loads((GOLDEN / "supernode_flat.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and meta["source"].endswith("ops/src/op_supernode.c")
    assert "qemu-hexagon" in meta and meta["random_cases"] >= 200 and meta["cases"] == len(_golden()["run_case"]) == 1261


def test_short_outputs_follow_supernode_execute_ref() -> None:
    """op_supernode's nodes (at most 3 output rows: ``supernode_execute_ref``), 641 runs: the device's codes and
    float32 range on every run, or both refuse (batches > 1 over filter values that are not a multiple of 16:
    "Batch size > 1 not supported with odd in depth")."""
    assert _replay(_golden(), range(316)) == (501, 140, 0, 0)


def test_tall_outputs_follow_the_hvx_path() -> None:
    """300 nodes of 4 to 10 output rows (the HVX / assembly path), 620 runs: the device's result, both refuse (19
    runs of batch 2), or the engine refuses with a traced reason where the device reads bytes that are not the
    node's (86 runs: a depth laid out as if 16-padded, windows past the input or the rows fast_im2col_co writes)."""
    exact, refused, traced, hvx_exact = _replay(_golden(), range(316, 616))
    assert (exact, refused, traced) == (515, 19, 86) and hvx_exact == exact


def test_flat_supernode_auto_range_grows_by_doubling() -> None:
    """A value worked by hand (op_supernode.c ``supernode_execute_ref``): one 1x1 tap, input and weights on
    [0, 255 / 128] (levels 1/128, zero codes 0), codes 64 * 128 = 8192 product levels = 0.5; the automatic max
    starts at 1/128 and doubles to 0.5, the min follows as -1/128 (set once at check, doubled never: no sum is
    negative): recip = 0xff0000 / round(0.5078125 * 16384) and the code is (8192 * recip + 2**15) >> 16."""
    one = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    ins = [np.full((1, 1, 1, 1), 64, np.uint8), np.full((1, 1, 1, 1), 128, np.uint8), one(0.0), one(255 / 128),
           one(0.0), one(255 / 128), np.zeros((1, 1, 1, 1), np.int32), np.zeros((1, 1, 1, 1), np.int32),
           one(-1.0), one(1.0), one(-np.inf), one(np.inf)]
    q, mn, mx = run_flat_device("Supernode_8x8p32to8", ins, padding=2)
    recip = 0xFF0000 // 8320
    assert (float(mn.item()), float(mx.item())) == (-1 / 128, 0.5)
    assert int(q.item()) == ((8192 + 128) * recip + 2 ** 15) >> 16
    d32_form = run_op("Supernode_8x8p32to8", ins, padding=2)   # the _d32 node's rule: a range of the data
    assert (float(d32_form[1].item()), float(d32_form[2].item())) != (-1 / 128, 0.5)


def test_refusal_names_the_node() -> None:
    """A batch of 2 over 3 filter values: one line naming the node, the op and the device's reason."""
    g = _golden()
    i = next(i for i in range(len(g["hdr"])) if g["status"][np.flatnonzero(g["run_case"] == i)[0]])
    op, ins, pad, _ = _inputs(g, i)
    with pytest.raises(HexnnError, match=r"node n1 \(Supernode_8x8p(32|8)to8\).*Batch size > 1 not supported"):
        run_flat_device(op, ins, padding=pad, node="n1")


def test_engine_runs_the_device_code_only_in_a_graph_marked_prepared() -> None:
    """The same flat node in a graph: as imported (unprepared) it gives what ``run_op`` gives (prepare's _d32
    node), in a graph marked prepared (its passes left it flat) what ``run_flat_device`` gives; the two differ."""
    from hexnn_import.engine import Engine
    from hexnn_import.graph import Graph, NNPad, OutputDef, Ref

    g = Graph()
    inp = g.append("INPUT", [], [OutputDef((1, 5, 4, 2), "quint8")], name="x")
    w = np.array([200, 56, 128, 255], np.uint8).reshape(1, 1, 2, 2)
    consts = [w, -1.0, 1.0, -1.0, 1.0, None, np.array([5, -9], np.int32).reshape(1, 1, 1, 2), -1.0, 1.0,
              float("-inf"), float("inf")]
    refs = [Ref(inp.node_id, 0)] + [g.shape_ref((1, 1, 1, 1)) if c is None else g.const_ref(c) for c in consts]
    sn = g.append("Supernode_8x8p32to8", refs, [OutputDef((1, 5, 4, 2), "quint8"), OutputDef.scalar(),
                                                 OutputDef.scalar()], NNPad.SAME, "sn")
    g.append("OUTPUT", [Ref(sn.node_id, i) for i in range(3)], [])
    x = np.random.default_rng(3).integers(0, 256, (1, 5, 4, 2), dtype=np.uint8)
    ins = [x] + [g.node(r.src_id).data for r in sn.inputs[1:]]
    as_d32 = run_op("Supernode_8x8p32to8", ins, padding=NNPad.SAME)
    device = run_flat_device("Supernode_8x8p32to8", ins, padding=NNPad.SAME)
    got, _ = Engine(g).run([x])
    assert all(np.array_equal(a, b) for a, b in zip(got, as_d32))
    g.prepared = True
    got, _ = Engine(g).run([x])
    assert all(np.array_equal(a, b) for a, b in zip(got, device))
    assert not np.array_equal(as_d32[2], device[2])
