"""QuantizedAdd_u16_d32 / QuantizedSub_u16_d32 on nnlib's device code (op_addsubmul16_d32.c, whole).

nnlib registers both with ``addsub16_d32_check`` and ``addsub_d32_execute_common``: ``setup_elementwise_strategy``
(the broadcast mode from ``check_compatible_elementwise_d32``, A and B swapped when A broadcasts onto B, a
subtraction then reversed), ``addsub_setup_scaling`` / ``set_addsub_scaling`` (the 16-bit zero codes and steps of
``get_qu16_level_size_zero``, the output step raised to 1/8192 of the larger input step, the two 15-bit gains, the
shift and the offset) and the HVX cores ``core_add_d32_{general,B11D,mixed}_hvx`` (u16 x u16 products, a halved
sum plus the offset, a rounding saturating shift to u16). The whole file is compiled unedited with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). One node per case, run 1-2 times on the same inputs;
both inputs laid out as prepare.c's Convert_to_d32_16b lays them out (``harness_u16_d32.h``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common
import op_add_d32

NAME = "add_u16_d32"
OPS = ("QuantizedAdd_u16_d32", "QuantizedSub_u16_d32")
SOURCE = "hexagon/ops/src/op_addsubmul16_d32.c"
FUNCTIONS = ["addsub16_d32_check", "addsub_d32_execute_common", "setup_elementwise_strategy", "make_chunk_descriptors",
             "addsub_setup_scaling", "set_addsub_scaling", "elementwise_d32_worker_func", "core_add_d32_hvx_inline",
             "check_compatible_elementwise_d32"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_add_u16_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, helpers from src/shape_util.c (with its memcpy manager) verbatim, then the whole
    op_addsubmul16_d32.c."""
    return op_common.os_body(nnlib, ["check_compatible_elementwise_d32", "nn_tensor_addressing_d32",
                                     "nn_tensor_addressing_d32_16b"], [SOURCE])


def _shapes(rng: np.random.Generator, t: int) -> tuple[list[int], list[int]]:
    a = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 5)), int(rng.integers(1, 10)), int(rng.integers(1, 80))]
    b = list(a)
    kind = t % 7
    if kind == 4:      # B broadcast on batches and height, w and / or d of 1 (B11D / mixed modes)
        b = [1, 1, int(rng.choice([1, a[2]])), int(rng.choice([1, a[3]]))]
    elif kind == 5:    # a [1,1,1,d] or scalar B
        b = [1, 1, 1, int(rng.choice([1, a[3]]))]
    elif kind == 6:    # A broadcast onto B (swapped: a subtraction is reversed)
        a, b = [1, 1, 1, int(rng.choice([1, a[3]]))], a
    return a, b


def _case(rng: np.random.Generator, t: int) -> dict:
    a, b = _shapes(rng, t)
    ra, rb = (op_add_d32.range_kind(rng, int(rng.integers(0, 4))) for _ in range(2))
    kind = int(rng.integers(0, 4))
    if kind == 0:      # the sum's (or difference's) own range
        span = (ra[1] - ra[0]) + (rb[1] - rb[0])
        lo = F(min(ra[0] + rb[0], ra[0] - rb[1], 0.0))
        ro = (lo, F(lo + span))
    elif kind == 1:    # a narrow output range (widened by the op when below 1/8192 of an input step)
        ro = (F(-rng.uniform(0, 1e-4)), F(rng.uniform(1e-5, 1e-3)))
    else:
        ro = op_add_d32.range_kind(rng, int(rng.integers(0, 4)))
    return {"op": t % 2, "a": a, "b": b, "n_in": 8, "nruns": int(rng.integers(1, 3)), "ranges": np.array([*ra, *rb, *ro], F),
            "xa": rng.integers(0, 65536, a, dtype=np.uint16), "xb": rng.integers(0, 65536, b, dtype=np.uint16)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (equal operands and ranges, a zero-width range, 1 / 32 / 33 / 128 channels, the extreme codes
    0 and 65535, a range without 0, an output range far wider than the inputs') and ``n`` random ones."""
    out = []
    for t, mod in enumerate(("same", "zero_b", "d1", "d32", "d33", "d128", "ends", "no_zero", "wide")):
        for op in range(2):
            c = _case(rng, 2 * t + op)
            if mod == "same":
                c["b"], c["xb"], c["ranges"][2:4] = c["a"], c["xa"].copy(), c["ranges"][0:2]
            elif mod == "zero_b":
                c["ranges"][2:4] = (0.0, 0.0)
            elif mod in ("d1", "d32", "d33", "d128"):
                d = int(mod[1:])
                c["a"] = c["b"] = [1, 2, 3, d]
                c["xa"] = rng.integers(0, 65536, c["a"], dtype=np.uint16)
                c["xb"] = rng.integers(0, 65536, c["b"], dtype=np.uint16)
            elif mod == "ends":
                c["xa"] = rng.choice(np.array([0, 65535], np.uint16), c["a"])
                c["xb"] = rng.choice(np.array([0, 65535], np.uint16), c["b"])
            elif mod == "no_zero":
                c["ranges"][0:2] = (0.5, 2.5)
            else:
                c["ranges"][4:6] = (-1e4, 1e4)
            out.append(c)
    return out + [_case(rng, t) for t in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin: :func:`op_add_d32.pack`'s layout, with uint16 codes."""
    return op_add_d32.pack(cases)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays as :func:`op_add_d32.unpack`, with uint16 codes of A, B and the output."""
    return op_add_d32.unpack(out, cases, np.uint16)


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list]:
    """(op, the engine's inputs) for golden case ``i``, both operands laid out as 16-bit d32 with the defaults."""
    return op_add_d32.case_inputs(g, i, OPS)


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """:func:`op_add_d32.compare` with the engine running the _u16_d32 ops."""
    return op_add_d32.compare(gold, OPS)
