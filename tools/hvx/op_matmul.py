"""QuantizedMatMul_8x8to32 and QuantizedMatMul_8x8to32_ref on nnlib's device code (op_matmul.c, whole).

Both registrations share ``matmul_check_ref`` (B padded and packed into ``self->opaque`` at check, ``pad2d`` /
``transpack``); ``QuantizedMatMul_8x8to32`` executes ``matmul_asm`` (``gemvmpybbw_asm`` on that packed copy when
A has one row or its depth is a multiple of 16, else ``matmul_ref``), ``QuantizedMatMul_8x8to32_ref`` executes
``matmul_ref`` (plain C on B as the node reads it at execute). ``harness_node.c`` gives B at check as at execute,
as a Const B is: the row checks both executes' arithmetic on the engine's inputs (the importers emit the plain op
for a Const B only, importers/nodes/matmul.py). The file is compiled whole and unedited with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_node

NAME = "matmul"
OPS = ("QuantizedMatMul_8x8to32", "QuantizedMatMul_8x8to32_ref")
SOURCE = "hexagon/ops/src/op_matmul.c"
FUNCTIONS = ["matmul_execute_asm, matmul_execute_ref, matmul_check_ref (nn_ops_for_QuantizedMatMul_8x8to32[_ref])"]
C_FILES = ["hexagon/src/pad2d.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("gemvmpybbw_h", "vmemcpy_h", "vmemset_2d_h", "vmemset_h", "vmemcpy_2d_h", "nn_os_fast")]
HEADERS = ["quantize.h"]
HARNESS = "harness_node.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, then the whole op_matmul.c and the harness's op table."""
    import op_common

    return op_common.os_body(nnlib, [], [SOURCE], mcmanager=False) + op_node.units(OPS)


def caps(op: int, ins: list[np.ndarray]) -> list[int]:
    """Output capacities: the int32 product and the two range scalars."""
    m = ins[0].size // ins[1].shape[2]
    return [4 * m * ins[1].shape[3] + 256, 4, 4]


def _range(rng: np.random.Generator) -> np.ndarray:
    kind = int(rng.integers(0, 6))
    if kind == 0:                                           # far
        m = F(2.0 ** rng.uniform(-20, 20))
        return np.array([-m * rng.uniform(0, 1), m], F)
    lo = -rng.uniform(0, 10)
    return np.array([lo, lo + rng.uniform(0.01, 20)], F)


def _case(rng: np.random.Generator, t: int) -> dict:
    """A [1,1,M,K] @ [1,1,K,N] node: one row or several, K a multiple of 16 or not, N up to 3 blocks of 32."""
    m = 1 if t % 3 == 0 else int(rng.integers(2, 40))
    k = int(rng.choice([16, 32, 48, 64])) if t % 2 else int(rng.integers(1, 80))
    n = int(rng.integers(1, 100))
    ins = [rng.integers(0, 256, (1, 1, m, k), dtype=np.uint8), rng.integers(0, 256, (1, 1, k, n), dtype=np.uint8),
           *(np.array(v, F).reshape(1, 1, 1, 1) for v in (*_range(rng), *_range(rng)))]
    op = t % 2 if t % 4 < 2 else 1 - t % 2
    return {"op": op, "padding": 0, "ins": ins, "caps": caps(op, ins), "runs": 1}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """``n`` random nodes per op (:func:`_case`)."""
    return [_case(rng, t) for t in range(2 * n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the int32 sums, shape and float32 range bit for bit."""
    return op_node.engine_run(OPS[int(g["hdr"][i, 0])], g, i, (np.int32, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
