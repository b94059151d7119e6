"""Supernode_8x8p32to8_d32 / Supernode_8x8p8to8_d32 on nnlib's device code (op_supernode_new.c, whole): cases, I/O.

nnlib registers the d32 supernodes with ``supernode_check`` (weights rearranged for the device: signed with a
per-channel scale on v66 with VTCM - ``repack_filter_for_d32`` -, unsigned otherwise; ``find_k_kinv``,
``setup_initial_output_range``) and ``supernode_execute_hvx`` (``supernode_recalculate_strategy_v66`` or
``supernode_recalculate_strategy``, the work items with the ``gvconv2dbbb_*`` / ``inconv2dbbb_*`` kernels, their
per-channel requantize and range, ``supernode_execute_workitem_check_for_retry`` and the recursive retries). The
whole file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/`` and ``graph_os_standin.c`` stand
in for the OS layer, single-threaded), with the assembly it calls. One node per case, run 1-3 times on the same
input (the range a run settles on persists, as in a graph). Only nnlib's v60 kernels run here (unsigned weights,
``supernode_recalculate_strategy``, ``gvconv2dbbb_v60_asm``): what a v60 / v65-without-VTCM device runs, and what a
v66 build runs for stride width 3 and up (``supernode_check``: ``if (stride_width > 2) use_v66 = 0``); those cases
have 256 KiB of VTCM, the rest none. The v66 kernels (``gvconv2dbbb*_v66_asm``) use the v66 Z register
(``z = vmem``, ``vrmpyz``), which qemu-hexagon 7.2 does not decode ("decode_packet: assertion failed").
The engine's ``Supernode_8x8p32to8_d32`` is its flat twin on the logical data.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "supernode"
OPS = ("Supernode_8x8p32to8_d32", "Supernode_8x8p8to8_d32")
SOURCE = "hexagon/ops/src/op_supernode_new.c"
#: The nnlib functions seen running (qemu -d in_asm), for the provenance; the whole file is compiled.
FUNCTIONS = ["supernode_check", "repack_filter_for_d32", "supernode_execute_hvx", "supernode_recalculate_strategy",
             "slice_for_cache", "supernode_compile_worklist", "supernode_execute_strategy",
             "supernode_execute_workitem_startwork", "supernode_execute_hvx_conv_work", "fill_info_minmax_basics",
             "fill_bias_buf", "supernode_execute_workitem_check_for_retry", "note_chunk_checkpoint_arrival",
             "note_alldone_checkpoint_arrival", "gvconv2dbbb_v60_asm", "gvint_asm", "gvsuma_asm", "gvrmaxmin",
             "padzap_part", "vmemset_asm", "vmemset_nt_asm", "adjust_minmax_for_zero_with_constraints"]
#: nnlib sources compiled whole beside the generated unit (which includes SOURCE whole).
C_FILES = ["hexagon/src/supernode_procweights.c", "hexagon/src/incopy_expand4.c", "hexagon/src/integral_control.c",
           "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in (
    "gvconv2dbbb_d32_v60_h", "gvconv2dbbb_d32_h_v66", "gvconv2dbbb_d16_s1f_h_v66", "gvconv2dbbb_d32_s1f_h_v66",
    "gvconv2dbbbs1x4_d32_h_v66", "gvint_h", "vrmaxmin_h", "gvsuma_h", "inconv2dbbb332_d32_v60_h",
    "inconv2dbbb_s1_d32_v60_h", "inconv2dbbb_d32_v60_h", "ivint_h", "nn_os_fast", "padzap_d32", "vmemset_h",
    "vmemset_nt_h")]
HEADERS: list[str] = []
HARNESS = "harness_supernode.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
PAD_SAME, PAD_VALID = 1, 2


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, three helpers from src/ (shape_util.c, quantize.c) verbatim, then the whole
    op_supernode_new.c (an ``#include`` of the vendor file, unedited); its other sources are linked whole."""
    return op_common.os_body(nnlib, ["memset_32", "nn_tensor_addressing_d32"], [SOURCE], mcmanager=False,
                             quantize=["adjust_minmax_for_zero_with_constraints"])


def _out_range(rng: np.random.Generator, t: int) -> tuple[F, F]:
    """The node's output range inputs (holding 0, as ``setup_initial_output_range`` requires): auto (+-inf) on either
    side, fixed, or fixed and narrow (the device retries with a wider range)."""
    kind = t % 6
    if kind == 0:
        return F(-np.inf), F(np.inf)
    if kind == 1:
        return F(0.0), F(np.inf)
    if kind == 2:
        return F(-np.inf), F(rng.uniform(0.01, 20))
    if kind == 3:
        return F(-rng.uniform(0, 20)), F(np.inf)
    if kind == 4:
        return F(-rng.uniform(0, 0.05)) if rng.random() < 0.5 else F(0.0), F(rng.uniform(0.001, 0.5))
    return F(-rng.uniform(0, 40)), F(rng.uniform(1, 40))


def _range(rng: np.random.Generator) -> tuple[F, F]:
    lo = F(-rng.uniform(0, 4)) if rng.random() < 0.8 else F(rng.uniform(0, 1))
    return lo, F(lo + rng.uniform(0.05, 6))


