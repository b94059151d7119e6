"""QuantizedEqual_8 ... QuantizedGreaterEqual_8 on nnlib's device code (op_compare_8.c, whole): cases, I/O.

nnlib registers the six comparisons with ``compare_execute``: on a vector thread, equal input ranges compare the
codes (``check_prepare_hvx_opt``, then the HVX ``compare_hvx_*`` for same shapes and the broadcasts it takes);
different ranges dequantize both inputs with op_quantize.c's HVX ``hvx_do_dequantize`` (step
``fmaxf(1e-4, flt_div_255(max - min))``, zero ``saturate_u8(roundf_i32(-min / step))``) and compare the float32
values; what the HVX path does not take goes through src/broadcast.c ``nn_elementwise_with_broadcast``. The
vendor file is compiled unedited with nnlib's own ``nn_graph.h``, src/broadcast.c whole beside it.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "compare"
OPS = ("QuantizedEqual_8", "QuantizedNotEqual_8", "QuantizedLess_8", "QuantizedLessEqual_8", "QuantizedGreater_8",
       "QuantizedGreaterEqual_8")
SOURCE = "hexagon/ops/src/op_compare_8.c"
FUNCTIONS = ["compare_execute", "qcompare_thread_process", "compare_hvx_template", "hvx_do_dequantize",
             "hvx_dequantize_128xb", "hvx_dequantize_64xh", "nn_check_prepare_hvx_opt", "nn_elementwise_with_broadcast"]
C_FILES = ["hexagon/src/broadcast.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("vmemcpy_h", "vmemset_h", "nn_os_fast")]
HEADERS: list[str] = []
HARNESS = "harness_compare.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, op_quantize.c's HVX dequantize functions verbatim, then the whole op_compare_8.c."""
    return (f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + '#include "hvx_inlines.h"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/ops/src/op_quantize.c",
                                          ["hvx_dequantize_64xh", "hvx_dequantize_128xb", "hvx_do_dequantize"])
            + f'#include "{nnlib / SOURCE}"\n')


def _range(rng: np.random.Generator) -> tuple[F, F]:
    """A float32 range holding 0 (the engine refuses one without, SEMANTICS 1): below and above, or from 0."""
    lo = F(-rng.uniform(0.01, 8)) if rng.random() < 0.85 else F(0.0)
    return lo, F(rng.uniform(0.01, 16))


def _shapes(rng: np.random.Generator) -> tuple[tuple, tuple]:
    full = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 70)))
    k = rng.random()
    if k < 0.4:
        part = full
    elif k < 0.6:
        part = (1, 1, 1, full[3])
    elif k < 0.7:
        part = (1, 1, 1, 1)
    else:
        part = tuple(v if rng.random() < 0.5 else 1 for v in full)
    return (full, part) if rng.random() < 0.5 else (part, full)


def _edges(rng: np.random.Generator) -> list[dict]:
    """Ranges under 0.0255 wide (the device floors the step at 1e-4) alike and against a wider one, every op on
    each; a range twice the other (values meet exactly); a scalar operand."""
    out = []
    specs = [((-0.005, 0.005), (-0.005, 0.005)), ((-0.005, 0.005), (-1.0, 1.0)), ((-0.01, 0.002), (-0.02, 0.004)),
             ((-1.0, 1.0), (-2.0, 2.0))]
    for k, (ar, br) in enumerate(specs):
        for op in range(6):
            sa = sb = (1, 2, 3, 40)
            if k == 3 and op % 2:
                sa = (1, 1, 1, 1)
            out.append({"hdr": [op, *sa, *sb], "ranges": np.array([*ar, *br], F),
                        "a": rng.integers(0, 256, sa, dtype=np.uint8), "b": rng.integers(0, 256, sb, dtype=np.uint8)})
    return out


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random cases: each op, same ranges (the HVX code compare) or different ones (dequantized floats; a
    third of them with one range a multiple of the other, so values meet exactly), broadcasts of every kind."""
    cases = _edges(rng)
    for i in range(n):
        sa, sb = _shapes(rng)
        ar = _range(rng)
        k = rng.random()
        br = ar if k < 0.35 else ((F(ar[0] * 2), F(ar[1] * 2)) if k < 0.55 else _range(rng))
        cases.append({"hdr": [i % 6, *sa, *sb], "ranges": np.array([*ar, *br], F),
                      "a": rng.integers(0, 256, sa, dtype=np.uint8), "b": rng.integers(0, 256, sb, dtype=np.uint8)})
    return cases


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "a", "b")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, a shape, b shape), ranges, a / b codes with offsets, status, shape and
    the device's 0 / 1 codes."""
    pos, status, shapes, codes = 0, [], [], []
    for _ in cases:
        pos, (st, _lo, _hi, shp), c = op_common.read_d32_run(out, pos)
        status.append(st); shapes.append(shp); codes.append(c)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["ranges"] for c in cases]),
            "a": np.concatenate([c["a"].ravel() for c in cases]), "a_off": op_common.offsets([c["a"] for c in cases]),
            "b": np.concatenate([c["b"].ravel() for c in cases]), "b_off": op_common.offsets([c["b"] for c in cases]),
            "status": np.array(status, np.int32), "out_shape": np.array(shapes, np.int32),
            "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's six inputs for case ``i``."""
    h = g["hdr"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(h[1:5])
    b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(h[5:9])
    return [a, b, *(s(v) for v in g["ranges"][i])]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - or both refuse -, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        op = OPS[gold["hdr"][i][0]]
        dev = gold["codes"][gold["offsets"][i]:gold["offsets"][i + 1]].reshape(gold["out_shape"][i])
        try:
            q = run_op(op, case_inputs(gold, i))[0]
            ok = not gold["status"][i] and q.shape == dev.shape and np.array_equal(q, dev)
            msg = f"{int((q != dev).sum()) if q.shape == dev.shape else 'shape'} differ"
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        exact += ok
        if not ok and not first:
            first = f"case {i} {op} {gold['hdr'][i].tolist()} ranges {gold['ranges'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
