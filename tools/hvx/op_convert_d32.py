"""Convert_to_d32 and Convert_from_d32 on nnlib's device code (op_convert_d32.c, whole): cases, I/O, comparison.

nnlib registers ``convert_to_d32_execute`` (no check: the padding options through ``get_option`` - an option out of
range logs and takes the default -, ``tensor_out_prepare_padded_d32``, the HVX ``hvx_to_d32_core_*`` work items)
and ``convert_from_d32_check`` + ``convert_from_d32_execute`` (``plan_convert_from_d32``'s strategy: the HVX
copies or "packzilla" ``vrdelta`` collection, run a second time on the cached plan). The whole file is compiled
unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``); every buffer handed to the
device starts filled with a fixed byte, the d32 inputs' padding too (``harness_convert_d32.c``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "convert_d32"
OPS = ("Convert_to_d32", "Convert_from_d32")
SOURCE = "hexagon/ops/src/op_convert_d32.c"
FUNCTIONS = ["convert_to_d32_execute", "get_option", "hvx_conv_d32_work_func", "convert_from_d32_check",
             "convert_from_d32_execute", "plan_convert_from_d32", "hvx_convert_from_d32_work_function"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h",
                                           "from_d32_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_convert_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_addressing_d32`` / ``_16b`` and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_convert_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32", "nn_tensor_addressing_d32_16b"], [SOURCE])


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, opts: list[int] | None = None,
          n_in: int | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 9)), int(rng.integers(1, 20)),
                      int(rng.choice([1, 3, 8, 16, 24, 31, 32, 33, 40, 63, 64, 65, 96, 100, 128, 130]))]
    if op == 0:
        n_in = n_in or int(rng.choice([1, 1, 2, 3, 4, 5, 5]))
        opts = opts or [int(rng.choice([0, 0, 5])), int(rng.integers(0, 9)), int(rng.integers(0, 9)),
                        int(rng.choice([0, 1, 4, 4, 8]))]
    else:
        n_in = 1
        opts = opts or [int(rng.choice([0, 1, 4, 4])), int(rng.choice([0, 1, 2, 3, 4, 4, 5, 7])),
                        int(rng.choice([0, 0, 1, 4])), int(rng.choice([0] * 19 + [8]))]
    return {"hdr": [op, *shape, n_in, *opts], "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (each option count 1-5, out-of-range options -1 / 8 / 40 (the device takes the default), a right
    padding that would pass 7, depths 1 / 31 / 32 / 33 / 128, widths 1-9; d32 inputs with left padding 0-7, depth
    padding before the data, no top padding) and ``n`` random ones over both ops."""
    out = [_case(rng, 0, [1, 3, w, d], [0, 4, 0, 4], k) for w in (1, 2, 3, 4, 5, 9) for d in (1, 32, 33)
           for k in (1, 5)]
    out += [_case(rng, 0, [2, 3, 5, 40], o, 5) for o in ([0, 7, 7, 0], [0, 0, 0, 0], [31, 4, 0, 4], [-1, -1, -1, -1],
                                                         [40, 8, 8, 100], [0, 3, 6, 2], [0, 6, 7, 1])]
    out += [_case(rng, 1, [1, 3, w, d], [4, lft, rt, d0]) for w in (1, 3, 4, 5, 9, 16) for d in (1, 31, 32, 33, 128)
            for lft, rt, d0 in ((4, 0, 0), (1, 0, 0))]
    out += [_case(rng, 1, [2, 2, 7, 40], o) for o in ([0, 0, 0, 0], [4, 7, 4, 0], [1, 2, 1, 8], [4, 4, 0, 31],
                                                       [4, 3, 0, 5])]
    return out + [_case(rng, int(rng.integers(0, 2))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, n_in, opt[4]), the input codes (``x`` / ``x_off``), the
    status, the d32 output's paddings (``pads``: top, bottom, left, right, before, after), the output shape, the
    logical output codes (``out`` / ``offsets``), and for from_d32 ``rerun_same`` (its second run equal)."""
    pos, status, pads, shapes, res, same = 0, [], [], [], [], []
    for c in cases:
        st, *pd = struct.unpack_from("<7i", out, pos); pos += 28
        recs = []
        for _ in range(1 if c["hdr"][0] == 0 else 2):
            start = pos
            _, _, _, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
            pos += int(np.prod(shp))
            recs.append((shp, out[start:pos]))
        shp, rec = recs[0]
        res.append(np.frombuffer(rec, np.uint8, len(rec) - 28, 28).copy())
        status.append(st); pads.append(pd); shapes.append(shp)
        same.append(len(recs) == 1 or rec == recs[1][1])
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "pads": np.array(pads, np.int32),
            "out_shape": np.array(shapes, np.int32), "out": np.concatenate(res), "offsets": op_common.offsets(res),
            "rerun_same": np.array(same, bool)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list]:
    """The op and the engine's inputs for case ``i``: to_d32 the codes and its options; from_d32 the d32 tensor
    laid out with the case's paddings, padding bytes the harness's fixed byte."""
    from hexnn_import.ops.d32 import to_d32

    op, b, h, w, d, n_in, *opt = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    if op == 0:
        return OPS[0], [x, *(np.full((1, 1, 1, 1), v, np.int32) for v in opt)][:n_in]
    top, left, rmin, d0 = opt
    right = (-(w + left + rmin)) % 4 + rmin
    return OPS[1], [to_d32(x, top=top, bottom=top, left=left, right=right, before=d0, fill=0x5A)]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (logical codes and shape; to_d32 also the six paddings; or both
    refuse), and a message."""
    name, outs, err = op_common.run_case(g, i, case_inputs)
    if outs is None:
        return bool(g["status"][i]), err
    (q,) = outs
    dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
    if name == "Convert_to_d32":
        pads = [q.top, q.bottom, q.left, q.right, q.before, q.after]
        q = q.logical()
        if pads != g["pads"][i].tolist():
            return False, f"{name}: paddings {pads} vs device {g['pads'][i].tolist()}"
    ok = not g["status"][i] and np.asarray(q).shape == dev.shape and np.array_equal(q, dev) and g["rerun_same"][i]
    return bool(ok), f"{name}: status {g['status'][i]}, shape {np.asarray(q).shape} vs {dev.shape}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
