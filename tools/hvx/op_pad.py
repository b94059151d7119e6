"""QuantizedPad_8, QuantizedPad_V2_8 and QuantizedPad_u16 on nnlib's device code (op_pad.c, whole): cases, I/O,
comparison.

nnlib registers the flat pads with an execute only: ``pad_q_execute`` (the float pad value's code, refused past
-2..257 or, with input 5 set, outside the range; +-inf as 0 / 255), ``pad_q_v2_execute`` (a quint8 pad code),
``pad_q16_execute`` (a quint16 code, refused 1536 codes past the range), each ``pad_generic_execute``: the pads
back-filled onto b, h, w, d (depth padding too), batches by ``do_pad_batch`` and the rest by ``do_pad_edge_hvx``
with the memcpy manager's HVX fills and 2-D copies (asm ``vmemset_h`` / ``vmemcpy_2d_h`` / ``vmemset_2d_h``). The
whole file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib
import struct

import numpy as np
import op_common
import op_pad_d32

NAME = "pad"
OPS = ("QuantizedPad_8", "QuantizedPad_V2_8", "QuantizedPad_u16")
SOURCE = "hexagon/ops/src/op_pad.c"
FUNCTIONS = ["pad_q_execute", "pad_q_v2_execute", "pad_q16_execute", "pad_generic_execute", "do_pad_batch",
             "do_pad_edge_hvx"]
C_FILES = op_pad_d32.C_FILES
ASM = op_pad_d32.ASM
HEADERS = ["quantize.h"]
HARNESS = "harness_pad.c"
INCLUDES = op_pad_d32.INCLUDES
F = np.float32
EL = (np.uint8, np.uint8, np.uint16)


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_pad.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE])


def _osize(op: int, shape: list[int], pads: list[int]) -> int:
    rows = len(pads) // 2
    pairs = [(0, 0)] * max(0, 4 - rows) + [(max(pads[2 * i], 0), max(pads[2 * i + 1], 0)) for i in range(min(rows, 4))]
    return int(np.prod([n + lo + hi for n, (lo, hi) in zip(shape, pairs)])) * (2 if op == 2 else 1) + 128


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, pads: list[int] | None = None,
          n_in: int | None = None, run: list[float] | None = None, flag: int = 0, qpad: int | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 1, 2])), int(rng.integers(1, 8)), int(rng.integers(1, 12)),
                      int(rng.integers(1, 80))]
    if pads is None:
        rows = int(rng.integers(1, 5))
        vals = rng.integers(0, 4, (rows, 2)) * (rng.random((rows, 2)) < 0.7)
        if rows == 4 and rng.random() < 0.7:
            vals[0] = 0
        pads = [int(v) for v in vals.ravel()]
    n_in = n_in or (5 if op == 1 else int(rng.choice([4, 5, 5, 6] if op == 0 else [4, 5, 5])))
    r = op_pad_d32._range(rng)
    run = run or [*r, op_pad_d32._pad_value(rng, r)]
    flag = flag or int(n_in == 6 and rng.random() < 0.5)
    qpad = int(rng.integers(0, 256)) if qpad is None else qpad
    info = np.iinfo(EL[op])
    hdr = [op, *shape, n_in, len(pads) // 2, 2, flag, qpad, _osize(op, shape, pads)]
    return {"hdr": hdr, "pads": np.array(pads, np.int32), "run": np.array(run, F),
            "x": rng.integers(0, int(info.max) + 1, shape, dtype=EL[op])}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases per op (depth 1 / 31 / 32 / 33 / 64 / 128 with left / right width padding; depth padding; batch
    padding; 1-4 pad rows; +-inf, NaN, far-out and just-out pad values; a zero-width range; refusals: a negative pad,
    a pads tensor of depth 1, a pad value outside the range with input 5 set) and ``n`` random ones over the three."""
    out = []
    for op in (0, 1, 2):
        out += [_case(rng, op, [1, 2, w, d], [0, 0, t, 0, lft, rt, 0, 0]) for d in (1, 31, 32, 33, 64, 128)
                for w, t, lft, rt in ((1, 1, 1, 0), (3, 2, 2, 2), (5, 1, 4, 1))]
        out += [_case(rng, op, [2, 3, 4, 40], p) for p in ([0, 0, 3, 2, 0, 0, 1, 5], [1, 2, 1, 0, 0, 1, 0, 0],
                                                           [0, 0, 0, 0, 0, 0, 31, 33])]
        out += [_case(rng, op, [1, 3, 4, 20], p) for p in ([0, 0], [2, 1, 0, 0], [1, 0, 2, 3, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1])]
        out += [_case(rng, op, [1, 2, 3, 8], p) for p in ([0, 0, 1, -1, 0, 0, 0, 0],)]
        c = _case(rng, op, [1, 2, 3, 8], [0, 0, 1, 1, 0, 0, 0, 0])
        c["hdr"][7] = 1
        out.append(c)
    for v in (np.inf, -np.inf, np.nan, 100.0, -100.0, 3.05, -1.02, 3.01, -1.015):
        out += [_case(rng, op, [1, 2, 3, 33], [1, 1, 1, 1, 0, 0], n_in=5, run=[-1.0, 3.0, v]) for op in (0, 2)]
    out += [_case(rng, 0, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0], n_in=k, run=[1.5, 1.5, 0.0]) for k in (4, 5)]
    out += [_case(rng, 0, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0], n_in=6, run=[-1.0, 3.0, v], flag=1) for v in (0.5, 3.5)]
    return out + [_case(rng, int(rng.choice([0, 0, 1, 2]))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts += [struct.pack("<11i", *c["hdr"]), c["run"].tobytes(), c["pads"][:c["hdr"][6] * c["hdr"][7]].tobytes(),
                  c["x"].tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, n_in, rows, pads_depth, flag, qpad, osize), the range and
    pad value sent (``run``), the pads (``pads`` / ``pads_off``), the input as bytes (``x`` / ``x_off``), the status,
    output range and shape, the output bytes (``out`` / ``offsets``)."""
    runs, _ = op_common.read_byte_runs(out, [np.dtype(EL[c["hdr"][0]]).itemsize for c in cases])
    xs = [c["x"].view(np.uint8).ravel() for c in cases]
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "run": np.stack([c["run"] for c in cases]),
            "pads": np.concatenate([c["pads"] for c in cases]), "pads_off": op_common.offsets([c["pads"] for c in cases]),
            "x": np.concatenate(xs), "x_off": op_common.offsets(xs), **runs}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list[np.ndarray]]:
    """The op and the engine's inputs for case ``i`` (the pads tensor as the harness declares it, [1, 1, rows,
    depth])."""
    op, b, h, w, d, n_in, rows, pdepth, flag, qpad, _ = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(EL[op]).reshape(b, h, w, d)
    pads = g["pads"][g["pads_off"][i]:g["pads_off"][i + 1]][:rows * pdepth].reshape(1, 1, rows, pdepth)
    lo, hi, value = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["run"][i])
    fifth = np.full((1, 1, 1, 1), qpad, np.uint8) if op == 1 else value
    return OPS[op], [x, lo, hi, pads, fifth, np.full((1, 1, 1, 1), flag, np.int32)][:n_in]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (output bytes, shape and range bit for bit; or both refuse)."""
    name, outs, err = op_common.run_case(g, i, case_inputs)
    if outs is None:
        return bool(g["status"][i]), err
    q, mn, mx = outs
    dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]]
    same = (F(mn.reshape(-1)[0]).tobytes() == g["out_min"][i].tobytes()
            and F(mx.reshape(-1)[0]).tobytes() == g["out_max"][i].tobytes())
    q = np.ascontiguousarray(q)
    ok = (not g["status"][i] and same and list(q.shape) == g["out_shape"][i].tolist()
          and q.view(np.uint8).tobytes() == dev.tobytes())
    return ok, f"{name}: status {g['status'][i]}, range same {same}, shape {list(q.shape)} vs {g['out_shape'][i].tolist()}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
