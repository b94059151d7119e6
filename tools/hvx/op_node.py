"""What the op modules on ``harness_node.c`` share (issue 36): one flat node of a vendor op file compiled whole, its
check() then execute() ``runs`` times; the stdin of its cases, the golden arrays of its records, the edge cases of
a portable-C golden row (``tests/data/golden/nnlib/<row>.npz``, whose inputs the device runs too) and the
comparison of a run with the engine (``run_op``), outputs and float32 ranges bit for bit or both refusing.

A case is a dict: ``op`` (index into the module's ``OPS``), ``padding`` (``NN_PAD_*``), ``ins`` (numpy arrays:
uint8, uint16, int32 or float32, each with up to 4 dimensions), ``caps`` (bytes each output may hold), ``runs``, optionally
``oshapes`` (each output's (b, h, w, d) as its definition gives it, which some ops read; zeros otherwise).
"""
from __future__ import annotations

import json
import pathlib
import struct
from collections.abc import Sequence

import hvx_build
import numpy as np
import op_common

F = np.float32
NNLIB_GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "golden" / "nnlib"
#: numpy dtype -> (nnlib's NN_TYPE_* value, element size): nn_graph_types.h's enum.
NN_TYPE = {np.dtype(np.uint8): (2, 1), np.dtype(np.int32): (7, 4), np.dtype(np.float32): (8, 4),
           np.dtype(np.uint16): (6, 2)}


#: what an op module on ``harness_node.c`` over one whole vendor op file builds with (quantize.c, the OS and pipe
#: stand-ins, the memcpy manager's asm); a module adds the C files its op needs to :data:`NODE_C_FILES`
NODE_C_FILES = ("hexagon/src/quantize.c", "hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c",
                "hexagon/src/nn_pipe_portable.c")
NODE_ASM = tuple(f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h",
                                                      "vmemset_2d_h", "quantize_h"))
NODE_HEADERS = ("quantize.h",)
NODE_INCLUDES = (hvx_build.HERE / "include_os",)


def node_body(nnlib: pathlib.Path, source: str, ops: Sequence[str]) -> str:
    """The OS stand-ins, src/shape_util.c's run from the memcpy manager on, the whole ``source`` and the op
    table of ``ops``."""
    return op_common.os_body(nnlib, [], [source]) + units(ops)


def units(ops: Sequence[str]) -> str:
    """The ``HX_NODE_OPS`` / ``HX_NODE_TYPES`` lines ``harness_node.c`` takes, for the registered ``ops``."""
    return (f"#define HX_NODE_OPS {{{', '.join(f'&nn_ops_for_{o}' for o in ops)}}}\n"
            f"#define HX_NODE_TYPES {{{', '.join(f'OP_{o}' for o in ops)}}}\n")


def shape4(a: np.ndarray) -> list[int]:
    """``a``'s shape as nnlib's (b, h, w, d): leading ones added."""
    return [1] * (4 - a.ndim) + list(a.shape)


