"""QuantizedSoftmax_8's large-depth path against hexagon_nn's device code (``softmax_larged_flat_exec``).

Golden cases written by ``tools/hvx/golden_hvx.py --only op_softmax_larged`` (issue 36): ``softmax_flat_execute``
run whole under qemu-hexagon on rows of depth 1408-5632 and 5632 bytes or more, which it hands to its
histogram path (asm ``histogram_flat_asm``, a dot product with a table of ``exp``, a reciprocal, a 192-entry code
table per row). The table comes from libm's ``expf`` / ``expm1f``, absent here: each case gave the harness
correctly rounded float32 values, as the engine uses (ops/nnlib_softmax_device.py ``expf_cr``), so the row checks
every step of the path but the device libm's own last bits.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest
from hexnn_import.ops.kernels.nonlinear import qsoftmax_ref_codes
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_softmax  # noqa: E402

GOLDEN = op_common.GOLDEN
F = np.float32


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    return op_common.load_golden("softmax_larged")[1]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """Nnlib commit, functions, tools; >= 200 random cases, every one on the large-depth path."""
    meta = json.loads((GOLDEN / "softmax_larged.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert "fill_largedepth_lookup" in meta["functions"] and meta["random_cases"] >= 200
    assert len(gold["offsets"]) - 1 == meta["cases"] == 208 and not gold["status"].any()
    assert (gold["shape"][:, 3] >= 1408).all() and (np.prod(gold["shape"], axis=1) >= 5632).all()


def test_large_depth_softmax_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every case bit for bit (codes, range [0, 1]), beta 0, negative and far past the HVX loops' limit included
    (this path has no "beta too large")."""
    g, off = gold, gold["offsets"]
    bad = []
    for i in range(len(off) - 1):
        q, mn, mx = run_op("QuantizedSoftmax_8", op_softmax.case_inputs(g, i))
        assert F(mn.reshape(-1)[0]) == g["out_min"][i] == 0 and F(mx.reshape(-1)[0]) == g["out_max"][i] == 1
        if not np.array_equal(q.reshape(-1), g["codes"][off[i]:off[i + 1]]):
            bad.append(f"case {i} shape {g['shape'][i].tolist()}")
    assert not bad, f"{len(bad)} cases differ from the device: {bad[:3]}"


def test_set_tells_the_path_from_the_portable_c(gold: dict[str, np.ndarray]) -> None:
    """The cases are not mostly zeros (1-40 peaks per row hold the softmax: over 5,000 non-zero codes), and the
    portable ``qsoftmax_execute_ref`` (float ``expf`` per element) differs from this path on some of them (14 cases,
    60 codes when written): the set decides which one the engine follows."""
    g, off = gold, gold["offsets"]
    differ = 0
    for i in range(len(off) - 1):
        beta = g["beta"][i] if g["n_inputs"][i] == 4 else F(1)
        ref = qsoftmax_ref_codes(op_softmax.case_inputs(g, i)[0], g["in_min"][i], g["in_max"][i], beta)
        differ += int(not np.array_equal(ref.reshape(-1), g["codes"][off[i]:off[i + 1]]))
    assert differ >= 10 and int((g["codes"] > 0).sum()) > 5000, differ
