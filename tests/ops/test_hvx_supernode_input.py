"""InputSupernode_8x8p32to8_outd32 / InputSupernode_8x8p8to8_outd32 against hexagon_nn's device code
(op_supernode_new.c ``shortin_supernode_check`` / ``shortin_supernode_execute_call``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode_input`` (issue 36): op_supernode_new.c
compiled whole and unedited with nnlib's own ``nn_graph.h`` and the ``inconv2dbbb*`` assembly, one node per case on
a plain input of depth 1-4, run 1-3 times (the range a run settles on persists, as in a graph). The engine's op is
ops/kernels/input_supernode.py.
"""
from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np
from hexnn_import.ops.registry import PAD_VALID, run_op

from hexnn_import.errors import DeviceDefectWarning

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_supernode as sn  # noqa: E402
import op_supernode_input  # noqa: E402

F = np.float32


def _codes(g: dict[str, np.ndarray], r: int) -> np.ndarray:
    return g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])


def test_input_supernode_equals_device_code() -> None:
    """646 runs of 318 nodes (18 edge - 4 of them built by hand -, 300 random; input depth 1-4, filters 1-3, strides
    1-2 by 1-3, SAME / VALID, 438 runs with 32-bit bias): every run bit for bit, codes and float32 range, or both
    refuse (the 2 runs of the depth-5 node). That takes, from the device code:

    - the 13th input (channel scales, 83 runs) ignored (``shortin_supernode_check``);
    - an auto range's extremes over whole vectors of 4 output pixels, the width-padding columns included
      (``shortin_supernode_execute_hvx_slice``; 41 runs of the earlier engine differed by this);
    - ``inconv2dbbb_v60_asm``'s maximum, which loses pixel 2 of each vector when ``recip_shamt`` is 0;
    - ``gemsumb`` over the input staged at depth 4 (``shortin_filt_sumb``: the bias words round as the device's);
    - the starting guess [-1/128, 1/128] and the retry rule (``round_up_quarter_octave``, floors 1/16 and
      -1/256)."""
    meta, g = op_common.load_golden("supernode_input")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "shortin_supernode_execute_everything" in meta["functions"]
    assert len(g["hdr"]) == 318 and len(g["run_case"]) == meta["cases"] == 646 and not g["check"].any()
    thirteen = np.flatnonzero(g["hdr"][:, 11] == 13)
    assert int(np.isin(g["run_case"], thirteen).sum()) == 83 and int(g["status"].sum()) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        bad = [(i, msg) for i in range(len(g["hdr"])) for msg in sn.compare_case(g, i, op_supernode_input.OPS) if msg]
    assert not bad, bad[:3]


def test_device_range_over_padding_columns_and_lost_pixel() -> None:
    """The four hand-built nodes, as the device ran them (op_supernode_input.built_cases): (1) every logical
    value is negative (code 28) yet the range reaches past the bias +0.5 that only the 3 width-padding columns
    hold; (2) at stride 2 the one nonzero value (2.0, column 2) stays out of the range (code 255 on the guess
    [-1/128, 1/128]): ``inconv2dbbb_v60_asm`` loses pixel 2 from its maximum when ``recip_shamt`` is 0; (3) at
    stride 1 the same value widens the range; (4) the stride-2 node on an input range [0, 10] (value 20.0): its
    first computation has ``recip_shamt`` 1, where the kernel counts pixel 2, and the range widens past 20. The
    engine gives the same."""
    _, g = op_common.load_golden("supernode_input")
    first = {i: int(np.flatnonzero(g["run_case"] == i)[0]) for i in (14, 15, 16, 17)}
    pad, lost, kept, shifted = (_codes(g, first[i])[..., 0] for i in (14, 15, 16, 17))
    assert (pad == 28).all() and g["out_max"][first[14]] > 0.5
    assert pad.shape[-1] == 5 and g["hdr"][14][2] == 5
    assert lost.tolist() == [[[127, 127, 255, 127]]] and g["out_max"][first[15]] < 2.0 / 128
    assert kept[0, 0, 2] == 181 and g["out_max"][first[16]] > 1.0
    assert shifted[0, 0, 2] < 255 and g["out_max"][first[17]] > 20.0
    for i in (14, 15, 16, 17):
        assert sn.compare_case(g, i, op_supernode_input.OPS) == ["", ""]


def test_channel_scales_ignored_with_a_warning() -> None:
    """A 13th input gives the 12-input node's result bit for bit; scales other than 1.0 are named in a
    DeviceDefectWarning (the device never reads them), scales of 1.0 are not."""
    rng = np.random.default_rng(3)
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    ins = [rng.integers(0, 256, (1, 5, 6, 3), dtype=np.uint8), rng.integers(0, 256, (2, 2, 3, 5), dtype=np.uint8),
           s(-1), s(1), s(-0.5), s(0.5), np.zeros((1, 1, 2, 1), np.int32),
           rng.integers(-999, 999, (1, 1, 1, 5), dtype=np.int32), s(-1), s(1), s(-np.inf), s(np.inf)]
    op = "InputSupernode_8x8p32to8_outd32"
    want = run_op(op, ins, padding=PAD_VALID, state={})
    for scales, warned in ((rng.uniform(0.1, 1, 5).astype(F), True), (np.ones(5, F), False)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = run_op(op, [*ins, scales.reshape(1, 1, 1, 5)], padding=PAD_VALID, state={}, node="in")
        said = [str(m.message) for m in seen if issubclass(m.category, DeviceDefectWarning)]
        assert any("channel scales" in m for m in said) == warned, said
        assert np.array_equal(got[0].logical(), want[0].logical())
        assert got[1].item() == want[1].item() and got[2].item() == want[2].item()
