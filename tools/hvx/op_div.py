"""QuantizedDiv_8 on nnlib's device code (op_div.c, whole): cases, I/O, comparison.

nnlib registers QuantizedDiv_8 with ``div_check`` (6 or 8 inputs, B of shape [1,1,1,d]) and ``div_execute``: a
scalar divisor with 6 inputs (``div_scalar_execute``: the range divided, codes copied or flipped to ``255 - x`` by
HVX ``flip_values``), with 8 (``div_scalar_static_minmax_execute``: a 256-code ``quantize_uint8`` table applied by
HVX ``map_values``), a 1-D divisor (``div_depthwise_execute``: one table per divisor, element i using divisor
``i mod d``, the range from A's ends unless static). The values are float32 C with ``a_min + (float)i * a_step``
contracted into one fused multiply-add by clang. The vendor file is compiled unedited with nnlib's own
``nn_graph.h``; the harness calls the registered ``check`` and then ``execute``.

    python3 tools/hvx/golden_hvx.py --nnlib /tmp/nnlib -n 300 --only op_div   # report only
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "div"
OPS = ("QuantizedDiv_8",)
SOURCE = "hexagon/ops/src/op_div.c"
FUNCTIONS = ["div_execute", "div_check", "div_scalar_execute", "div_scalar_static_minmax_execute",
             "div_depthwise_execute", "map_values", "flip_values"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast",)]
HEADERS: list[str] = []
HARNESS = "harness_div.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins and src/shape_util.c's ``nn_tensor_copy`` verbatim, then the whole op_div.c."""
    return op_common.os_body(nnlib, ["nn_tensor_out_prepare_normal_fromshape", "nn_tensor_copy"], [SOURCE],
                             mcmanager=False)


#: (A's shape, B's depth, inputs, A's range, B's range, static range, B's codes or None for random ones) of the
#: edge cases: a positive / negative / zero scalar; sizes 1, 127-129, 255-257 (the HVX loops' whole vectors);
#: static ranges with either sign; per-channel divisors with the range from A's ends or static, one of them 0,
#: a B depth other than A's; A's range without 0; 7 inputs (div_check refuses).
EDGE: list[tuple] = [
    ((1, 1, 1, 5), 1, 6, (-1.0, 3.0), (0.0, 2.0), (0.0, 0.0), [64]),
    ((1, 1, 1, 127), 1, 6, (-1.0, 3.0), (-2.0, 1.0), (0.0, 0.0), [3]),
    ((1, 1, 1, 128), 1, 6, (-1.0, 3.0), (-2.0, 1.0), (0.0, 0.0), [3]),
    ((1, 1, 1, 129), 1, 6, (-1.0, 3.0), (-2.0, 1.0), (0.0, 0.0), [3]),
    ((1, 1, 3, 85), 1, 6, (0.0, 6.0), (-2.0, 0.0), (0.0, 0.0), [200]),
    ((1, 1, 1, 257), 1, 6, (-4.0, 4.0), (-1.0, 0.9921875), (0.0, 0.0), [128]),
    ((1, 1, 1, 1), 1, 8, (-1.0, 3.0), (0.0, 2.0), (-2.0, 6.0), [64]),
    ((1, 1, 1, 128), 1, 8, (-1.0, 3.0), (0.0, 2.0), (-1.0, 1.0), [64]),
    ((1, 1, 1, 255), 1, 8, (-1.0, 3.0), (-2.0, 1.0), (-6.0, 2.0), [10]),
    ((1, 1, 1, 256), 1, 8, (-1.0, 3.0), (-2.0, 1.0), (-6.0, 2.0), [10]),
    ((1, 1, 2, 150), 1, 8, (1.0, 5.0), (0.5, 2.0), (0.0, 10.0), [0]),
    ((1, 2, 2, 3), 3, 6, (-1.0, 3.0), (-2.0, 2.0), (0.0, 0.0), [0, 200, 255]),
    ((1, 2, 5, 8), 8, 6, (0.0, 3.0), (0.1, 2.0), (0.0, 0.0), None),
    ((1, 2, 2, 32), 32, 8, (-1.0, 3.0), (-2.0, 2.0), (-3.0, 3.0), None),
    ((1, 1, 2, 3), 3, 6, (-1.0, 3.0), (-1.0, 0.9921875), (0.0, 0.0), [0, 128, 255]),
    ((1, 1, 2, 3), 3, 8, (-1.0, 3.0), (-1.0, 0.9921875), (-1.0, 1.0), [0, 128, 255]),
    ((1, 1, 3, 6), 4, 6, (-1.0, 3.0), (0.5, 4.0), (0.0, 0.0), None),
    ((1, 1, 1, 4), 1, 7, (-1.0, 3.0), (0.5, 4.0), (-1.0, 1.0), [3]),
]


