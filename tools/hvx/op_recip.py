"""QuantizedRecip_8 on nnlib's device code (op_recip.c, whole): cases, I/O, comparison.

nnlib registers QuantizedRecip_8 with ``recip_execute``: under 256 elements, float32 C per element
(``in_min + q * step``, ``1 / v``, the output range from the extremes with 0 added, ``round`` of the re-coded
value); from 256 elements, the HVX min / max reductions and ``max_negative`` / ``min_positive`` scans pick the codes
present, ``get_reciprocals_*_range`` builds a 256-entry table and HVX ``map_values`` applies it. The vendor file is
compiled unedited with nnlib's own ``nn_graph.h``.

The engine follows it (``ops/kernels/recip_div_device.py``): clang contracts ``in_min + q * step`` into one
fused multiply-add (``fmaf``). What the op leaves unset is not compared: the table entries it never writes
(``unset_elements``; each case runs three times over stack bytes 0x00 / 0xFF / 0xC0 and the bytes that change are
kept as ``defined``, evidence the replay checks against the rule) and, for a range excluding 0 from 256 elements,
the whole output and its range (left at the harness's preset 12345 / -12345): the engine refuses those.

    python3 tools/hvx/golden_hvx.py --nnlib /tmp/nnlib -n 300 --only op_recip   # report only
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "recip"
OPS = ("QuantizedRecip_8",)
SOURCE = "hexagon/ops/src/op_recip.c"
FUNCTIONS = ["recip_execute", "get_reciprocals_split_range", "get_reciprocals_continuous_range", "map_values",
             "max_negative_execute_slice", "min_positive_execute_slice", "reduce_min_all_axes_hvx",
             "reduce_max_all_axes_hvx"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast",)]
HEADERS: list[str] = []
HARNESS = "harness_recip.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, then the whole op_recip.c."""
    return op_common.os_body(nnlib, ["nn_tensor_out_prepare_normal_fromshape"], [SOURCE], mcmanager=False)


def _range(rng: np.random.Generator, k: int) -> tuple[F, F]:
    """0 inside (k 0), at the min (k 1), at the max (k 2); k 3: a range without 0 (positive or negative)."""
    if k == 1:
        return F(0.0), F(rng.uniform(0.05, 20))
    if k == 2:
        return F(-rng.uniform(0.05, 20)), F(0.0)
    if k == 3:
        lo, hi = sorted(rng.uniform(0.05, 20, 2))
        return (F(lo), F(hi)) if rng.random() < 0.5 else (F(-hi), F(-lo))
    return F(-rng.uniform(0.05, 20)), F(rng.uniform(0.05, 20))


def _zero_code(lo: F, hi: F) -> int:
    """The code recip_execute's table path skips (``round(-in_min / in_step)``), for cases built without it."""
    return int(np.floor(float(F(-lo) / F(F(hi - lo) / F(255.0))) + 0.5))


#: (shape, range, codes or None for random ones, codes left out of random data) of the edge cases: an exact zero
#: (``1 / +0``) on the float path; min 0 / max 0 with and without the zero code; a zero code near either end;
#: no codes on one side of zero; ranges without 0 (float path: computed; table path: nothing set); sizes 255 /
#: 256 / 257 and around 128-byte multiples.
EDGE: list[tuple[tuple[int, ...], tuple[float, float], list[int] | None, tuple[int, ...]]] = [
    ((1, 1, 1, 5), (-1.0, 0.9921875), [0, 127, 128, 129, 255], ()),
    ((1, 1, 1, 3), (0.0, 5.0), [0, 1, 255], ()),
    ((1, 1, 1, 3), (-1.9921875, 0.0), [0, 254, 255], ()),
    ((1, 1, 1, 4), (0.5, 4.0), [0, 1, 128, 255], ()),
    ((1, 1, 1, 4), (-6.0, -0.25), [0, 1, 128, 255], ()),
    ((1, 1, 1, 1), (-2.0, 3.0), [7], ()),
    ((1, 1, 3, 85), (-2.0, 3.0), None, ()),
    ((1, 1, 1, 256), (-2.0, 3.0), None, (102,)),
    ((1, 1, 1, 257), (-2.0, 3.0), None, ()),
    ((1, 1, 2, 192), (0.0, 6.0), None, (0,)),
    ((1, 1, 2, 192), (0.0, 6.0), None, ()),
    ((1, 1, 3, 128), (-4.0, 0.0), None, ()),
    ((1, 1, 3, 129), (-1.9921875, 0.0), None, ()),
    ((1, 1, 1, 383), (-0.001, 10.0), None, ()),
    ((1, 1, 1, 385), (-10.0, 0.001), None, ()),
    ((1, 1, 1, 511), (-1.0, 0.9921875), list(range(128, 256)) * 3 + list(range(129, 256)), ()),
    ((1, 1, 1, 512), (-1.0, 0.9921875), list(range(128)) * 4, ()),
    ((1, 1, 1, 640), (0.5, 4.0), None, ()),
    ((1, 1, 1, 300), (-6.0, -0.25), None, ()),
]


