"""QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32 / QuantizedMul_8x8to8_d32 against hexagon_nn's device code.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_add_d32`` (issue 36): op_add_d32.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, the registered ``addsub_d32_check`` then ``addsub_d32_execute_common`` (its
own d32 loops, HVX, the scalar-B copy through ``tensor_copy_scaled_d32`` / asm ``scalemem_d32_hvx``, the rerun when
the range found is too small) run 1-2 times per node on the same d32 inputs under qemu-hexagon. The engine's _d32
ops are their flat twins on the logical data: Add is the device's flat add (nnlib-exact), Sub the same body with B
negated, Mul op_mul.c's portable ``mul_8x8to8_execute``.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32
OPS = ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32")


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "add_d32.npz") as f:
        return {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list]:
    h = g["hdr"][i]
    a = g["xa"][g["xa_off"][i]:g["xa_off"][i + 1]].reshape(h[1:5])
    b = g["xb"][g["xb_off"][i]:g["xb_off"][i + 1]].reshape(h[5:9])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    return OPS[h[0]], [to_d32(a), to_d32(b), *s[:int(h[9]) - 2]]


def _classify(g: dict[str, np.ndarray], i: int) -> list[str]:
    """Per run of case ``i``: 'exact', 'within1' (codes within one, range equal), 'range' (the range differs),
    'codes' (codes differ by more, range equal), 'refused' (engine refuses, device runs) or 'both-refuse'."""
    op, ins = _inputs(g, i)
    state: dict = {}
    out = []
    for r in np.flatnonzero(g["run_case"] == i):
        try:
            q, mn, mx = run_op(op, ins, state=state)
        except HexnnError:
            out.append("both-refuse" if g["status"][r] else "refused")
            continue
        assert g["status"][r] == 0, (i, r)
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        d = np.abs(q.logical().astype(np.int16) - dev)
        same = (F(mn.reshape(-1)[0]).tobytes() == g["out_min"][r].tobytes()
                and F(mx.reshape(-1)[0]).tobytes() == g["out_max"][r].tobytes())
        out.append("exact" if same and not d.any() else "range" if not same else "within1" if d.max() <= 1 else "codes")
    return out


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the code run, the tools; >= 200 random nodes."""
    meta = json.loads((GOLDEN / "add_d32.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert meta["source"].endswith("op_add_d32.c") and "addsub_d32_execute_common" in meta["functions"]
    assert meta["random_cases"] >= 200 and len(gold["run_case"]) == meta["cases"]


def _single_free(g: dict[str, np.ndarray], i: int) -> bool:
    """Case ``i`` is an add / sub of a single value (B, or A onto a tensor B) with both output ends free (absent
    or -inf / +inf): the device's ``mode_broadcast_1111``."""
    h, r = g["hdr"][i], g["ranges"][i]
    single = h[5:9].tolist() == [1, 1, 1, 1] or h[1:5].tolist() == [1, 1, 1, 1]
    free = (h[9] < 7 or r[4] == -np.inf) and (h[9] < 8 or r[5] == np.inf)
    return bool(h[0] < 2 and single and free)


def test_add_sub_mul_d32_against_device(gold: dict[str, np.ndarray]) -> None:
    """Add: 376 of 377 runs bit-exact, the other refused by both; Sub: 401 of 402, as Add (the engine follows op_add_d32.c's subtraction, its own check
    of the output ends - ``fminf(0, min)`` / ``fmaxf(0, max)``, the range tracked whenever an end is free, not only
    the max as op_add.c - and its single-value mode since issue 36: a single B (or a single A, swapped onto B:
    ``op_subtract_rev``) with both output ends free, absent or -inf / +inf, ``mode_broadcast_1111``, re-codes the
    tensor with ``tensor_copy_scaled_d32`` onto its range moved by the value - 200 single-value nodes on run-time
    style ranges, h-swish's + 3 and a float model's - 1 among them, all exact); Mul: all 154 (the engine follows
    op_add_d32.c's own multiply since issue 36: ``mul_setup_scaling``'s 1/8 worst-case first range, the 16-bit
    ``first_multiply`` / ``second_multiply``, ``check_mul_need_rerun``, the scalar-B copy).
    A fixed output range too narrow for the scales ("scaling failed"), one node of each: both refuse the first run;
    ``setup_elementwise_strategy`` has left ``strategy_valid = -1`` ("still needs scaling info") and
    ``elementwise_strategy_valid_check`` only tests ``== 0``, so the device's second run goes ahead on the scaling
    as ``nn_calloc`` left it (all codes 0, the fixed range), and the engine follows (issue 36).
    """
    g, h = gold, gold["hdr"]
    tally: dict[tuple[int, str], int] = {}
    for i in range(len(h)):
        runs = _classify(g, i)
        for k, c in enumerate(runs):
            key = (int(h[i, 0]), c)
            tally[key] = tally.get(key, 0) + 1
            if c == "exact":
                continue
            assert not _single_free(g, i), (i, k, c)   # the re-coding is followed
            if c == "both-refuse":
                assert h[i, 9] == 8 and k == 0, (i, k)
                r = np.flatnonzero(g["run_case"] == i)[1]   # the second run: every code 0 on the fixed range
                assert g["status"][r] == 0 and not g["codes"][g["offsets"][r]:g["offsets"][r + 1]].any()
            else:
                raise AssertionError(f"case {i} run {k}: {c}, not a traced difference")
    singles = [i for i in range(len(h)) if _single_free(g, i)]
    assert len(singles) >= 200 and sum(h[i, 1:5].tolist() == [1, 1, 1, 1] for i in singles) >= 10
    assert sum(h[i, 9] == 8 for i in singles) >= 50       # -inf / +inf given, as the float models emit them
    assert tally == {(0, "exact"): 376, (0, "both-refuse"): 1, (1, "exact"): 401, (1, "both-refuse"): 1,
                     (2, "exact"): 154}, tally