def pack(cases: Sequence[dict]) -> bytes:
    """``harness_node.c``'s stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        shapes = c.get("oshapes") or [[0, 0, 0, 0]] * len(c["caps"])
        parts.append(struct.pack("<5i", c["op"], c["padding"], len(c["ins"]), len(c["caps"]), c["runs"]))
        parts += [struct.pack("<5i", cap, *shp) for cap, shp in zip(c["caps"], shapes)]
        for a in c["ins"]:
            t, k = NN_TYPE[a.dtype]
            parts += [struct.pack("<6i", t, k, *shape4(a)), np.ascontiguousarray(a).tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: Sequence[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, padding, n_in, n_out, runs); per input (all cases in order) its dtype
    code (``in_type``: 0 uint8, 1 int32, 2 float32, 3 uint16), ``in_shape`` and bytes (``in_bytes`` / ``in_off``); per run
    (cases in order, ``runs`` each) its ``status``; per output of a run ``out_shape`` and bytes (``out_bytes`` /
    ``out_off``)."""
    pos, status, oshape, obytes = 0, [], [], []
    for c in cases:
        for _ in range(c["runs"]):
            st, = struct.unpack_from("<i", out, pos); pos += 4
            status.append(st)
            for _ in c["caps"]:
                *shp, n = struct.unpack_from("<5i", out, pos); pos += 20
                oshape.append(shp); obytes.append(np.frombuffer(out, np.uint8, n, pos).copy()); pos += n
    op_common.check_end(out, pos)
    ins = [a for c in cases for a in c["ins"]]
    codes = {np.dtype(np.uint8): 0, np.dtype(np.int32): 1, np.dtype(np.float32): 2, np.dtype(np.uint16): 3}
    ib = [np.ascontiguousarray(a).view(np.uint8).ravel() for a in ins]
    return {"hdr": np.array([[c["op"], c["padding"], len(c["ins"]), len(c["caps"]), c["runs"]] for c in cases],
                            np.int32),
            "in_type": np.array([codes[a.dtype] for a in ins], np.int32),
            "in_shape": np.array([shape4(a) for a in ins], np.int32),
            "in_bytes": np.concatenate(ib), "in_off": op_common.offsets(ib),
            "status": np.array(status, np.int32), "out_shape": np.array(oshape, np.int32).reshape(-1, 4),
            "out_bytes": np.concatenate(obytes) if obytes else np.zeros(0, np.uint8),
            "out_off": op_common.offsets(obytes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The inputs of golden case ``i``, as the device read them."""
    first = int(g["hdr"][:i, 2].sum())
    out = []
    for k in range(first, first + int(g["hdr"][i, 2])):
        dt = (np.uint8, np.int32, np.float32, np.uint16)[int(g["in_type"][k])]
        raw = g["in_bytes"][g["in_off"][k]:g["in_off"][k + 1]]
        out.append(raw.view(dt).reshape(g["in_shape"][k]))
    return out


def run_outputs(g: dict[str, np.ndarray], i: int, r: int = 0) -> tuple[int, list[tuple[list[int], np.ndarray]]]:
    """Run ``r`` of case ``i``: (its status, per output (shape, bytes))."""
    run = int(g["hdr"][:i, 4].sum()) + r
    first = int((g["hdr"][:i, 3] * g["hdr"][:i, 4]).sum()) + r * int(g["hdr"][i, 3])
    outs = [(g["out_shape"][k].tolist(), g["out_bytes"][g["out_off"][k]:g["out_off"][k + 1]])
            for k in range(first, first + int(g["hdr"][i, 3]))]
    return int(g["status"][run]), outs


def portable_rows(row: str, op_index: dict[str, int], caps) -> list[dict]:
    """The cases of the portable-C golden row ``row`` (its inputs and padding), for this module's ``op_index``;
    ``caps(op, inputs)`` gives the output capacities."""
    with np.load(NNLIB_GOLDEN / f"{row}.npz") as z:
        meta = json.loads(str(z["meta"]))
        out = []
        for i, c in enumerate(meta["cases"]):
            ins = [np.ascontiguousarray(z[f"c{i}_in{k}"]) for k in range(c["n_in"])]
            op = op_index[c["op"]]
            out.append({"op": op, "padding": int(c["kw"].get("padding", 0)), "ins": ins, "caps": caps(op, ins),
                        "runs": 1})
    return out


def engine_run(op: str, g: dict[str, np.ndarray], i: int, out_dtypes: Sequence[type], r: int = 0,
               state: dict | None = None) -> tuple[bool, str]:
    """Whether the engine's ``op`` on case ``i``'s inputs (its padding) gives run ``r``'s outputs: every output's
    shape and bytes (``out_dtypes`` per output), or both refuse."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    st, dev = run_outputs(g, i, r)
    try:
        got = run_op(op, case_inputs(g, i), padding=int(g["hdr"][i, 1]), state=state)
    except HexnnError as e:
        return st != 0, f"status {st}, engine error {e}"
    if st:
        return False, f"device status {st}, the engine runs"
    msgs, ok = [], True
    for k, ((shp, raw), dt) in enumerate(zip(dev, out_dtypes)):
        q = np.ascontiguousarray(np.asarray(got[k], dt))
        want = raw.view(dt)
        same_shape = q.size == want.size and list(shape4(q.reshape(q.shape or (1,)))) == shp
        same = same_shape and q.view(np.uint8).tobytes() == raw.tobytes()
        if not same:
            ok = False
            if q.size == want.size:
                bits = {np.uint8: np.uint8, np.uint16: np.uint16}.get(dt, np.int32)
                d = np.flatnonzero(q.reshape(-1).view(bits) != want.view(bits))
                msgs.append(f"output {k}: {d.size} of {want.size} differ (first at {d[:1].tolist()}: engine "
                            f"{q.reshape(-1)[d[:1]].tolist()} device {want[d[:1]].tolist()}), shape same {same_shape}")
            else:
                msgs.append(f"output {k}: shape engine {list(q.shape)} device {shp}")
    return ok, "; ".join(msgs)


def count(g: dict[str, np.ndarray], case) -> tuple[int, int, str]:
    """``op_common.count_exact`` over every case, labelled by op and input shapes."""
    return op_common.count_exact(len(g["hdr"]), case,
                                 lambda i: f" op {int(g['hdr'][i, 0])} pad {int(g['hdr'][i, 1])} "
                                           f"{[a.shape for a in case_inputs(g, i)]}")
