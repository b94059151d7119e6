"""QuantizedConv2d_8x8to32 on nnlib's device code (op_conv2d.c, whole): cases, I/O, comparison.

nnlib registers ``conv2d_execute_ref`` for the op on the device too (``nn_ops_for_QuantizedConv2d_8x8to32``,
``#if 1``; ``conv2d_execute_hvx`` is marked unused): plain C, so the device row checks what the Hexagon build of
it computes - the float32 level sizes and range (``(max - min) / 255``, Hexagon's float division and multiplies),
``quantize_int``'s offsets, the wrapping int32 sums - on the engine's inputs. The file is compiled whole and
unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``), the node run by
``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_node

NAME = "conv2d"
OPS = ("QuantizedConv2d_8x8to32",)
SOURCE = "hexagon/ops/src/op_conv2d.c"
FUNCTIONS = ["conv2d_execute_ref (nn_ops_for_QuantizedConv2d_8x8to32)"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = ["hexagon/asm_src/nn_os_fast.S"]
HEADERS = ["quantize.h"]
HARNESS = "harness_node.c"
INCLUDES = [hvx_build.HERE / "include_os"]
ROWS = ("QuantizedConv2d_8x8to32_ref", "QuantizedConv2d_8x8to32_ref_edge_padding_NA_other_far_ranges")
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, then the whole op_conv2d.c and the harness's op table."""
    import op_common

    return op_common.os_body(nnlib, [], [SOURCE], mcmanager=False) + op_node.units(OPS)


def caps(op: int, ins: list[np.ndarray]) -> list[int]:
    """Output capacities: room for any output size the padding modes give, and the two range scalars."""
    b, h, w, _ = op_node.shape4(ins[0])
    fh, fw, _, dout = op_node.shape4(ins[1])
    return [4 * b * (h + fh) * (w + fw) * dout + 128, 4, 4]


def _range(rng: np.random.Generator) -> np.ndarray:
    kind = int(rng.integers(0, 8))
    if kind == 0:                                           # excludes 0 (quantize_int is not clamped)
        lo = F(rng.uniform(0.01, 5))
        return np.array([lo, lo + rng.uniform(0.01, 5)], F)
    if kind == 1:                                           # far
        m = F(2.0 ** rng.uniform(-20, 20))
        return np.array([-m * rng.uniform(0, 1), m], F)
    lo = -rng.uniform(0, 10)
    return np.array([lo, lo + rng.uniform(0.01, 20)], F)


def _case(rng: np.random.Generator) -> dict:
    b, h, w = int(rng.choice([1, 1, 2])), int(rng.integers(1, 10)), int(rng.integers(1, 10))
    din, dout = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    fh, fw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    rin, rw = _range(rng), _range(rng)
    ins = [rng.integers(0, 256, (b, h, w, din), dtype=np.uint8), rng.integers(0, 256, (fh, fw, din, dout), dtype=np.uint8),
           *(np.array(v, F).reshape(1, 1, 1, 1) for v in (*rin, *rw)), np.zeros((1, sh, sw, 1), np.int32)]
    return {"op": 0, "padding": int(rng.choice([1, 2])), "ins": ins, "caps": caps(0, ins), "runs": 1}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The portable-C golden rows' inputs (48: SAME / VALID / NA paddings, far ranges, ranges excluding 0, batches
    of 2), then ``n`` random nodes (1-9 x 1-9 inputs, 1-39 channels in and out, 1-5 x 1-5 filters, strides 1-3)."""
    out = [c for row in ROWS for c in op_node.portable_rows(row, {OPS[0]: 0}, caps)]
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the int32 sums, shape and float32 range bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (np.int32, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
