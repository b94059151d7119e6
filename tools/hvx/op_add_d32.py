"""QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32 / QuantizedMul_8x8to8_d32 on nnlib's device code (op_add_d32.c).

nnlib registers the three with ``addsub_d32_check`` and ``addsub_d32_execute_common`` (its own d32 loops: the HVX
add / sub / mul work functions per slice, the broadcast variants, the output range found from the data when not
given, and the rerun when it was too small). The whole file is compiled unedited with nnlib's own ``nn_graph.h``
(``include_os/``, ``graph_os_standin.c``), with ``tensor_copy_scaled.c`` and ``hvx_constants.c``. One node per case,
run 1-2 times on the same inputs. The engine's ops are the flat twins on the logical data.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "add_d32"
OPS = ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32")
SOURCE = "hexagon/ops/src/op_add_d32.c"
FUNCTIONS = ["addsub_d32_check", "addsub_d32_execute_common", "tensor_copy_scaled_d32",
             "check_compatible_elementwise_d32", "nn_tensor_out_prepare_normal_fromshape"]
C_FILES = ["hexagon/src/tensor_copy_scaled.c", "hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c",
           "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "scalemem_d32", "vmemcpy_h", "vmemset_h",
                                                               "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_add_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, helpers from src/shape_util.c (with its memcpy manager) and quantize.c verbatim, then the
    whole op_add_d32.c."""
    return op_common.os_body(nnlib, ["check_compatible_elementwise_d32", "nn_tensor_addressing_d32"], [SOURCE],
                             quantize=["adjust_minmax_for_zero_with_constraints"])


def range_kind(rng: np.random.Generator, kind: int) -> tuple[F, F]:
    """A random float32 input range of ``kind``: 0 any around 0, 1 from 0, 2 tiny, 3 wide."""
    if kind == 0:
        lo = F(-rng.uniform(0, 8))
        return lo, F(lo + rng.uniform(0.1, 16))
    if kind == 1:
        return F(0.0), F(rng.uniform(0.01, 10))
    if kind == 2:
        return F(-rng.uniform(0.001, 0.1)), F(rng.uniform(0.001, 0.1))
    return F(-rng.uniform(20, 200)), F(rng.uniform(20, 200))


