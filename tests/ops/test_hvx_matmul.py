"""QuantizedMatMul_8x8to32 and QuantizedMatMul_8x8to32_ref against hexagon_nn's device code (op_matmul.c).

Golden cases written by ``tools/hvx/golden_hvx.py --only op_matmul`` (issue 36): op_matmul.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; each node's check() (``matmul_check_ref``: B packed) then execute()
(``matmul_asm`` on the packed copy / ``matmul_ref`` on B) on 150 random nodes per op.
"""
from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_matmul  # noqa: E402
import op_node  # noqa: E402


def _cases() -> tuple[dict, dict, dict[int, list[int]]]:
    meta, g = op_common.load_golden("matmul")
    bad: dict[int, list[int]] = {0: [], 1: []}
    for i in range(len(g["hdr"])):
        if not op_matmul.engine_case(g, i)[0]:
            bad[int(g["hdr"][i, 0])].append(i)
    return meta, g, bad


def test_matmul_equals_device_code() -> None:
    """The _ref op on all 150 nodes bit for bit (int32 sums, shape, float32 range); the assembly op on 141 of 150:
    every one it misses has K <= 16 and N > 32 (op_matmul.c packs B's rows padded to 32, steps by K padded to 16),
    the shapes the importers send to the _ref op (importers/nodes/matmul.py matmul_op)."""
    meta, g, bad = _cases()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 100
    assert meta["source"].endswith("op_matmul.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 300 and not g["status"].any()
    assert (g["hdr"][:, 0] == 1).sum() == 150 and bad[1] == []
    assert len(bad[0]) == 9
    for i in bad[0]:
        b = op_node.case_inputs(g, i)[1]
        assert b.shape[2] <= 16 and b.shape[3] > 32, b.shape
