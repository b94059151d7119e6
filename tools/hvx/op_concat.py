"""QuantizedConcat_8 on nnlib's device code (op_concat.c ``concat_execute_asm``): cases, harness I/O, golden arrays.

nnlib registers the flat op with ``concat_execute_asm``: ``concat_execute`` (the output range: the union of the
input ranges, its min at most 0) hands the even and the odd inputs to two work items ``concat_execute_slice_asm``,
which copy an input whose range maps unchanged (offset 0, gain >= 0x7fc0) with the asm
``vmemcpy_2d_general_asm`` and requantize the others with the asm ``memconvert_hvx``. All run unedited
(``graph_standin.h`` for the graph runtime). The engine follows the portable ``concat_execute_ref`` (per byte
``((x + offset) * gain + 2**14) >> 15``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "concat"
OPS = ("QuantizedConcat_8",)
SOURCE = "hexagon/ops/src/op_concat.c"
FUNCTIONS = ["concat_execute_slice_asm", "concat_execute", "concat_execute_asm"]
ASM = ["hexagon/asm_src/memconvert_hvx.S", "hexagon/asm_src/vmemcpy_2d_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_concat.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: op_concat.c's ``struct tdata`` and the three functions."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_items(src, ["tdata"]) + hvx_build.extract_functions(src, FUNCTIONS))


def _range(rng: np.random.Generator) -> tuple[np.float32, np.float32]:
    """An input range: holding 0 (mostly), above 0, a copy of a common range (the unity-gain copy)."""
    k = rng.random()
    s = 10 ** rng.uniform(-2, 2)
    if k < 0.7:
        return F(-s * rng.uniform(0, 1)), F(s * rng.uniform(0.05, 1))
    if k < 0.85:
        return F(0), F(s)
    return F(s * rng.uniform(0.1, 1)), F(s * rng.uniform(1.1, 3))


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(dim, (b, h, w), [(depth, min, max, codes)]): edge cases (every code through one range and a wider one; the
    same range twice: the copy path; a range above 0; a non-depth axis: the C's error), then ``n`` random cases
    (1..6 inputs, depths 1..160, rows 1..30)."""
    allc = np.arange(256, dtype=np.uint8)
    cases = [(3, (1, 1, 1), [(256, F(-1), F(1), allc), (256, F(-1), F(1), allc[::-1].copy())]),
             (3, (1, 1, 1), [(256, F(-1), F(1), allc), (256, F(-2), F(3), allc)]),
             (3, (1, 1, 1), [(256, F(0.5), F(2), allc), (256, F(-1), F(1), allc)]),
             (3, (1, 2, 1), [(128, F(0), F(6), allc), (1, F(0), F(6), allc[:2])]),
             (2, (1, 1, 1), [(4, F(-1), F(1), allc[:4]), (4, F(-1), F(1), allc[:4])])]
    for _ in range(n):
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 6)))
        rows = int(np.prod(shape))
        parts = []
        common = _range(rng)
        for _ in range(int(rng.integers(1, 7))):
            d = int(rng.choice([int(rng.integers(1, 8)), int(rng.integers(8, 64)), 32, 128, int(rng.integers(64, 160))]))
            lo, hi = common if rng.random() < 0.3 else _range(rng)
            parts.append((d, lo, hi, rng.integers(0, 256, rows * d, dtype=np.uint8)))
        cases.append((3, shape, parts))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    out = [struct.pack("<i", len(cases))]
    for dim, shape, parts in cases:
        out.append(struct.pack("<5i", dim, len(parts), *shape))
        for d, lo, hi, x in parts:
            out += [struct.pack("<i2f", d, lo, hi), x.tobytes()]
    return b"".join(out)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: per input (``part_case`` its case) depth, range, codes (``data`` with ``d_off``) and the
    ``offset`` / ``gain`` the device's slice computes for it; per case
    dim, shape, status (0 ok, 1 the C's error), the device's range and codes (``offsets``)."""
    pos, status, rmin, rmax, codes, og = 0, [], [], [], [], []
    for _, shape, parts in cases:
        n = int(np.prod(shape)) * sum(p[0] for p in parts)
        st, lo, hi = struct.unpack_from("<iff", out, pos); pos += 12
        codes.append(np.frombuffer(out, np.uint8, n, pos).copy() if st == 0 else np.zeros(n, np.uint8)); pos += n
        og.append(np.frombuffer(out, np.int32, 2 * len(parts), pos).reshape(-1, 2).copy()); pos += 8 * len(parts)
        status.append(st); rmin.append(lo); rmax.append(hi)
    op_common.check_end(out, pos)
    parts = [(ci, *p) for ci, c in enumerate(cases) for p in c[2]]
    return {"dim": np.array([c[0] for c in cases], np.int32), "shape": np.array([c[1] for c in cases], np.int32),
            "part_case": np.array([p[0] for p in parts], np.int32), "depth": np.array([p[1] for p in parts], np.int32),
            "in_min": np.array([p[2] for p in parts], F), "in_max": np.array([p[3] for p in parts], F),
            "data": np.concatenate([p[4] for p in parts]), "offset": np.concatenate(og)[:, 0].copy(),
            "gain": np.concatenate(og)[:, 1].copy(),
            "d_off": np.concatenate([[0], np.cumsum([p[4].size for p in parts])]).astype(np.int64),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "codes": np.concatenate(codes), "offsets": np.concatenate([[0], np.cumsum([c.size for c in codes])]).astype(np.int64)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The op's inputs for golden case ``i``: dim, the tensors, their mins, their maxes."""
    idx = np.where(g["part_case"] == i)[0]
    b, h, w = (int(v) for v in g["shape"][i])
    ts = [g["data"][g["d_off"][k]:g["d_off"][k + 1]].reshape(b, h, w, int(g["depth"][k])) for k in idx]
    s = lambda v: np.asarray(v, F).reshape(1, 1, 1, 1)
    return [np.array(g["dim"][i], np.int32).reshape(1, 1, 1, 1), *ts, *[s(g["in_min"][k]) for k in idx],
            *[s(g["in_max"][k]) for k in idx]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "QuantizedConcat_8", case_inputs(gold, i), gold, i, gold["codes"][off[i]:off[i + 1]]), lambda i: "")
