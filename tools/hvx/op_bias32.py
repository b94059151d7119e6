"""QuantizedBiasAdd_32p32to32 and QuantizedChannelScale_32xf on nnlib's device code (op_biasadd.c,
op_channelscale.c, whole): cases, I/O, comparison.

Both run Hexagon scalar intrinsics the portable C build has to model: ``biasadd_32p32to32_execute`` rescales the
bias by ``bias_level / in_level`` with ``fast_roundf`` (``convert_sf2w``: saturating, NaN -> -1) and adds word
pairs with ``Q6_P_vaddw_PP`` (wrapping), the range copied; ``channelscale_32xf_execute`` takes each scale as
``roundf_i32(sc * 2^28)`` and each product as ``Q6_R_sat_P(Q6_P_asrrnd_PI(Q6_P_mpy_RR(scale, x), 28))``, a scale of
exactly 1.0 broadcast copying the input. The vendor files are compiled whole, unedited, with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "bias32"
OPS = ("QuantizedBiasAdd_32p32to32", "QuantizedChannelScale_32xf")
SOURCE = "hexagon/ops/src/op_biasadd.c"
FUNCTIONS = ["biasadd_32p32to32_execute", "channelscale_32xf_execute (op_channelscale.c)"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = ["hexagon/asm_src/nn_os_fast.S"]
HEADERS = ["quantize.h"]
HARNESS = "harness_bias32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and ``nn_tensor_out_prepare_normal_fromshape``
    verbatim, then the whole op_biasadd.c and op_channelscale.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy", "nn_tensor_out_prepare_normal_fromshape"],
                             [SOURCE, "hexagon/ops/src/op_channelscale.c"], mcmanager=False)


def _range(rng: np.random.Generator) -> np.ndarray:
    m = F(2.0 ** rng.uniform(-8, 12))
    return np.array([-m, m], F) if rng.random() < 0.8 else np.array([-m * rng.uniform(0.1, 1), m], F)


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, k: int | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 6)), int(rng.integers(1, 9)),
                      int(rng.integers(1, 70))]
    k = k or (shape[3] if op == 0 or rng.random() < 0.8 else 1)
    big = rng.random() < 0.3
    x = rng.integers(-2 ** 31, 2 ** 31, shape, dtype=np.int64) if big else rng.integers(-2 ** 20, 2 ** 20, shape)
    if op == 0:
        side = rng.integers(-2 ** 31, 2 ** 31, k, dtype=np.int64) if rng.random() < 0.5 else rng.integers(-2 ** 16, 2 ** 16, k)
        side = side.astype(np.int32)
    else:
        side = rng.uniform(1e-4, 1.0, k).astype(F)
        if rng.random() < 0.2:
            side[rng.integers(0, k)] = 1.0
    return {"hdr": [op, *shape, k], "ranges": np.concatenate([_range(rng), _range(rng)]).astype(F),
            "x": x.astype(np.int32), "side": side}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (odd and even depths 1-9 with odd and even pixel counts, the paths of the word-pair loop; a bias
    range 2^20 times the input's (the rescaled bias saturates); equal ranges; scales 1.0 broadcast (the copy), 1.0
    per channel, just above 1, 0, negative, 2^-28 / 2^-29; extreme data) and ``n`` random ones over both ops."""
    out = [_case(rng, 0, [1, h, 1, d]) for d in range(1, 10) for h in (1, 2, 3)]
    c = _case(rng, 0, [1, 2, 3, 7])
    c["ranges"] = np.array([-1.0, 1.0, -2.0 ** 20, 2.0 ** 20], F)
    c["side"] = np.array([2 ** 31 - 1, -2 ** 31, 1, -1, 2 ** 20, -2 ** 20, 0], np.int32)
    out.append(c)
    c = _case(rng, 0, [1, 2, 3, 4])
    c["ranges"] = np.array([-3.0, 3.0, -3.0, 3.0], F)
    out.append(c)
    out += [_case(rng, 1, [1, h, 1, d]) for d in range(1, 6) for h in (1, 2)]
    for scales in ([1.0], [1.0, 1.0, 1.0], [1.00009, 0.5, 1e-9], [0.0, 0.5, -0.5], [2.0 ** -28, 2.0 ** -29, 0.75]):
        c = _case(rng, 1, [1, 2, 3, len(scales) if len(scales) > 1 else 5], len(scales))
        c["side"] = np.array(scales, F)
        out.append(c)
    c = _case(rng, 1, [1, 1, 2, 4], 4)
    c["x"] = np.array([2 ** 31 - 1, -2 ** 31, 2 ** 30, -1] * 2, np.int32).reshape(1, 1, 2, 4)
    c["side"] = np.array([1.0, 1.0, 0.999, 1.0001], F)
    out.append(c)
    return out + [_case(rng, int(rng.integers(0, 2))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "x", "side")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, k), ``ranges`` (in min, max, bias min, max), the int32 data
    (``x`` / ``x_off``), the bias or scales as 4-byte words (``side`` / ``side_off``), the status, output range and
    shape, the int32 output (``out`` / ``offsets``)."""
    pos, status, rmin, rmax, shapes, res = 0, [], [], [], [], []
    for _ in cases:
        st, lo, hi, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
        n = int(np.prod(shp))
        res.append(np.frombuffer(out, np.int32, n, pos).copy()); pos += 4 * n
        status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    sides = [c["side"].view(np.int32) for c in cases]
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["ranges"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "side": np.concatenate(sides), "side_off": op_common.offsets(sides), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, F), "out_max": np.array(rmax, F), "out_shape": np.array(shapes, np.int32),
            "out": np.concatenate(res), "offsets": op_common.offsets(res)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list]:
    """The op and the engine's inputs for case ``i``."""
    op, b, h, w, d, k = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    side = g["side"][g["side_off"][i]:g["side_off"][i + 1]]
    r = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    if op == 0:
        return OPS[0], [x, side.reshape(1, 1, 1, k), *r]
    return OPS[1], [x, side.view(F).reshape(1, 1, 1, k), r[0], r[1]]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (int32 data, shape and range bit for bit, or both refuse)."""
    name, outs, err = op_common.run_case(g, i, case_inputs)
    if outs is None:
        return bool(g["status"][i]), err
    q, mn, mx = outs
    q, dev, same, ok = op_common.flat_run(q, mn, mx, g, i, "out")
    nd = int((q.reshape(-1) != dev.reshape(-1)).sum()) if q.size == dev.size else -1
    return ok, f"{name}: status {g['status'][i]}, range same {same}, {nd} values differ"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
