"""QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32 nodes whose input ranges change between runs, on nnlib's device
code (op_add_d32.c, issue 36): what a node does after a fixed output range too narrow for its input ranges.

The set-up of such a run fails ("scaling failed"), but ``addsub_setup_scaling`` has stored the input ranges and
``setup_elementwise_strategy`` left ``strategy_valid = -1``, which ``elementwise_strategy_valid_check`` passes (it
tests ``== 0``): the next run with the same ranges runs on ``info->addsub_scaling`` as it is, zeroed by
``nn_calloc`` or the last good set-up's. Each node: both output ends given, check() once, then 3-7 runs, each on
one of a few input ranges (some too wide for the output range), the same d32 data. op_add_d32.py's build, with
``harness_add_d32_seq.c`` (harness_add_d32.c reading each later run's ranges).

    python3 tools/hvx/golden_hvx.py --nnlib /tmp/nnlib --only op_add_d32_seq --write
"""
from __future__ import annotations

import struct

import numpy as np
import op_add_d32
import op_common
from op_add_d32 import ASM, C_FILES, FUNCTIONS, HEADERS, INCLUDES, SOURCE, body  # noqa: F401  (the same build)

NAME = "add_d32_seq"
OPS = op_add_d32.OPS[:2]
HARNESS = "harness_add_d32_seq.c"
FIXED_CASES = True
F = np.float32
#: input ranges (A min, max, B min, max): the first three fit the output ranges below, the last two do not
RANGES = np.array([[0, 1, 0, 1], [-1, 1, -0.5, 2], [-3, 3, -2, 2], [0, 5000, 0, 5000], [-4000, 4000, 0, 9000]], F)
OUT_RANGES = np.array([[-1, 1], [0, 2], [-0.5, 0.25], [-4, 4]], F)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """48 nodes (``n`` is not used): add and sub, two shapes, a fixed output range each, runs over the ranges
    above, a too-wide one repeated, so that some runs follow a failed set-up (on zero or on a good scaling)."""
    out = []
    for k in range(48):
        seq = [int(v) for v in rng.integers(0, len(RANGES), int(rng.integers(3, 8)))]
        seq = [v for i, v in enumerate(seq) for _ in range(1 + (v >= 3 and i % 2 == 0))][:8]   # repeat a too-wide one
        shape = [[1, 2, 3, 40], [2, 3, 5, 33], [1, 1, 4, 64]][k % 3]
        out.append({"op": k % 2, "shape": shape, "seq": seq, "fixed": OUT_RANGES[k % len(OUT_RANGES)],
                    "xa": rng.integers(0, 256, shape, dtype=np.uint8), "xb": rng.integers(0, 256, shape, dtype=np.uint8)})
    return out


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin: per node op_add_d32.pack's header (8 inputs), the first ranges and the output range, the
    codes, then each later run's four range ends."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts += [struct.pack("<11i", c["op"], *c["shape"], *c["shape"], 8, len(c["seq"])),
                  np.concatenate([RANGES[c["seq"][0]], c["fixed"]]).astype(F).tobytes(), c["xa"].tobytes(),
                  c["xb"].tobytes(), *(RANGES[v].tobytes() for v in c["seq"][1:])]
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per node ``hdr`` (op, shape, runs), its output range ``fixed``, the codes of A and B (``xa`` /
    ``xb`` with offsets); per run its input ranges ``run_ranges``, node ``run_case``, status, output range, shape and
    codes."""
    pos, run_case, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], []
    for i, c in enumerate(cases):
        pos += 4   # check() status
        for _ in c["seq"]:
            pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
            codes.append(run_codes); run_case.append(i); status.append(st); rmin.append(lo); rmax.append(hi)
            shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([[c["op"], *c["shape"], len(c["seq"])] for c in cases], np.int32),
            "fixed": np.stack([c["fixed"] for c in cases]),
            "run_ranges": np.concatenate([RANGES[c["seq"]] for c in cases]),
            "xa": np.concatenate([c["xa"].ravel() for c in cases]), "xa_off": op_common.offsets([c["xa"] for c in cases]),
            "xb": np.concatenate([c["xb"].ravel() for c in cases]), "xb_off": op_common.offsets([c["xb"] for c in cases]),
            "run_case": np.array(run_case, np.int32), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, F), "out_max": np.array(rmax, F), "out_shape": np.array(shapes, np.int32),
            "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def run_engine(g: dict[str, np.ndarray]) -> list[tuple[bool, str]]:
    """Per run: whether the engine reproduces it (codes and range bit for bit, or both refuse; one node state per
    node, as on the device), and a message."""
    import warnings

    from hexnn_import.errors import DeviceDefectWarning, HexnnError
    from hexnn_import.ops.d32 import to_d32
    from hexnn_import.ops.registry import run_op

    res: list[tuple[bool, str]] = []
    for i, h in enumerate(g["hdr"]):
        a = to_d32(g["xa"][g["xa_off"][i]:g["xa_off"][i + 1]].reshape(h[1:5]))
        b = to_d32(g["xb"][g["xb_off"][i]:g["xb_off"][i + 1]].reshape(h[1:5]))
        state: dict = {}
        for r in np.flatnonzero(g["run_case"] == i):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeviceDefectWarning)
                    q, mn, mx = run_op(OPS[h[0]], [a, b, *g["run_ranges"][r].tolist(), *g["fixed"][i].tolist()],
                                       state=state)
            except HexnnError as e:
                res.append((bool(g["status"][r]), f"run {r}: engine error {e}"))
                continue
            _, _, same, ok = op_common.d32_run(q, mn, mx, g, r)
            res.append((ok, f"run {r}: status {g['status'][r]}, range same {same}"))
    return res


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces, the first that is not)."""
    res = run_engine(gold)
    return len(res), sum(ok for ok, _ in res), next((m for ok, m in res if not ok), "")
