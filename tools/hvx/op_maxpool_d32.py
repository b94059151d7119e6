"""QuantizedMaxPool_8_d32 on nnlib's device code (op_maxpool_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``maxpool_execute`` (no check): the asm slices ``maxpool_slice_hvx_2x2_stride2`` /
``_3x3_stride1`` / ``_3x3_stride2`` for those windows, the rolling-buffer path with src/hmaxpool_d32.c's HVX
horizontal max (``nn_hmaxpool_select_function``) otherwise, its own padding zap. The whole file is compiled unedited
with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). The output range is the input range.
"""
from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

import hvx_build
import numpy as np
import op_common

if TYPE_CHECKING:
    from hexnn_import.ops.d32 import D32Tensor

NAME = "maxpool_d32"
OPS = ("QuantizedMaxPool_8_d32",)
SOURCE = "hexagon/ops/src/op_maxpool_d32.c"
FUNCTIONS = ["maxpool_execute", "maxpool_execute_worker", "maxpool_execute_rollbuf_worker", "maxpool_zap_worker",
             "maxpool_slice_hvx_2x2_stride2", "maxpool_slice_hvx_3x3_stride1", "maxpool_slice_hvx_3x3_stride2",
             "nn_hmaxpool_select_function", "padzap_part"]
C_FILES = ["hexagon/src/hmaxpool_d32.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("maxpool_d32", "maxpool_3x3s2_d32", "nn_os_fast", "padzap_d32", "vmemset_h",
                                          "vmemcpy_h")]
HEADERS: list[str] = []
HARNESS = "harness_maxpool_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
PAD_SAME, PAD_VALID = 1, 2


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``nn_tensor_addressing_d32`` (src/shape_util.c) verbatim, the whole op_maxpool_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32"], [SOURCE], mcmanager=False)


def _case(rng: np.random.Generator, t: int) -> dict:
    kind = t % 4
    if kind == 0:
        wh, ww, sh, sw = 2, 2, 2, 2
    elif kind == 1:
        wh, ww, sh, sw = 3, 3, 1 + (t // 4) % 2, 1 + (t // 4) % 2
    else:
        wh, ww, sh, sw = (*(int(v) for v in rng.integers(1, 6, 2)), *(int(v) for v in rng.integers(1, 4, 2)))
    pad = PAD_SAME if rng.random() < 0.6 else PAD_VALID
    b, h, w, d = int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 14)), int(rng.integers(1, 80))
    if pad == PAD_VALID:
        h, w = max(h, wh), max(w, ww)
    lo = F(-rng.uniform(0, 5))
    return {"hdr": [b, h, w, d, wh, ww, sh, sw, pad], "range": np.array([lo, lo + F(rng.uniform(0.1, 10))], F),
            "x": rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)}


