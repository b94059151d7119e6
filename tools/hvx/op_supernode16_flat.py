"""Supernode_16x16p32to16 (flat) on nnlib's device code (op_supernode.c, whole): cases, I/O, comparison.

nnlib registers the flat 16-bit supernode with op_supernode.c's ``supernode_check_ref`` (the weights padded and
transposed with ``pad2d_16`` / ``transpack_16``, the output range inputs: +-inf is automatic) and
``supernode_execute_ref``, plain C (no HVX) with the 8-bit supernode's output stage: level sizes ``/ 255``, zero
codes from ``quantize_uint8``, bias words scaled by ``fast_roundf`` (on Hexagon ``convert_sf2w``: round half even,
saturating), an int32 sum, a Q31 reciprocal of ``maxrange`` and its own range retries; a 13th input (channel
scales) is never read (``supernode_check_ref``: "ignore it"; the ops table sets no input count). The whole file is
compiled unedited through ``harness_supernode16_flat.c``; one node per case, run 1-2 times on the same input (the range a
run settles on persists). The engine's op follows it: :mod:`hexnn_import.ops.kernels.q16_supernode_flat_device`.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "supernode16_flat"
OPS = ("Supernode_16x16p32to16",)
SOURCE = "hexagon/ops/src/op_supernode.c"
FUNCTIONS = ["supernode_check_ref", "supernode_execute_ref", "pad2d_16", "transpack_16"]
C_FILES = ["hexagon/src/pad2d.c", "hexagon/src/im2col_o.c", "hexagon/src/im2col_full.c",
           "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("gvconv2dbbb_h", "gvconvsum2dbbb_h", "gvmsumb_h", "im2col33322_h",
                                          "gemsumb_h", "gemmpybbw_h", "gemaddvvm_h", "gemsuma_h", "vmemset_h",
                                          "vmemcpy_h", "vmemcpy_2d_h", "vmemset_2d_h", "nn_os_fast")]
HEADERS: list[str] = []
HARNESS = "harness_supernode16_flat.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
PAD_SAME, PAD_VALID = 1, 2
KEYS = ("b", "h", "w", "din", "fh", "fw", "dout", "sh", "sw", "pad", "nruns", "n_in")


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, then the whole op_supernode.c (its asm and src/ helpers linked whole)."""
    return f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n#include "{nnlib / SOURCE}"\n'


def _range(rng: np.random.Generator, hold_zero: bool = True) -> tuple[F, F]:
    """A float32 range, holding 0 unless ``hold_zero`` is false."""
    lo = F(-rng.uniform(0, 4)) if rng.random() < 0.8 else F(0.0)
    if not hold_zero and rng.random() < 0.5:
        lo = F(rng.uniform(0.01, 1))
    return lo, F(lo + F(rng.uniform(0.05, 6)))


def _codes(rng: np.random.Generator, shape: tuple, kind: int) -> np.ndarray:
    """uint16 codes: the full range (sums wrap int32), near the low 8-bit codes, or 0..1023."""
    hi = (65536, 256, 1024)[kind]
    return rng.integers(0, hi, shape, dtype=np.uint16)


