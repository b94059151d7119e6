"""QuantizedMean_8 against hexagon_nn's device code (op_reducing_mean.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_mean`` (issue 36): op_reducing_mean.c compiled whole and
unedited with nnlib's own ``nn_graph.h`` and src/quantize.c; the registered ``reducing_mean_execute`` (the output
shape read from its definition, include/nn_reduce_utils.h's HVX sums one axis at a time, HVX
``set_output_scaling_for_mean``) on every axis set, ranges holding 0 or not, given output ranges.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_mean  # noqa: E402
import op_node  # noqa: E402


def _misplaced(shape: tuple[int, ...], axes: list[int]) -> bool:
    """Whether a later (32-bit) pass of ``reducing_mean_execute`` has more than one reduction batch and a blob of
    32 words or more that is not a whole number of vectors: ``reduce_sum_single_axis_hvx_32`` then stores whole
    vectors with ``*(HVX_Vector *)&out_data[xd]`` at ``out_data += blob_size`` (an unaligned address: the store
    drops the low bits) and its leftover count is ``blob_size % 128`` words (bytes meant)."""
    axes = [a % 4 for a in axes]
    out = list(shape)
    for a in axes:
        out[a] = 1
    if len(axes) == 4 or int(np.prod(out)) == 1:
        return False                                     # reduce_sum_all_axes_hvx
    shp = list(shape)
    for k, a in enumerate(axes):
        blob = int(np.prod(shp[a + 1:]))
        if k and int(np.prod(shp[:a])) > 1 and blob >= 32 and blob % 32:
            return True
        shp[a] = 1
    return False


def test_mean_equals_device_code_but_misplaced_sums() -> None:
    """Of the 358 nodes (58 edge, 300 random) 322 equal the device bit for bit (codes, shape, range). The 36 others:
    35 whose later 32-bit pass misplaces sums on the device (``_misplaced``; the engine keeps the mean: the
    misplaced stores overwrite earlier batches' sums, and with ``blob_size % 128 >= 32`` the leftover store carries
    lanes read past the pass's data) and 1 whose given output min lies above the max (the device runs it, the
    engine refuses)."""
    meta, g = op_common.load_golden("mean")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_reducing_mean.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 358 and not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_mean.engine_case(g, i)[0]]
    assert len(bad) == 36
    ins = [op_node.case_inputs(g, i) for i in bad]
    moved = [i for i, x in zip(bad, ins) if _misplaced(x[0].shape, x[3].reshape(-1).tolist())]
    assert len(moved) == 35
    rest = [x for i, x in zip(bad, ins) if i not in moved]
    assert len(rest) == 1 and len(rest[0]) == 5 and rest[0][4].item() > max(0.0, rest[0][2].item())


def test_device_mean_of_constant_data_is_the_constant() -> None:
    """A property the golden set must show: all-0 or all-255 data over a zero-exact range with no given output
    range comes back as the same code."""
    _, g = op_common.load_golden("mean")
    seen = 0
    for i in range(len(g["hdr"])):
        x = op_node.case_inputs(g, i)
        if len(x) == 4 and x[0].size > 1 and x[0].min() == x[0].max() and x[1].item() <= 0 <= x[2].item():
            codes = op_node.run_outputs(g, i)[1][0][1]
            assert (codes == x[0].reshape(-1)[0]).all(), i
            seen += 1
    assert seen >= 2