def _left_case(rng: np.random.Generator, t: int) -> dict:
    """Case ``t`` of the left-padding set: left padding ``t % 8``; the first 48 each asm window (2x2 / 2, 3x3 / 1,
    3x3 / 2) with SAME and VALID on every left padding, then the window cycling through those and any 1-5 by 1-5 /
    1-3; every padding byte random, as a producer leaves them."""
    c = _case(rng, (t // 8) % 4)
    _, h, w, _, wh, ww, sh, sw, pad = c["hdr"]
    if t < 48:
        wh, ww, sh, sw = ((2, 2, 2, 2), (3, 3, 1, 1), (3, 3, 2, 2))[(t // 8) % 3]
        pad = (PAD_SAME, PAD_VALID)[t // 24]
    b, d = int(rng.choice([1, 1, 2])), int(rng.integers(1, 41))
    c["hdr"] = [b, min(max(h, 2), 7), min(max(w, 2), 12), d, wh, ww, sh, sw, pad, t % 8]
    if pad == PAD_VALID:
        c["hdr"][1:3] = [max(c["hdr"][1], wh), max(c["hdr"][2], ww)]
    c["x"] = rng.integers(0, 256, tuple(c["hdr"][:4]), dtype=np.uint8)
    c["buf"] = _layout(c["x"], t % 8, rng)
    c["random_pad"] = True
    return c


def _layout(x: np.ndarray, left: int, rng: np.random.Generator | None) -> np.ndarray:
    """The d32 buffer the harness reads: left padding ``left``, top / bottom 4, padding random (``rng``) or 0."""
    from hexnn_import.ops.d32 import to_d32

    t = to_d32(x, left=left)
    return t.fill_padding(rng).data if rng is not None else t.data


LEFT_CASES = 160


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (each fast window on 32 / 33 / 64 channels, a 1x1 window, a window as large as the input) and
    ``n`` random ones (a quarter 2x2 / 2, a quarter 3x3 / 1 or 2, half any window 1-5, stride 1-3), all with the
    default layout (left padding 4, padding bytes 0); then ``LEFT_CASES`` with left padding 0-7 and random padding
    bytes (:func:`_left_case`)."""
    out = []
    for t, (wh, ww, sh, sw) in enumerate(((2, 2, 2, 2), (3, 3, 1, 1), (3, 3, 2, 2), (1, 1, 1, 1), (4, 5, 1, 1))):
        for d in (32, 33, 64):
            c = _case(rng, 2)
            b, h, w = c["hdr"][:3]
            h, w = max(h, wh), max(w, ww)
            c["hdr"] = [b, h, w, d, wh, ww, sh, sw, c["hdr"][8]]
            c["x"] = rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)
            out.append(c)
    out += [_case(rng, t) for t in range(n)]
    for c in out:
        c["hdr"] = [*c["hdr"], 4]
        c["buf"] = _layout(c["x"], 4, None)
    return out + [_left_case(rng, t) for t in range(LEFT_CASES)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "buf")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (b, h, w, d, window h, w, stride h, w, padding), the input's ``left``
    padding, the input range, the input codes (``x`` / ``x_off``), its whole d32 buffer (``buf`` / ``buf_off``),
    the status, the output range and shape, the codes (``codes`` / ``offsets``)."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
        codes.append(run_codes); status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"][:9] for c in cases], np.int32),
            "left": np.array([c["hdr"][9] for c in cases], np.int32),
            "random_pad": np.array(["random_pad" in c for c in cases], bool),
            "buf": np.concatenate([c["buf"].ravel() for c in cases if "random_pad" in c]),
            "buf_off": op_common.offsets([c["buf"] for c in cases if "random_pad" in c]),
            "range": np.stack([c["range"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[list, int]:
    """(the engine's inputs, padding) for case ``i``: the input as the d32 buffer the device read."""
    wh, ww, sh, sw, pad = (int(v) for v in g["hdr"][i][4:])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i]]
    return [d32_input(g, i), *s, np.zeros((1, wh, ww, 1), np.int32), np.zeros((1, sh, sw, 1), np.int32)], pad


def d32_input(g: dict[str, np.ndarray], i: int) -> D32Tensor:
    """Case ``i``'s input: its codes with padding bytes 0 (``to_d32``), or where ``random_pad`` its recorded d32
    buffer (``buf``: left padding ``left``, right the least making a multiple of 4, top / bottom 4, random
    padding bytes)."""
    from hexnn_import.ops.d32 import D32Tensor, to_d32

    b, h, w, d = (int(v) for v in g["hdr"][i][:4])
    left = int(g["left"][i])
    if not g["random_pad"][i]:
        return to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d), left=left)
    k = int(g["random_pad"][:i].sum())
    right, nd = (-(w + left)) & 3, (d + 31) // 32
    buf = g["buf"][g["buf_off"][k]:g["buf_off"][k + 1]].reshape(b, h + 8, nd, left + w + right, 32).copy()
    return D32Tensor(buf, (b, h, w, d), 4, 4, left, right, 0, nd * 32 - d)


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        ins, pad = case_inputs(gold, i)
        try:
            q, mn, mx = run_op("QuantizedMaxPool_8_d32", ins, padding=pad)
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        else:
            q, dev, same, ok = op_common.d32_run(q, mn, mx, gold, i)
            msg = f"status {gold['status'][i]} shape {q.shape} vs {dev.shape}; range same {same}"
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
