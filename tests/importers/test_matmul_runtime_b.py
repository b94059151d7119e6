"""Which product op a matrix product is emitted as (importers/nodes/matmul.py ``matmul_op``, issue 36).

nnlib df7ad3c op_matmul.c registers ``QuantizedMatMul_8x8to32`` with a check (``matmul_check_ref``) that
packs input 1 once at prepare and an assembly execute that multiplies by that copy: right for a Const B only.
A B computed at run time goes to ``QuantizedMatMul_8x8to32_ref`` (``matmul_execute_ref`` reads B at every
execute), which prepare.c never fuses (``matmult_extrachecks`` wants a Const B) and our prepare keeps too. The
values are checked against sums worked here in int64 from the codes and the offsets hexagon_nn's
``quantize_uint8(0.0, min, max)`` gives.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import hexnn_import as hx
from hexnn_import.graph import Ref
from hexnn_import.testing import TFLiteBuilder

MATMUL, MATMUL_REF = "QuantizedMatMul_8x8to32", "QuantizedMatMul_8x8to32_ref"


def _import(model: bytes, tmp_path: Path) -> hx.Graph:
    p = tmp_path / "m.tflite"
    p.write_bytes(model)
    return hx.import_model(p)


def _bmm(const_c: bool, n: int = 5) -> bytes:
    """BATCH_MATMUL of an int8 [2, 4, 8] by a [2, 8, n] activation (or one constant [8, n] matrix)."""
    b = TFLiteBuilder()
    a = b.add_tensor("a", (2, 4, 8), np.int8, scale=0.05, zero_point=3)
    if const_c:
        codes = np.random.default_rng(3).integers(-127, 128, (8, n)).astype(np.int8)
        c = b.add_const("c", codes, scale=0.01, zero_point=0)
    else:
        c = b.add_tensor("c", (2, 8, n), np.int8, scale=0.04, zero_point=-5)
    y = b.add_tensor("y", (2, 4, n), np.int8, scale=0.25, zero_point=2)
    b.add_operator("BATCH_MATMUL", [a, c], [y], {})
    b.set_io([a] if const_c else [a, c], [y])
    return b.build()


def _runtime_fc() -> bytes:
    """FULLY_CONNECTED whose [3, 10] weights are a graph input (TFLite's matmul_test.cc NonConstWeights)."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 10), np.int8, scale=0.5, zero_point=-1)
    w = b.add_tensor("w", (3, 10), np.int8, scale=0.5, zero_point=-1)
    y = b.add_tensor("y", (2, 3), np.int8, scale=1.0, zero_point=-1)
    b.add_operator("FULLY_CONNECTED", [x, w], [y], {})
    b.set_io([x, w], [y])
    return b.build()


def _products(g: hx.Graph) -> list[str]:
    return sorted({n.op for n in g.nodes if n.op.startswith("QuantizedMatMul")})


def test_runtime_b_is_the_ref_op_and_stays_after_prepare(tmp_path: Path) -> None:
    for model in (_bmm(const_c=False), _runtime_fc()):
        g = _import(model, tmp_path)
        assert _products(g) == [MATMUL_REF]
        assert _products(hx.prepare(g)) == [MATMUL_REF]


def test_const_b_keeps_the_packed_op(tmp_path: Path) -> None:
    g = _import(_bmm(const_c=True), tmp_path)
    assert _products(g) == [MATMUL]
    mm = next(n for n in g.nodes if n.op == MATMUL)
    assert g.node(mm.inputs[1].src_id).is_const


def test_const_b_the_assembly_misreads_is_the_ref_op(tmp_path: Path) -> None:
    """K = 8 rows and N = 40 columns: op_matmul.c's assembly reads the packed copy wrong past 32 outputs
    (tests/ops/test_hvx_matmul.py), so even a Const B goes to the _ref op."""
    assert _products(_import(_bmm(const_c=True, n=40), tmp_path)) == [MATMUL_REF]


def _u8_offset(lo: float, hi: float) -> int:
    """hexagon_nn quantize_uint8(0.0, lo, hi) for a range holding 0: round(-lo * 255 / (hi - lo))."""
    return int(np.floor(-lo * 255.0 / (hi - lo) + 0.5))


def test_ref_op_sums_the_run_time_b(tmp_path: Path) -> None:
    """Every product of a run of the runtime-B graph equals int64 sums of its own A and B codes (offsets from
    their ranges), so each read the B of this run."""
    g = hx.prepare(_import(_bmm(const_c=False), tmp_path))
    rng = np.random.default_rng(11)
    feeds = {s.name: rng.integers(-128, 128, s.shape).astype(np.int8) for s in g.inputs}
    _, every = hx.Runner(g).run_all(feeds)
    checked = 0
    for n in g.nodes:
        if n.op != MATMUL_REF:
            continue
        a, b = every[n.inputs[0]], every[n.inputs[1]]
        lo_a, hi_a, lo_b, hi_b = (float(every[r].reshape(-1)[0]) for r in n.inputs[2:6])
        a_off, b_off = _u8_offset(lo_a, hi_a), _u8_offset(lo_b, hi_b)
        k = b.shape[2]
        want = (a.reshape(-1, k).astype(np.int64) - a_off) @ (b[0, 0].astype(np.int64) - b_off)
        assert np.array_equal(every[Ref(n.node_id, 0)].reshape(want.shape), want), n.name
        assert np.std(want) > 0
        checked += 1
    assert checked == 2
