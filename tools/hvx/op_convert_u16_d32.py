"""Convert_to_d32_16b / Convert_from_d32_16b on nnlib's device code (op_convert_d32.c ``convert_to_d32_16b``,
``convert_from_d32_16b``, ``get_option``; the memcpy manager of src/shape_util.c).

Per case a flat 16-bit tensor goes to 16-bit d32 with 1-5 inputs (options in and out of their ranges: an option out
of range takes its default, input 1 is ignored) and back; the harness writes the d32 output's shape, paddings and
type, its stored bytes, and the flat result. The engine's Convert_to_d32_16b is compared on the paddings, the
logical data and the depth padding lanes (written as 0 by both); the other padding bytes are not written by the
device and not compared. Width totals the device makes that are not a multiple of 4 (a left + right padding under
3), which the engine's d32 tensors do not hold, are refused by the engine: those cases count as refusals.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "convert_u16_d32"
OPS = ("Convert_to_d32_16b", "Convert_from_d32_16b")
SOURCE = "hexagon/ops/src/op_convert_d32.c"
FUNCTIONS = ["get_option", "convert_to_d32_16b", "convert_from_d32_16b"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_convert_u16_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 addressing helper and the memcpy manager of src/shape_util.c verbatim, then the
    three functions of op_convert_d32.c verbatim."""
    shape_util = nnlib / "hexagon/src/shape_util.c"
    return (f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n'
            + hvx_build.extract_functions(shape_util, ["nn_tensor_addressing_d32_16b"])
            + hvx_build.extract_span(shape_util, r"^void nn_mcmanager_init",
                                     r"^// 'actual function' version of this inline", inclusive=False)
            + hvx_build.extract_functions(nnlib / SOURCE, FUNCTIONS))


def _case(rng: np.random.Generator, shape: list[int] | None = None, n_in: int | None = None,
          opts: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 6)), int(rng.integers(1, 12)),
                      int(rng.integers(1, 80))]
    n_in = n_in if n_in is not None else int(rng.choice([1, 1, 2, 3, 4, 5]))
    if opts is None:
        opts = [int(rng.integers(0, 32)), int(rng.integers(0, 8)), int(rng.integers(0, 8)), int(rng.integers(0, 9))]
        if rng.random() < 0.15:
            opts[int(rng.integers(1, 4))] = int(rng.choice([-1, 9, 40]))
    kind = int(rng.random() < 0.2)
    return {"hdr": [*shape, n_in, *opts, kind], "x": rng.integers(0, 65536, shape, dtype=np.uint16)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (depth 1 / 31 / 32 / 33 / 64 with widths 1-8 on the defaults; left 0-7 with each minimum right;
    top / bottom 0 and 8; options out of range) and ``n`` random ones."""
    out = [_case(rng, [1, 2, w, d], 1) for d in (1, 31, 32, 33, 64) for w in (1, 2, 3, 4, 5, 8)]
    out += [_case(rng, [1, 2, 5, 40], 4, [0, lft, rmin, 4]) for lft in range(8) for rmin in (0, 3, 7)]
    out += [_case(rng, [2, 3, 4, 20], 5, [5, 4, 0, t]) for t in (0, 8, 9, -2)]
    out += [_case(rng, [1, 1, 3, 8], 3, [0, v, 0, 0]) for v in (-1, 8, 100)]
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (shape, n_inputs, options, type), the input codes (``x`` / ``x_off``), the to-d32
    status, format (shape, paddings, type), the logical data and depth padding lanes read from the stored bytes
    (``d32`` / ``d32_off``, ``dpad`` / ``dpad_off``), the from-d32 status, type and flat result (``back``)."""
    pos, st, fmt, d32, dpad, st2, bt, back = 0, [], [], [], [], [], [], []
    for c in cases:
        s1, = struct.unpack_from("<i", out, pos); pos += 4
        f = list(struct.unpack_from("<11i", out, pos)); pos += 44
        size, = struct.unpack_from("<i", out, pos); pos += 4
        raw = np.frombuffer(out, np.uint16, size // 2, pos).copy(); pos += size
        b, h, w, d, top, bot, left, right, bef, aft, _ = f
        logical, lanes = np.zeros(0, np.uint16), np.zeros(0, np.uint16)
        if not s1:
            nd32 = (bef + d + aft) // 32
            arr = raw[:b * (top + h + bot) * nd32 * (left + w + right) * 32].reshape(b, top + h + bot, nd32,
                                                                                      left + w + right, 32)
            core = arr[:, top:top + h, :, left:left + w, :].transpose(0, 1, 3, 2, 4).reshape(b, h, w, nd32 * 32)
            logical, lanes = core[..., bef:bef + d].ravel(), core[..., bef + d:].ravel()
        s2, t2 = struct.unpack_from("<2i", out, pos); pos += 8
        n = int(np.prod(c["hdr"][:4])) if not s2 else 0
        back.append(np.frombuffer(out, np.uint16, n, pos).copy()); pos += 2 * n
        st.append(s1); fmt.append(f); d32.append(logical); dpad.append(lanes); st2.append(s2); bt.append(t2)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(st, np.int32), "format": np.array(fmt, np.int32),
            "d32": np.concatenate(d32), "d32_off": op_common.offsets(d32),
            "dpad": np.concatenate(dpad), "dpad_off": op_common.offsets(dpad),
            "back_status": np.array(st2, np.int32), "back_type": np.array(bt, np.int32),
            "back": np.concatenate(back), "back_off": op_common.offsets(back)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's Convert_to_d32_16b inputs of case ``i``: the flat codes (int16 for a QINT16 case), then the
    options the node has."""
    h = [int(v) for v in g["hdr"][i]]
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(h[:4])
    x = x.view(np.int16) if h[9] else x
    return [x, *[np.full((1, 1, 1, 1), v, np.int32) for v in h[5:9]]][:h[4]]


def case_exact(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (paddings, logical data, zero depth lanes, the flat result), or
    refuses where the device refused."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    f = [int(v) for v in g["format"][i]]
    try:
        (t,) = run_op("Convert_to_d32_16b", case_inputs(g, i))
    except HexnnError as e:
        return bool(g["status"][i]), f"engine refused: {e}"
    want_pad = (f[4], f[5], f[6], f[7], f[8], f[9])
    d = g["d32"][g["d32_off"][i]:g["d32_off"][i + 1]]
    lanes = g["dpad"][g["dpad_off"][i]:g["dpad_off"][i + 1]]
    logical = t.logical()
    eng_lanes = t.data[:, t.top:t.top + t.shape[1], :, t.left:t.left + t.shape[2], :].transpose(0, 1, 3, 2, 4)
    eng_lanes = eng_lanes.reshape(*t.shape[:3], -1)[..., t.shape[3]:].ravel()
    (back,) = run_op("Convert_from_d32_16b", [t])
    ok = (not g["status"][i] and t.padding == want_pad and np.array_equal(logical.view(np.uint16).ravel(), d)
          and np.array_equal(eng_lanes.view(np.uint16), lanes) and not g["back_status"][i]
          and np.array_equal(np.asarray(back).view(np.uint16).ravel(), g["back"][g["back_off"][i]:g["back_off"][i + 1]]))
    return ok, f"paddings {t.padding} vs {want_pad}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces or both refuse, first difference)."""
    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        ok, msg = case_exact(gold, i)
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
