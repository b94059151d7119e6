"""QuantizedRecip_8 on nnlib's device code (op_recip.c, whole): cases, I/O, comparison.

nnlib registers QuantizedRecip_8 with ``recip_execute``: under 256 elements, float32 C per element
(``in_min + q * step``, ``1 / v``, the output range from the extremes with 0 added, ``round`` of the re-coded
value); from 256 elements, the HVX min / max reductions and ``max_negative`` / ``min_positive`` scans pick the codes
present, ``get_reciprocals_*_range`` builds a 256-entry table and HVX ``map_values`` applies it. The vendor file is
compiled unedited with nnlib's own ``nn_graph.h``.

Not in ``golden_hvx.MODULES`` yet: the engine's QuantizedRecip_8 computes in float64 on its own range rule and
reproduces 7 of the first 60 cases. Found with it (session 44): the float path is the device's float32 with the
product fused, ``fmaf(q, step, in_min)`` (clang contracts ``in_min + q * step`` into ``sffma``); that model gives
28 of the 30 float-path cases bit for bit (codes and range), a separate float32 multiply and add 11. The table path
leaves the entry of the code whose value is exactly 0 unset (``inverses[i]`` uninitialised): not deterministic.

    python3 tools/hvx/golden_hvx.py --nnlib /tmp/nnlib -n 60 --only op_recip   # report only
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
    """Holding 0 inside (k 0), at the min (k 1) or at the max (k 2)."""
    if k == 1:
        return F(0.0), F(rng.uniform(0.05, 20))
    if k == 2:
        return F(-rng.uniform(0.05, 20)), F(0.0)
    return F(-rng.uniform(0.05, 20)), F(rng.uniform(0.05, 20))


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """``n`` random cases, half under 256 elements (the float path), half from 256 up (the table path)."""
    cases = []
    for i in range(n):
        shp = ((1, 1, int(rng.integers(1, 5)), int(rng.integers(1, 60))) if i % 2 == 0
               else (1, int(rng.integers(1, 4)), int(rng.integers(2, 6)), int(rng.integers(64, 130))))
        cases.append({"hdr": list(shp), "range": np.array(_range(rng, i % 3), F),
                      "x": rng.integers(0, 256, shp, dtype=np.uint8)})
    return cases


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (shape), range, codes (offsets), status, output range, output codes."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), c = op_common.read_d32_run(out, pos)
        status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp); codes.append(c)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["range"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's three inputs for case ``i``."""
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    return [g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(g["hdr"][i]), s(g["ranges"][i][0]), s(g["ranges"][i][1])]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        try:
            q, mn, mx = run_op(OPS[0], case_inputs(gold, i))
            q, dev, same, ok = op_common.flat_run(np.asarray(q), mn, mx, gold, i)
            d = np.abs(q.astype(int) - dev) if q.shape == dev.shape else np.ones(1)
            msg = f"{int((d > 0).sum())} differ (max {int(d.max())}), range same {same}"
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        exact += ok
        if not ok and not first:
            first = f"case {i} {gold['hdr'][i].tolist()} range {gold['ranges'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
