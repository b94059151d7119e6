"""InputSupernode_8x8p32to8_outd32 / InputSupernode_8x8p8to8_outd32 on nnlib's device code (op_supernode_new.c, whole).

nnlib registers the input supernodes ("shortin": a plain graph input of depth 1-4, the output d32) with
``shortin_supernode_check`` (weights rearranged to depth 4, ``shortin_filt_sumb``, ``setup_initial_output_range``) and
``shortin_supernode_execute_call`` (``shortin_supernode_execute_everything``: the input converted to depth 4 and
zapped for the padding, asm ``inconv2dbbb*`` products with their bias / requantize output stage and range,
``supernode_execute_workitem_check_for_retry``'s retries). The whole file is compiled unedited through
``harness_supernode_input.c``; the cases, records and comparison are ``op_supernode``'s with the input depth 1-4,
plus three nodes built by hand (:func:`built_cases`). The engine's op: ``hexnn_import.ops.kernels.input_supernode``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_supernode as sn

F = np.float32

NAME = "supernode_input"
OPS = ("InputSupernode_8x8p32to8_outd32", "InputSupernode_8x8p8to8_outd32")
SOURCE = sn.SOURCE
FUNCTIONS = ["shortin_supernode_check", "shortin_rearrange_weights_Ndto4", "shortin_filt_sumb",
             "shortin_supernode_execute_call", "shortin_supernode_execute_everything", "shortin_supernode_prepare_input",
             "shortin_convert_image_Nto4", "shortin_zapslice_depth4", "shortin_supernode_execute_hvx_slice",
             "fill_bias_buf", "supernode_execute_workitem_check_for_retry", "inconv2dbbb_v60_asm",
             "inconv2dbbb_s1_v60_asm", "inconv2dbbb332_v60_asm"]
C_FILES = sn.C_FILES
ASM = sn.ASM
HEADERS = sn.HEADERS
HARNESS = "harness_supernode_input.c"
INCLUDES = sn.INCLUDES


def body(nnlib: pathlib.Path) -> str:
    """As op_supernode's: the OS stand-ins, three helpers from src/ verbatim, then the whole op_supernode_new.c."""
    return sn.body(nnlib)


def _input_case(rng: np.random.Generator, t: int, din: int | None = None) -> dict:
    """op_supernode's random case with the input depth 1-4 (the graph's input: 3 most often) and no VTCM."""
    c = sn._case(rng, t)
    c["din"] = din or int(rng.choice([1, 2, 3, 3, 3, 4]))
    c["x"] = rng.integers(0, 256, (c["b"], c["h"], c["w"], c["din"]), dtype=np.uint8)
    c["f"] = rng.integers(0, 256, (c["fh"], c["fw"], c["din"], c["dout"]), dtype=np.uint8)
    c["vtcm"] = 0
    return c


def _built(h: int, w: int, din: int, fw: int, sw: int, x: np.ndarray, wcode: int, wrange: tuple[float, float],
           bias: int, in_max: float = 1.0) -> dict:
    """A hand-built node (no random draws): one batch, a 1 x ``fw`` filter of ``wcode`` at stride 1 x ``sw``,
    VALID, 2 output channels with the qint32 ``bias`` code (range +-1), input range [0, ``in_max``] (zero code 0),
    an auto output range, run twice."""
    return {"b": 1, "h": h, "w": w, "din": din, "fh": 1, "fw": fw, "dout": 2, "sh": 1, "sw": sw, "pad": sn.PAD_VALID,
            "bias32": 1, "n_in": 12, "vtcm": 0, "nruns": 2,
            "ranges": np.array([0, in_max, *wrange, -1, 1, -np.inf, np.inf], F), "x": x.reshape(1, h, w, din),
            "f": np.full((1, fw, din, 2), wcode, np.uint8), "bias": np.full(2, bias, np.int32), "scales": None}


def built_cases() -> list[dict]:
    """Four nodes whose auto range shows what ``shortin_supernode_execute_hvx_slice`` takes in (the engine's
    :mod:`hexnn_import.ops.kernels.input_supernode`): a 1x1 conv over 5 columns of negative products and a bias of
    +0.5, whose only positive values are the 3 width-padding columns of its last vector (bias alone); a 1 x 2 conv at
    stride 2 over 4 columns (``inconv2dbbb_v60_asm``) whose only nonzero value is column 2's, which that kernel's
    maximum loses (``recip_shamt`` 0); the same value in column 2 of a 1x1 conv at stride 1
    (``inconv2dbbb_s1_v60_asm``: counted); the stride-2 node on an input range [0, 10], whose first computation
    runs with ``recip_shamt`` 1 (the first guess caps the gain at 1.75), where the kernel counts column 2."""
    lost = np.zeros(8, np.uint8)
    lost[4:6] = 255
    kept = np.zeros(4, np.uint8)
    kept[2] = 255
    return [_built(2, 5, 3, 1, 1, np.full(30, 200, np.uint8), 128, (-1.0, 0.0), 2 ** 30),
            _built(1, 8, 1, 2, 2, lost, 255, (0.0, 1.0), 0), _built(1, 4, 1, 1, 1, kept, 255, (0.0, 1.0), 0),
            _built(1, 8, 1, 2, 2, lost, 255, (0.0, 1.0), 0, 10.0)]


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (op_supernode's: batches 1-2, filters 1-3, strides 1-2 by 1-3, SAME / VALID,
    output depths 1-40, auto / fixed / narrow output ranges, channel scales on some; input depth 1-4).

    Edges: the image front ends real models use - 3x3 / 2 SAME on depth 3 to 8, 16, 32 and 33 channels over
    12x12 (MobileNet's, the selfie segmentation's), a 1x1 conv on depth 1, each input depth 1-4 at stride 1 and 2;
    refusals: an input depth of 5; then :func:`built_cases`."""
    out = []
    for din in (1, 2, 3, 4):
        for s in (1, 2):
            c = _input_case(rng, 0, din)
            c["sh"], c["sw"] = s, s
            out.append(c)
    for dout in (8, 16, 32, 33):
        c = _input_case(rng, 1, 3)
        c.update(h=12, w=12, fh=3, fw=3, sh=2, sw=2, pad=sn.PAD_SAME, dout=dout)
        c["x"] = rng.integers(0, 256, (c["b"], 12, 12, 3), dtype=np.uint8)
        c["f"] = rng.integers(0, 256, (3, 3, 3, dout), dtype=np.uint8)
        c["bias"] = np.resize(c["bias"], dout)
        if c["scales"] is not None:
            c["scales"] = np.resize(c["scales"], dout)
        out.append(c)
    c = _input_case(rng, 2, 1)
    c.update(fh=1, fw=1, sh=1, sw=1)
    c["f"] = c["f"][:1, :1]
    out.append(c)
    c = _input_case(rng, 0, 4)
    c["din"] = 5
    c["x"] = rng.integers(0, 256, (c["b"], c["h"], c["w"], 5), dtype=np.uint8)
    c["f"] = rng.integers(0, 256, (c["fh"], c["fw"], 5, c["dout"]), dtype=np.uint8)
    out.append(c)
    return out + built_cases() + [_input_case(rng, t) for t in range(n)]


pack, unpack = sn.pack, sn.unpack


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list, int]:
    """(op, the engine's inputs, padding) for golden case ``i``: op_supernode's, the input plain."""
    return sn.case_inputs(g, i, OPS)


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    return sn.compare(gold, OPS)