def _range(rng: np.random.Generator, zero: bool = True) -> tuple[F, F]:
    """A float32 range: holding 0 (sometimes at an end) or, with ``zero`` False, one side of it."""
    r = rng.random()
    if not zero and r < 0.3:
        lo, hi = sorted(rng.uniform(0.05, 10, 2))
        return (F(lo), F(hi)) if rng.random() < 0.5 else (F(-hi), F(-lo))
    if r < 0.45:
        return F(0.0), F(rng.uniform(0.05, 10))
    return F(-rng.uniform(0.05, 10)), F(rng.uniform(0.05, 10))


def _case(shp, bd, nin, ar, br, sr, b) -> dict:  # type: ignore[no-untyped-def]
    return {"hdr": [*shp, bd, nin], "ranges": np.array([*ar, *br, *sr], F), "a": None, "b": b}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random ones: scalar or 1-D divisor (depth A's or, one in eight, another),
    6 or 8 inputs, 1 to 1,400 elements, ranges with or without 0."""
    cases = []
    for shp, bd, nin, ar, br, sr, b in EDGE:
        c = _case(shp, bd, nin, ar, br, sr, b)
        c["a"] = rng.integers(0, 256, shp, dtype=np.uint8)
        c["b"] = np.array(b, np.uint8) if b is not None else rng.integers(0, 256, bd, dtype=np.uint8)
        cases.append(c)
    for i in range(n):
        depth = int(rng.integers(1, 40))
        shp = (1, int(rng.integers(1, 4)), int(rng.integers(1, 12)), depth)
        kind = i % 4
        bd = 1 if kind < 2 else (depth if rng.random() < 0.875 else int(rng.integers(2, 40)))
        nin = 6 if kind % 2 == 0 else 8
        c = _case(shp, bd, nin, _range(rng, False), _range(rng, False), _range(rng), None)
        c["a"] = rng.integers(0, 256, shp, dtype=np.uint8)
        c["b"] = rng.integers(0, 256, bd, dtype=np.uint8)
        cases.append(c)
    return cases


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "a", "b")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (A's shape, B's depth, inputs), ranges (A, B, static), A / B codes
    (offsets), status, output range, shape and codes."""
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["ranges"] for c in cases]),
            "a": np.concatenate([c["a"].ravel() for c in cases]), "a_off": op_common.offsets([c["a"] for c in cases]),
            "b": np.concatenate([c["b"].ravel() for c in cases]), "b_off": op_common.offsets([c["b"] for c in cases]),
            **op_common.read_d32_runs(out, len(cases))}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's 6, 7 or 8 inputs for case ``i``."""
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    h = g["hdr"][i]
    a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(h[:4])
    b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(1, 1, 1, h[4])
    return [a, b, *(s(v) for v in g["ranges"][i][:h[5] - 2])]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    dev = lambda i: gold["codes"][gold["offsets"][i]:gold["offsets"][i + 1]].astype(np.int64)
    return op_common.count_exact(
        len(gold["hdr"]), lambda i: op_common.engine_case(OPS[0], case_inputs(gold, i), gold, i, dev(i), show_range=True),
        lambda i: f" {gold['hdr'][i].tolist()} ranges {gold['ranges'][i].tolist()}")