def _case(rng: np.random.Generator, t: int) -> dict:
    op = t % 3
    a = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 5)), int(rng.integers(1, 10)), int(rng.integers(1, 80))]
    b = list(a)
    if t % 5 == 4:     # B broadcast to A: batches = height = 1 (d32 text), w and / or d of 1
        b = [1, 1, int(rng.choice([1, a[2]])), int(rng.choice([1, a[3]]))]
        if b == [1, 1, a[2], a[3]] and (a[0], a[1]) == (1, 1):
            b[3] = 1
    n_in = 6 if op == 2 else int(rng.integers(6, 9))
    ranges = [*range_kind(rng, int(rng.integers(0, 4))), *range_kind(rng, int(rng.integers(0, 4)))]
    omn, omx = F(-np.inf), F(np.inf)
    if n_in >= 7:
        omn = F(-rng.uniform(0, 10)) if rng.random() < 0.7 else F(0.0)
    if n_in == 8:
        omx = F(rng.uniform(0.01, 10))
    return {"op": op, "a": a, "b": b, "n_in": n_in, "nruns": int(rng.integers(1, 3)),
            "ranges": np.array([*ranges, omn, omx], F),
            "xa": rng.integers(0, 256, a, dtype=np.uint8), "xb": rng.integers(0, 256, b, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (equal operands, a zero-width range, 32 / 33 / 128 channels, a narrow fixed output range), ``n``
    random ones, then ``max(n, 200)`` single-value ones (:func:`_scalar_case`)."""
    out = []
    for t, mod in enumerate(("same", "zero_b", "d32", "d33", "d128", "narrow")):
        for op in range(3):
            c = _case(rng, 3 * t + op + 30)
            if mod == "same":
                c["b"], c["xb"], c["ranges"][2:4] = c["a"], c["xa"].copy(), c["ranges"][0:2]
            elif mod == "zero_b":
                c["ranges"][2:4] = (0.0, 0.0)
            elif mod in ("d32", "d33", "d128"):
                d = int(mod[1:])
                c["a"] = c["b"] = [1, 2, 3, d]
                c["xa"] = rng.integers(0, 256, c["a"], dtype=np.uint8)
                c["xb"] = rng.integers(0, 256, c["b"], dtype=np.uint8)
            elif op != 2:
                c["n_in"], c["ranges"][4:6], c["nruns"] = 8, (0.0, 1e-3), 2
            out.append(c)
    return out + [_case(rng, t) for t in range(n)] + [_scalar_case(rng, t) for t in range(max(n, 200))]


def _scalar_case(rng: np.random.Generator, t: int) -> dict:
    """A single-value operand (issue 36: h-swish's ``+ 3``, a float model's ``- 1``) on a tensor whose range is
    made at run time (a zero-crossing, one-sided or lopsided range, as QuantizeDownAndShrinkRange_32to8 gives),
    with no output end given (absent, or ``-inf`` / ``+inf``: ``mode_broadcast_1111``), or one end given (the
    general path); every 9th case the single value is A with both ends free (the device's A-to-B swap,
    ``op_subtract_rev``)."""
    op = int(rng.integers(0, 2))
    a = [1, int(rng.integers(1, 7)), int(rng.integers(1, 9)), int(rng.integers(1, 70))]
    kind = int(rng.integers(0, 4))
    lo = F(0.0) if kind == 1 else F(-rng.uniform(0.001, 12))
    hi = F(rng.uniform(0.001, 0.2)) if kind == 2 else F(rng.uniform(0.01, 12))
    pattern = t % 4
    if pattern == 0:          # + 3 as a float model holds it: code 255 on [0, 3]
        b_rng, b_code = (F(0.0), F(3.0)), 255
    elif pattern == 1:        # - 1: code 0 on [-1, 0]
        b_rng, b_code = (F(-1.0), F(0.0)), 0
    else:
        b_rng, b_code = range_kind(rng, int(rng.integers(0, 4))), int(rng.integers(0, 256))
    ends = [(6, -np.inf, np.inf), (7, -np.inf, np.inf), (8, -np.inf, np.inf), (8, -np.inf, np.inf),
            (8, -np.inf, float(rng.uniform(1, 20))), (7, float(-rng.uniform(0, 5)), np.inf)][t % 6]
    xa, xb = rng.integers(0, 256, a, dtype=np.uint8), np.array([b_code], np.uint8).reshape(1, 1, 1, 1)
    b = [1, 1, 1, 1]
    ranges = [lo, hi, *b_rng]
    if t % 9 == 4:            # the single value as A, both ends free (the engine's Add refuses A-to-B otherwise)
        a, b, xa, xb, ranges, ends = b, a, xb, xa, [*b_rng, lo, hi], (8, -np.inf, np.inf)
    return {"op": op, "a": a, "b": b, "n_in": ends[0], "nruns": int(rng.integers(1, 3)),
            "ranges": np.array([*ranges, ends[1], ends[2]], F), "xa": xa, "xb": xb}


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts += [struct.pack("<11i", c["op"], *c["a"], *c["b"], c["n_in"], c["nruns"]), c["ranges"].tobytes(),
                  c["xa"].tobytes(), c["xb"].tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict], dtype: type = np.uint8) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, shape A, shape B, n_inputs, nruns), its six ranges, the codes of A and B
    with offsets, the check status; per run (``run_case``) the status, output range, shape and codes (of
    ``dtype``)."""
    pos, check, run_case, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        check.append(struct.unpack_from("<i", out, pos)[0]); pos += 4
        for _ in range(c["nruns"]):
            pos, (rs, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos, dtype)
            codes.append(run_codes); run_case.append(i); status.append(rs); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([[c["op"], *c["a"], *c["b"], c["n_in"], c["nruns"]] for c in cases], np.int32),
            "ranges": np.stack([c["ranges"] for c in cases]).astype(F),
            "xa": np.concatenate([c["xa"].ravel() for c in cases]), "xa_off": op_common.offsets([c["xa"] for c in cases]),
            "xb": np.concatenate([c["xb"].ravel() for c in cases]), "xb_off": op_common.offsets([c["xb"] for c in cases]),
            "check": np.array(check, np.int32), "run_case": np.array(run_case, np.int32),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int, ops: tuple[str, ...] = OPS) -> tuple[str, list]:
    """(op, the engine's inputs) for golden case ``i``, both operands laid out as d32 with the defaults."""
    from hexnn_import.ops.d32 import to_d32

    h = g["hdr"][i]
    a = g["xa"][g["xa_off"][i]:g["xa_off"][i + 1]].reshape(h[1:5])
    b = g["xb"][g["xb_off"][i]:g["xb_off"][i + 1]].reshape(h[5:9])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    return ops[h[0]], [to_d32(a), to_d32(b), *s[:int(h[9]) - 2]]


def compare(gold: dict[str, np.ndarray], ops: tuple[str, ...] = OPS) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference), the
    engine running ``ops`` (by the case's op index)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    total, exact, first = 0, 0, ""
    for i in range(len(gold["hdr"])):
        op, ins = case_inputs(gold, i, ops)
        state: dict = {}
        for r in np.flatnonzero(gold["run_case"] == i):
            total += 1
            try:
                q, mn, mx = run_op(op, ins, state=state)
            except HexnnError as e:
                ok, msg = bool(gold["status"][r]), f"engine error {e}"
            else:
                q, dev, same, ok = op_common.d32_run(q, mn, mx, gold, r)
                d = (q.astype(np.int32) - dev) if q.shape == dev.shape else np.ones(1)
                msg = (f"status {gold['status'][r]}; {int((d != 0).sum())} codes differ (max {int(np.abs(d).max())}); "
                       f"range [{mn.reshape(-1)[0]}, {mx.reshape(-1)[0]}] vs [{gold['out_min'][r]}, {gold['out_max'][r]}]")
            exact += ok
            if not ok and not first:
                first = f"case {i} run {r} hdr {gold['hdr'][i].tolist()}: {msg}"
    return total, exact, first
