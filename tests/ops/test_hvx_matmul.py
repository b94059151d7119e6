"""QuantizedMatMul_8x8to32 and QuantizedMatMul_8x8to32_ref against hexagon_nn's device code (op_matmul.c).

Golden cases written by ``tools/hvx/golden_hvx.py --only op_matmul`` (issue 36): op_matmul.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; each node's check() (``matmul_check_ref``: B packed) then execute()
(``matmul_asm`` on the packed copy / ``matmul_ref`` on B) on 150 random nodes per op.
The assembly op's K <= 16, N > 32 defect is traced in ops/kernels/conv.py (``asm_block_columns``).
"""
from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_matmul  # noqa: E402
import op_node  # noqa: E402


def test_matmul_equals_device_code() -> None:
    """Both ops on all 200 nodes each bit for bit (int32 sums, shape, float32 range). The assembly op's 13 nodes
    with K <= 16 and N > 32 (op_matmul.c packs B's rows padded to 32, steps by K padded to 16) are off on the
    device from output 32 on; the engine follows them with a DeviceDefectWarning, and there they differ from
    the _ref op's true product (the importers send those shapes to the _ref op: importers/nodes/matmul.py)."""
    from hexnn_import.errors import DeviceDefectWarning
    from hexnn_import.ops.registry import run_op

    meta, g = op_common.load_golden("matmul")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 100
    assert meta["source"].endswith("op_matmul.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 400 and not g["status"].any()
    assert (g["hdr"][:, 0] == 1).sum() == 200
    defect = []
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always", DeviceDefectWarning)
        for i in range(len(g["hdr"])):
            assert op_matmul.engine_case(g, i)[0], (i, op_matmul.engine_case(g, i)[1])
        for i in np.flatnonzero(g["hdr"][:, 0] == 0):
            ins = op_node.case_inputs(g, i)
            dev = op_node.run_outputs(g, i)[1][0][1].view(np.int32)
            true = np.asarray(run_op("QuantizedMatMul_8x8to32_ref", ins)[0], np.int32).reshape(-1)
            if not np.array_equal(dev, true):
                defect.append((ins, dev, true))
    assert len(defect) == 13
    assert sum(issubclass(w.category, DeviceDefectWarning) for w in told) == 13
    for ins, dev, true in defect:
        a, b = ins[:2]
        k, n = b.shape[2], b.shape[3]
        assert k <= 16 and n > 32 and (a.size == k or k == 16), b.shape
        cols = np.arange(true.size) % n
        assert np.array_equal(dev[cols < 32], true[cols < 32])


def test_matmul_asm_blocks_by_hand() -> None:
    """[1, 3] @ [3, 70] with zero points 0 (ranges [0, 255]): B's column j is j + 1 in each row, A is [1, 2, 3],
    so the true sum of column j is 6 (j + 1). The device's output block 1 (columns 32-63) reads packing padding
    (0) and block 2 (columns 64-69) reads packed block 1's columns 32-37 (6 * 33 .. 6 * 38)."""
    from hexnn_import.errors import DeviceDefectWarning
    from hexnn_import.ops.registry import run_op

    a = np.array([1, 2, 3], np.uint8).reshape(1, 1, 1, 3)
    b = np.tile(np.arange(1, 71, dtype=np.uint8), (3, 1)).reshape(1, 1, 3, 70)
    rng = [np.array(v, np.float32).reshape(1, 1, 1, 1) for v in (0.0, 255.0)]
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always", DeviceDefectWarning)
        got = np.asarray(run_op("QuantizedMatMul_8x8to32", [a, b, *rng, *rng])[0]).reshape(-1)
    want = np.concatenate([6 * np.arange(1, 33), np.zeros(32), 6 * np.arange(33, 39)])
    assert np.array_equal(got, want) and [w.category for w in told] == [DeviceDefectWarning]
    ref = np.asarray(run_op("QuantizedMatMul_8x8to32_ref", [a, b, *rng, *rng])[0]).reshape(-1)
    assert np.array_equal(ref, 6 * np.arange(1, 71))