def _case(rng: np.random.Generator, t: int) -> dict:
    b = int(rng.choice([1, 1, 1, 2]))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    pad = PAD_SAME if rng.random() < 0.6 else PAD_VALID
    h = int(rng.integers(1, 4)) if pad == PAD_SAME else int(rng.integers(fh, fh + 3))
    w = int(rng.integers(1, 9)) if pad == PAD_SAME else int(rng.integers(fw, fw + 8))
    din, dout = int(rng.integers(1, 41)), int(rng.integers(1, 41))
    bias32 = int(t % 3 != 2)
    imn, imx = _range(rng)
    fmn, fmx = _range(rng)
    if bias32:
        bias = rng.normal(0, 2.0 ** rng.integers(4, 24), dout).clip(-2**31, 2**31 - 1).astype(np.int32)
        bmx = F(rng.uniform(1, 1e4) if t % 5 else rng.uniform(1e-3, 1))
        bmn = F(-bmx)
    else:
        bias = rng.integers(0, 256, dout, dtype=np.uint8)
        bmn, bmx = _range(rng)
    omn, omx = _out_range(rng, t)
    scales = None
    if t % 7 == 3:
        scales = rng.uniform(1.0 / 64, 1.0, dout).astype(F)
        scales[int(rng.integers(0, dout))] = F(1.0)
    return {"b": b, "h": h, "w": w, "din": din, "fh": fh, "fw": fw, "dout": dout, "sh": sh, "sw": sw, "pad": pad,
            "bias32": bias32, "n_in": 13 if scales is not None else 12, "vtcm": int(sw == 3),
            "nruns": int(rng.integers(1, 4)), "ranges": np.array([imn, imx, fmn, fmx, bmn, bmx, omn, omx], F),
            "x": rng.integers(0, 256, (b, h, w, din), dtype=np.uint8),
            "f": rng.integers(0, 256, (fh, fw, din, dout), dtype=np.uint8), "bias": bias, "scales": scales}