def _codes(rng: np.random.Generator, shp: tuple[int, ...], avoid: tuple[int, ...]) -> np.ndarray:
    """Random codes of shape ``shp`` without the codes ``avoid``."""
    keep = np.setdiff1d(np.arange(256), avoid)
    return keep[rng.integers(0, keep.size, shp)].astype(np.uint8)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random ones: half under 256 elements (the float path, a fifth of them on a range
    without 0), half from 256 to 1,535 (the table path; half of them without the code the table skips)."""
    cases = []
    for shp, (lo, hi), codes, avoid in EDGE:
        x = np.array(codes, np.uint8).reshape(shp) if codes is not None else _codes(rng, shp, avoid)
        cases.append({"hdr": list(shp), "range": np.array([lo, hi], F), "x": x})
    for i in range(n):
        small = i % 2 == 0
        shp = ((1, 1, int(rng.integers(1, 5)), int(rng.integers(1, 64))) if small
               else (1, int(rng.integers(1, 4)), int(rng.integers(2, 6)), int(rng.integers(64, 129))))
        k = int(rng.integers(0, 4)) if small else int(rng.integers(0, 3))
        lo, hi = _range(rng, k)
        avoid = () if small or rng.random() < 0.5 else (_zero_code(lo, hi) if k == 0 else 0 if k == 1 else 255,)
        cases.append({"hdr": list(shp), "range": np.array([lo, hi], F), "x": _codes(rng, shp, avoid)})
    return cases


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (shape), range, codes (offsets), status, output range, output codes and
    ``defined`` (1 where the three runs over different stack bytes agree)."""
    pos, status, rmin, rmax, shapes, codes, defined = 0, [], [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), c = op_common.read_d32_run(out, pos)
        d = np.frombuffer(out, np.uint8, c.size, pos).copy(); pos += c.size
        status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp); codes.append(c); defined.append(d)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["range"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes),
            "defined": np.concatenate(defined)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's three inputs for case ``i``."""
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    return [g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(g["hdr"][i]), s(g["ranges"][i][0]), s(g["ranges"][i][1])]


#: The output range the harness presets: still there after the run, the op never wrote it.
PRESET = (F(12345.0), F(-12345.0))


def unset_elements(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Where recip_execute's table path reads an entry it never wrote (op_recip.c get_reciprocals_split_range /
    get_reciprocals_continuous_range: ``inverses[i]`` is set only when ``float_val != 0``, and the split range
    skips the codes between the largest code present below ``round(-min / step)`` and the smallest above it, yet
    ``output_data[i]`` is converted for every i): per element of ``x``, in float64 on the rule's own terms (the
    code's value ``q * step + min`` is exactly 0 in float64 only when it is so exactly). All of ``x`` when the range
    takes none of the three branches; none under 256 elements."""
    x = np.asarray(x).ravel().astype(np.int64)
    lo, hi = F(lo), F(hi)
    if x.size < 256:
        return np.zeros(x.size, bool)
    step = float(F(F(hi - lo) / F(255.0)))
    zero = x * step + float(lo) == 0
    if lo < 0 < hi:
        qz = int(np.floor(float(F(F(-lo) / F(step))) + 0.5))
        s0 = x[x < qz].max(initial=0)
        s1 = x[x > qz].min(initial=255)
        return zero | ((x > s0) & (x < s1))
    if (lo == 0 < hi) or (lo < 0 == hi):
        return zero
    return np.ones(x.size, bool)


def case_result(gold: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` whole - codes and float32 range, or a refusal where the device
    fails -, and a note. A case that reads entries the op never writes (``unset_elements``) or whose range takes
    none of the three branches is not whole; its note says whether the rest agrees (``traced``) or not."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    unset = (gold["out_min"][i], gold["out_max"][i]) == PRESET
    try:
        q, mn, mx = run_op(OPS[0], case_inputs(gold, i))
    except HexnnError as e:
        if unset:
            return False, "traced: range without 0 from 256 elements, nothing written; the engine refuses"
        return bool(gold["status"][i]), f"engine error {e}"
    if gold["status"][i] or unset:
        return False, "the engine computes what the device fails or leaves unset"
    sl = slice(gold["offsets"][i], gold["offsets"][i + 1])
    skip = unset_elements(gold["x"][gold["x_off"][i]:gold["x_off"][i + 1]], *gold["ranges"][i])
    dev = gold["codes"][sl]
    same = (F(mn.ravel()[0]).tobytes() == gold["out_min"][i].tobytes()
            and F(mx.ravel()[0]).tobytes() == gold["out_max"][i].tobytes())
    nd = int((np.asarray(q).ravel()[~skip] != dev[~skip]).sum())
    if same and nd == 0 and list(np.shape(q)) == gold["out_shape"][i].tolist():
        return not skip.any(), f"traced: {int(skip.sum())} elements read never-written entries, the rest equal"
    return False, (f"{nd} codes differ; range dev=[{gold['out_min'][i]!r}, {gold['out_max'][i]!r}] "
                   f"engine=[{F(mn.ravel()[0])!r}, {F(mx.ravel()[0])!r}]")


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases reproduced whole (``case_result``), the first other case and how many are not traced)."""
    res = [case_result(gold, i) for i in range(len(gold["hdr"]))]
    other = [(i, m) for i, (ok, m) in enumerate(res) if not ok]
    untraced = sum(not m.startswith("traced") for _, m in other)
    first = (f"case {other[0][0]} {gold['hdr'][other[0][0]].tolist()}: {other[0][1]}; {untraced} not traced"
             if other else "")
    return len(res), sum(ok for ok, _ in res), first