def _case(rng: np.random.Generator, t: int) -> dict:
    """One random case: 1x1-3x3 filters, stride 1-2, SAME or VALID, 1-24 channels in, 1-17 out; output range
    automatic, fixed, or automatic on one side; channel scales (a 13th input) on one node in five."""
    b = int(rng.integers(1, 3)) if t % 7 == 0 else 1
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pad = PAD_SAME if t % 2 else PAD_VALID
    h, w = int(rng.integers(fh, fh + 6)), int(rng.integers(fw, fw + 6))
    din, dout = int(rng.choice([1, 2, 3, 8, 16, 24])), int(rng.choice([1, 2, 4, 9, 17]))
    imn, imx = _range(rng)
    fmn, fmx = _range(rng, hold_zero=False)
    bmx = F(rng.uniform(1, 1e3))
    bias = rng.normal(0, 2.0 ** rng.integers(8, 31), dout).clip(-2**31, 2**31 - 1).astype(np.int32)
    kind = t % 4
    if kind == 0:
        omn, omx = F(-np.inf), F(np.inf)
    elif kind == 1:
        omn, omx = F(-rng.uniform(0, 40)), F(rng.uniform(1, 40))
    elif kind == 2:
        omn, omx = F(-rng.uniform(0, 4)), F(np.inf)
    else:
        omn, omx = F(-np.inf), F(rng.uniform(0.5, 40))
    ck = (t // 4) % 3
    scales = rng.uniform(1.0 / 2048, 1.0, dout).astype(F) if t % 5 == 2 else None
    return {"n_in": 13 if scales is not None else 12, "scales": scales, "b": b, "h": h, "w": w, "din": din,
            "fh": fh, "fw": fw, "dout": dout, "sh": sh, "sw": sw, "pad": pad,
            "nruns": int(rng.integers(1, 3)), "ranges": np.array([imn, imx, fmn, fmx, -bmx, bmx, omn, omx], F),
            "x": _codes(rng, (b, h, w, din), ck), "f": _codes(rng, (fh, fw, din, dout), ck), "bias": bias}


def _edges(rng: np.random.Generator) -> list[dict]:
    """All-zero codes, all-65535 codes, a bias that saturates ``fast_roundf``, a 1x1 filter on a 1x1 input, a
    filter larger than a SAME input, zero bias with the inputs' zero codes; a 13th input of scales all 1.0."""
    out = []
    for k in range(6):
        c = _case(rng, 4 * k)
        if k == 0:
            c["x"][:] = 0; c["f"][:] = 0
        elif k == 1:
            c["x"][:] = 65535; c["f"][:] = 65535
        elif k == 2:
            c["bias"][:] = np.int32(2**31 - 1); c["ranges"][4:6] = (-1e30, 1e30)
        elif k == 3:
            c.update(h=1, w=1, fh=1, fw=1); c["x"] = c["x"][:, :1, :1]; c["f"] = c["f"][:1, :1]
        elif k == 4:
            c.update(pad=PAD_SAME, h=1, w=2, fh=3, fw=3, sh=1, sw=1)
            c["x"] = _codes(rng, (c["b"], 1, 2, c["din"]), 1); c["f"] = _codes(rng, (3, 3, c["din"], c["dout"]), 1)
        else:
            c["bias"][:] = 0; c["ranges"][:4] = (-1, 1, -1, 1)
        out.append(c)
    c = _case(rng, 1)
    c.update(n_in=13, scales=np.ones(c["dout"], F))   # every scale 1.0: what prepare.c's comment expects there
    out.append(c)
    return out


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random ones."""
    return _edges(rng) + [_case(rng, t) for t in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts.append(struct.pack(f"<{len(KEYS)}i", *(c[k] for k in KEYS)))
        parts += [c["ranges"].astype(F).tobytes(), c["x"].tobytes(), c["f"].tobytes(), c["bias"].tobytes()]
        if c["n_in"] == 13:
            parts.append(c["scales"].astype(F).tobytes())
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (``KEYS``), ranges, input / weight / bias / channel-scale data with offsets,
    the check status; per run the status, output range, shape and uint16 codes."""
    pos, check, run_case, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        check.append(struct.unpack_from("<i", out, pos)[0]); pos += 4
        for _ in range(c["nruns"]):
            pos, (rs, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos, np.uint16)
            codes.append(run_codes); run_case.append(i); status.append(rs); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    scales = [c["scales"] if c["scales"] is not None else np.zeros(0, F) for c in cases]
    return {"hdr": np.array([[c[k] for k in KEYS] for c in cases], np.int32),
            "ranges": np.stack([c["ranges"] for c in cases]).astype(F),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "f": np.concatenate([c["f"].ravel() for c in cases]), "f_off": op_common.offsets([c["f"] for c in cases]),
            "bias": np.concatenate([c["bias"] for c in cases]), "bias_off": op_common.offsets([c["bias"] for c in cases]),
            "scales": np.concatenate(scales).astype(F), "scales_off": op_common.offsets(scales),
            "check": np.array(check, np.int32), "run_case": np.array(run_case, np.int32),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes) if codes else np.zeros(0, np.uint16),
            "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[list, int]:
    """(the engine's 12 or 13 inputs, padding) for case ``i``."""
    b, h, w, din, fh, fw, dout, sh, sw, pad = (int(v) for v in g["hdr"][i][:10])
    r = g["ranges"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, din)
    f = g["f"][g["f_off"][i]:g["f_off"][i + 1]].reshape(fh, fw, din, dout)
    bias = g["bias"][g["bias_off"][i]:g["bias_off"][i + 1]].reshape(1, 1, 1, -1)
    ins = [x, f, s(r[0]), s(r[1]), s(r[2]), s(r[3]), np.zeros((1, sh, sw, 1), np.int32), bias,
           s(r[4]), s(r[5]), s(r[6]), s(r[7])]
    if g["hdr"][i][11] == 13:
        ins.append(g["scales"][g["scales_off"][i]:g["scales_off"][i + 1]].reshape(1, 1, 1, -1))
    return ins, pad


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    total, exact, first = 0, 0, ""
    for i in range(len(gold["hdr"])):
        ins, pad = case_inputs(gold, i)
        state: dict = {}
        for r in np.flatnonzero(gold["run_case"] == i):
            total += 1
            try:
                q, mn, mx = run_op(OPS[0], ins, padding=pad, state=state)
            except HexnnError as e:
                ok, msg = bool(gold["status"][r] or gold["check"][i]), f"engine error {e}"
            else:
                if gold["status"][r] or gold["check"][i]:
                    ok, msg = False, f"device status {gold['status'][r]} check {gold['check'][i]}, engine runs"
                else:
                    q, dev, _same, ok = op_common.flat_run(np.asarray(q), mn, mx, gold, r)
                    d = (q.astype(np.int64) - dev) if q.shape == dev.shape else np.ones(1)
                    msg = (f"{int((d != 0).sum())}/{d.size} codes differ (max {int(np.abs(d).max())}); range "
                           f"[{mn.reshape(-1)[0]}, {mx.reshape(-1)[0]}] vs [{gold['out_min'][r]}, {gold['out_max'][r]}]")
            exact += ok
            if not ok and not first:
                first = f"case {i} run {r} hdr {gold['hdr'][i].tolist()}: {msg}"
    return total, exact, first