def _edges(rng: np.random.Generator) -> list[dict]:
    """Edge cases: a constant filter, the weights at their zero code (sum 0), 32 / 33 channels, a 1x1 conv over a
    single pixel, narrow fixed output ranges that force every retry; each at stride width 1 without VTCM and 3 with."""
    out = []
    for t, mod in enumerate(("const_f", "zero_f", "d32", "d33", "pixel", "narrow", "narrow_neg", "wide_w")):
        for sw in (1, 3):
            c = _case(rng, 1 + 6 * t)
            c["sw"], c["vtcm"] = sw, int(sw == 3)
            if mod == "const_f":
                c["f"][...] = c["f"].flat[0]
            elif mod == "zero_f":
                c["ranges"][2:4] = (-1.0, 1.0 * 255 / 128 - 1.0)
                c["f"][...] = 128
            elif mod in ("d32", "d33"):
                c["din"] = c["dout"] = 32 if mod == "d32" else 33
                c["x"] = rng.integers(0, 256, (c["b"], c["h"], c["w"], c["din"]), dtype=np.uint8)
                c["f"] = rng.integers(0, 256, (c["fh"], c["fw"], c["din"], c["dout"]), dtype=np.uint8)
                c["bias"] = np.resize(c["bias"], c["dout"])
            elif mod == "pixel":
                c.update(h=1, w=1, fh=1, fw=1, pad=PAD_VALID)
                c["x"] = c["x"][:, :1, :1]
                c["f"] = c["f"][:1, :1]
            elif mod in ("narrow", "narrow_neg"):
                c["ranges"][6:8] = (0.0, 1e-3) if mod == "narrow" else (-1e-3, 0.0)
                c["nruns"] = 3
            else:
                c["ranges"][2:4] = (-40.0, 40.0)
            out.append(c)
    return out


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random ones."""
    return _edges(rng) + [_case(rng, t) for t in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts.append(struct.pack("<14i", c["b"], c["h"], c["w"], c["din"], c["fh"], c["fw"], c["dout"], c["sh"],
                                 c["sw"], c["pad"], c["bias32"], c["n_in"], c["vtcm"], c["nruns"]))
        parts += [c["ranges"].astype(F).tobytes(), c["x"].tobytes(), c["f"].tobytes()]
        bias = c["bias"].astype(np.int32 if c["bias32"] else np.uint8).tobytes()
        parts.append(bias + b"\0" * (-len(bias) % 4))
        if c["n_in"] == 13:
            parts.append(c["scales"].astype(F).tobytes())
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case its header (``hdr``: b, h, w, din, fh, fw, dout, sh, sw, padding, bias32, n_inputs,
    vtcm, nruns), its eight ranges, input / weight / bias (int32) / channel-scale data with offsets, the check
    status and whether the v66 kernels ran; per run (``run_case`` names its case) the status, the output range,
    the output shape and the codes (``codes`` / ``offsets``)."""
    pos, check, v66, run_case, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        st, use = struct.unpack_from("<2i", out, pos); pos += 8
        check.append(st); v66.append(use)
        for _ in range(c["nruns"]):
            pos, (rs, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
            codes.append(run_codes); run_case.append(i); status.append(rs); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    keys = ("b", "h", "w", "din", "fh", "fw", "dout", "sh", "sw", "pad", "bias32", "n_in", "vtcm", "nruns")
    scales = [c["scales"] if c["scales"] is not None else np.zeros(0, F) for c in cases]
    return {"hdr": np.array([[c[k] for k in keys] for c in cases], np.int32),
            "ranges": np.stack([c["ranges"] for c in cases]).astype(F),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "f": np.concatenate([c["f"].ravel() for c in cases]), "f_off": op_common.offsets([c["f"] for c in cases]),
            "bias": np.concatenate([c["bias"].astype(np.int32) for c in cases]),
            "bias_off": op_common.offsets([c["bias"] for c in cases]),
            "scales": np.concatenate(scales).astype(F), "scales_off": op_common.offsets(scales),
            "check": np.array(check, np.int32), "use_v66": np.array(v66, np.int32),
            "run_case": np.array(run_case, np.int32), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, F), "out_max": np.array(rmax, F), "out_shape": np.array(shapes, np.int32),
            "codes": np.concatenate(codes) if codes else np.zeros(0, np.uint8), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int, ops: tuple[str, str] = OPS) -> tuple[str, list, int]:
    """(op, the engine's inputs, padding) for golden case ``i``; input 0 laid out as d32 with the defaults (flat for
    flat ops). ``ops``: the 32-bit and 8-bit bias ops (the depthwise and flat modules pass their own; the depthwise
    ``dout`` is the depth multiplier)."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, din, fh, fw, dout, sh, sw, pad, bias32, n_in = (int(v) for v in g["hdr"][i][:12])
    r = g["ranges"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, din)
    f = g["f"][g["f_off"][i]:g["f_off"][i + 1]].reshape(fh, fw, din, dout)
    bias = g["bias"][g["bias_off"][i]:g["bias_off"][i + 1]].astype(np.int32 if bias32 else np.uint8)
    ins = [to_d32(x) if ops[0].endswith("_d32") else x, f, s(r[0]), s(r[1]), s(r[2]), s(r[3]), np.zeros((1, sh, sw, 1), np.int32),
           bias.reshape(1, 1, 1, -1), s(r[4]), s(r[5]), s(r[6]), s(r[7])]
    if n_in == 13:
        ins.append(g["scales"][g["scales_off"][i]:g["scales_off"][i + 1]].reshape(1, 1, 1, -1))
    return ops[0] if bias32 else ops[1], ins, pad


def engine_runs(g: dict[str, np.ndarray], i: int, ops: tuple[str, str] = OPS) -> list:
    """The engine on case ``i``: one result per run (codes, min, max) on one node state, or the error."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    op, ins, pad = case_inputs(g, i, ops)
    state: dict = {}
    res = []
    for _ in range(int(g["hdr"][i][13])):
        try:
            q, mn, mx = run_op(op, ins, padding=pad, state=state)
        except HexnnError as e:
            res.append(e)
            break
        res.append((q.logical() if hasattr(q, "logical") else q, mn, mx))
    return res


def compare_case(g: dict[str, np.ndarray], i: int, ops: tuple[str, str] = OPS) -> list[str]:
    """Per run of case ``i``: '' when the engine's codes and float32 range equal the device's, else why not."""
    runs = np.flatnonzero(g["run_case"] == i)
    eng = engine_runs(g, i, ops)
    out = []
    for k, r in enumerate(runs):
        e = eng[k] if k < len(eng) else eng[-1]
        if isinstance(e, Exception) or g["status"][r] or g["check"][i]:
            dev = "fails" if g["status"][r] or g["check"][i] else "runs"
            out.append("" if isinstance(e, Exception) and dev == "fails" else f"device {dev}, engine {e if isinstance(e, Exception) else 'runs'}")
            continue
        q, mn, mx = e
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        if q.shape != dev.shape:
            out.append(f"shape {q.shape} vs device {dev.shape}")
            continue
        d = q.astype(np.int16) - dev
        same = (np.float32(mn.reshape(-1)[0]).tobytes() == g["out_min"][r].tobytes()
                and np.float32(mx.reshape(-1)[0]).tobytes() == g["out_max"][r].tobytes())
        out.append("" if same and not d.any() else
                   f"{int((d != 0).sum())}/{d.size} codes differ (max {int(np.abs(d).max())}); range "
                   f"[{mn.reshape(-1)[0]}, {mx.reshape(-1)[0]}] vs device [{g['out_min'][r]}, {g['out_max'][r]}]")
    return out


def compare(gold: dict[str, np.ndarray], ops: tuple[str, str] = OPS) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    total, exact, first = 0, 0, ""
    for i in range(len(gold["hdr"])):
        for k, msg in enumerate(compare_case(gold, i, ops)):
            total += 1
            exact += not msg
            if msg and not first:
                first = f"case {i} run {k} hdr {gold['hdr'][i].tolist()}: {msg}"
    return total, exact, first
