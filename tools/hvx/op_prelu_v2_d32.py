"""QuantizedPRelu_8_V2_d32 on nnlib's device code (op_prelu_v2_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``prelu_opt_execute`` (the flat QuantizedPRelu_8_V2 has no execute function): the output
range from the alphas' range ends (``in_min * alpha_max``, ``fmaxf(in_max, in_min * alpha_min)``) or inputs 6 / 7,
``adjust_minmax_for_zero``; ``set_scaling``'s shifts and 31-bit gains; ``hvx_process_prelu`` per element. The whole
file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). The engine:
``hexnn_import/ops/nnlib_prelu_v2.py``. Ranges are sane (the engine refuses an input or alpha range without 0,
which the device computes with as given).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "prelu_v2_d32"
OPS = ("QuantizedPRelu_8_V2_d32",)
SOURCE = "hexagon/ops/src/op_prelu_v2_d32.c"
FUNCTIONS = ["prelu_opt_execute", "process_alphas", "set_scaling", "prelu_hvx_work_func", "hvx_process_prelu"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_prelu_v2_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 addressing of src/shape_util.c and quantize.c's ``adjust_minmax_for_zero``
    verbatim, then the whole op_prelu_v2_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32"], [SOURCE], mcmanager=False,
                             quantize=["adjust_minmax_for_zero"])


def _case(rng: np.random.Generator, shape: list[int] | None = None, rng_in: list[float] | None = None,
          rng_al: list[float] | None = None, n_range: int | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 8)), int(rng.integers(1, 12)),
                      int(rng.integers(1, 80))]
    lo = 0.0 if rng.random() < 0.1 else -rng.uniform(0.01, 8)
    rng_in = rng_in or [lo, rng.uniform(0.01, 12)]
    a_lo = 0.0 if rng.random() < 0.6 else -rng.uniform(0.01, 1.5)
    rng_al = rng_al or [a_lo, rng.uniform(0.01, 2.0)]
    n_range = int(rng.choice([0, 0, 0, 1, 2])) if n_range is None else n_range
    out = [-rng.uniform(0.05, 8), rng.uniform(0.05, 12)]
    return {"hdr": [*shape, n_range], "ranges": np.array([*rng_in, *rng_al, *out], F),
            "x": rng.integers(0, 256, shape, dtype=np.uint8),
            "alpha": rng.integers(0, 256, shape[3], dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (the hand example of tests/ops/test_activation.py: P = [-1, 2.984375], alphas on [0, 0.99609375],
    with and without an output range; a scale of exactly 1; an input range starting at 0; depths 1 / 31 / 32 / 33
    / 64; alpha codes all 0 / all 255) and ``n`` random ones (depth 1-79, batches 1-2, an output range given in 2 of
    5)."""
    p, a = [-1.0, 2.984375], [0.0, 0.99609375]
    out = [_case(rng, [1, 2, 4, 2], p, a, k) for k in (0, 2)]
    out += [_case(rng, [1, 3, 5, d]) for d in (1, 31, 32, 33, 64)]
    out += [_case(rng, [1, 2, 3, 8], [0.0, 4.0], n_range=0), _case(rng, [1, 2, 3, 8], [-2.0, 2.0], [0.0, 1.0], 0)]
    for v in (0, 255):
        c = _case(rng, [1, 2, 3, 16])
        c["alpha"][:] = v
        out.append(c)
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "x", "alpha")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (b, h, w, d, n_range), ``ranges`` (in, alpha, out min / max), the codes
    (``x`` / ``x_off``), the alphas (``alpha`` / ``a_off``), the status, output range, shape and codes."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
        codes.append(run_codes); status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["ranges"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "alpha": np.concatenate([c["alpha"] for c in cases]),
            "a_off": op_common.offsets([c["alpha"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the d32 data, its range, the alphas [1,1,1,d], their range, the output
    range ends given."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, d, n_range = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    al = g["alpha"][g["a_off"][i]:g["a_off"][i + 1]].reshape(1, 1, 1, d)
    r = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    return [x, r[0], r[1], al, r[2], r[3], *r[4:4 + n_range]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range, first difference)."""
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        q, mn, mx = run_op("QuantizedPRelu_8_V2_d32", case_inputs(gold, i), state={})
        eng, dev, same, ok = op_common.d32_run(q, mn, mx, gold, i)
        exact += ok
        if not ok and not first:
            nd = int((eng != dev).sum()) if eng.shape == dev.shape else -1
            first = (f"case {i} hdr {gold['hdr'][i].tolist()} ranges {gold['ranges'][i].tolist()}: range equal "
                     f"{same} ({float(mn.reshape(-1)[0])}, {float(mx.reshape(-1)[0])} vs {gold['out_min'][i]}, "
                     f"{gold['out_max'][i]}), {nd} codes differ")
    return len(gold["hdr"]), exact, first
