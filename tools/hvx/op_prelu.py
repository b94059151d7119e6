"""QuantizedPRelu_8 on nnlib's device code (op_prelu.c ``prelu_execute_hvx``): cases, harness I/O, golden arrays.

nnlib registers the flat op with ``prelu_execute_hvx``: one alpha goes to ``prelu_scalar_alpha`` /
``hvx_prelu_scalar_alpha``, one per depth to ``prelu_1D_alpha`` (``hvx_float2_u16``, ``do_hvx_quant_frac_offst``,
``hvx_intr_prelu_circ``, asm ``vmemcpy_asm``); the HVX core ``prelu_1d_intrinsic`` multiplies by an 8-bit ``frac >> 8``. All run
unedited (``graph_standin.h`` for the graph runtime). The engine follows the portable ``prelu_execute``
(``QuantizedPRelu_8_ref``: a 16-bit ``frac``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "prelu"
OPS = ("QuantizedPRelu_8",)
SOURCE = "hexagon/ops/src/op_prelu.c"
FUNCTIONS = ["prelu_1d_intrinsic", "float_to_u16", "hvx_float2_u16", "do_hvx_quant_frac_offst", "hvx_intr_prelu_circ",
             "prelu_1D_alpha", "hvx_prelu_scalar_alpha", "prelu_scalar_alpha", "prelu_execute_hvx"]
ASM = ["hexagon/asm_src/vmemcpy_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_prelu.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: ``nn_tensor_copy`` (src/shape_util.c), op_prelu.c's sizes, ``struct tdata_prelu`` and ``pad_and_align``, its
    vector macros, ``struct tdata_float2u16`` and the functions."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_copy"])
            + hvx_build.extract_span(src, r"^#define MAX_THREAD \(2\)", r"^}$")
            + hvx_build.extract_span(src, r"^#define concat_vec\(", r"^\s*result =  Q6_V_valign_VVR\(fr_ping, fr_pong, circ_res\);\\\n}")
            + hvx_build.extract_items(src, ["tdata_float2u16"])
            + hvx_build.extract_functions(src, FUNCTIONS))


def _alphas(rng: np.random.Generator, d: int) -> np.ndarray:
    """Alphas in [0, 1] (0, 1 and 2**-k among them), sometimes one out of range (the C's error)."""
    a = rng.uniform(0, 1, d).astype(np.float32)
    k = rng.random()
    if k < 0.2:
        a[rng.integers(0, d)] = rng.choice([0.0, 1.0, 0.5, 0.25, 1 / 256, 255 / 256])
    elif k < 0.25:
        a[rng.integers(0, d)] = rng.choice([-0.1, 1.5])
    return a


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(shape, alphas, in_min, in_max, codes): every code with alphas 0, 1/256, 0.3, 0.5, 255/256, 1 (scalar and per
    depth), then ``n`` random cases (depth 1..300, sizes to 6,000+ elements: the two-thread split)."""
    cases = []
    allc = np.arange(256, dtype=np.uint8)
    for a in (0.0, 1 / 256, 0.3, 0.5, 255 / 256, 1.0):
        cases.append(((1, 1, 1, 256), np.array([a], F), F(-1), F(1), allc))
        cases.append(((1, 1, 256, 1), np.array([a], F), F(-3), F(1), allc))
        cases.append(((1, 1, 1, 256), np.full(256, a, F), F(-1), F(2), allc))
    for i in range(n):
        d = int(rng.choice([1, int(rng.integers(2, 40)), int(rng.integers(40, 300))]))
        rows = int(rng.integers(1, 8000 // d + 2)) if i % 10 == 0 else int(rng.integers(1, 2000 // d + 2))
        shape = (1, 1, rows, d)
        lo = F(-rng.uniform(0, 1) * 10 ** rng.uniform(-2, 2)) if rng.random() < 0.9 else F(rng.uniform(0.1, 1))
        hi = F(abs(lo) * rng.uniform(0.05, 5)) if lo < 0 else F(lo + 1)
        da = 1 if rng.random() < 0.4 else d
        cases.append((shape, _alphas(rng, da), lo, hi, rng.integers(0, 256, rows * d, dtype=np.uint8)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for shape, a, lo, hi, x in cases:
        parts += [struct.pack("<5i2f", *shape, a.size, lo, hi), x.tobytes(), a.astype("<f4").tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: codes in / out concatenated with ``offsets``, alphas with ``a_off``; per case shape, range,
    status (0 ok, 1 the C's error: an alpha outside [0, 1]) and the device's output range."""
    return {"a_off": op_common.offsets([c[1] for c in cases]), "shape": op_common.column(cases, 0, np.int32),
            "alpha": np.concatenate([c[1] for c in cases]), "in_min": op_common.column(cases, 2, F),
            "in_max": op_common.column(cases, 3, F), "data": np.concatenate([c[4] for c in cases]),
            **op_common.read_results(out, [c[4].size for c in cases])}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off, ao = gold["offsets"], gold["a_off"]

    def case(i: int) -> tuple[bool, str]:
        x = gold["data"][off[i]:off[i + 1]].reshape(gold["shape"][i])
        a = gold["alpha"][ao[i]:ao[i + 1]].reshape(1, 1, 1, -1)
        ins = [x, gold["in_min"][i].reshape(1, 1, 1, 1), gold["in_max"][i].reshape(1, 1, 1, 1), a]
        return op_common.engine_case("QuantizedPRelu_8", ins, gold, i, gold["codes"][off[i]:off[i + 1]])

    return op_common.count_exact(len(off) - 1, case,
                                 lambda i: f" shape={gold['shape'][i].tolist()} alphas={ao[i + 1] - ao[i]}")
