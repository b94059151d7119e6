"""QuantizedAdd_8p8to8 on nnlib's device code (op_add.c): cases, harness I/O, golden arrays.

nnlib registers the flat op with ``qadd_888_execute`` / ``qadd_888_check``. Same shapes run
``addsub_flat_direct_execute``: the output range planned from the node's kept range (``struct qadd_888_info``),
``set_addsub_scaling_for_output_range``, the HVX cores ``add_core_hvx`` / ``add_core_hvx_underrange`` and, when
an auto end was exceeded, ``check_addsub_need_rerun`` and a second pass. Other shapes run ``qadd_888_hvx``:
``expand``, ``do_quantized_add_888`` with the assembly ``quant_add_spec_asm`` (quant_add_spec_h.S) or
``vmemcpy_asm`` (vmemcpy_h.S), and its recursive retries with a wider range. All of it runs unedited, on one node
per case over 1-3 executions (the range state carried between them); ``graph_standin.h`` stands in for the graph
runtime. Broadcast cases keep to what ``expand`` indexes correctly (a depth-1 operand, or a scalar against one row)
and to whole 128-byte vectors (the asm's min / max also reads the padding of a partial vector).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "add"
OPS = ("QuantizedAdd_8p8to8",)
SOURCE = "hexagon/ops/src/op_add.c"
FUNCTIONS = ["set_addsub_scaling_for_output_range", "convert_intermed_to_outval", "check_addsub_need_rerun",
             "first_stage", "second_stage", "first_stage_underrange", "second_stage_underrange", "add_core_hvx",
             "add_core_hvx_underrange", "addsub_flat_work", "addsub_flat_direct_execute", "do_quantized_add_888",
             "expand", "qadd_888_hvx", "qadd_888_execute", "qadd_888_check"]
ASM = ["hexagon/asm_src/quant_add_spec_h.S", "hexagon/asm_src/vmemcpy_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_add.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins (``graph_standin.h``), then verbatim: nnlib's ``likely`` (nn_graph.h), the shape helpers
    of nn_broadcast.h, ``adjust_minmax_for_zero_with_constraints`` (src/quantize.c),
    ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c), op_add.c's declarations and functions."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_items(nnlib / "hexagon/include/nn_graph.h", ["likely"])
            + hvx_build.extract_functions(nnlib / "hexagon/include/nn_broadcast.h", ["is_dim_compatible", "are_dims_compatible", "output_dim"])
            + hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", ["adjust_minmax_for_zero_with_constraints"])
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + hvx_build.extract_span(src, r"^struct qadd_888_info\s*$", r"^typedef void \(\*core_oper_fp\)")
            + hvx_build.extract_span(src, r"^enum\s*$", r"^static int check_addsub_need_rerun\(.*\);")
            + hvx_build.extract_functions(src, FUNCTIONS))


def _range(rng: np.random.Generator) -> tuple[np.float32, np.float32]:
    """An input range: containing 0 (mostly), excluding it, narrow, wide."""
    k = rng.random()
    if k < 0.7:
        s = 10 ** rng.uniform(-3, 2)
        return F(-rng.uniform(0, 1) * s), F(rng.uniform(0.05, 1) * s)
    if k < 0.85:
        lo = F(rng.uniform(-20, 20)); return lo, F(lo + F(rng.uniform(0.01, 20)))
    return F(0), F(10 ** rng.uniform(-4, 3))


def _spec(rng: np.random.Generator, ra: tuple, rb: tuple) -> tuple[int, np.float32, np.float32]:
    """(n_inputs, out_min, out_max): both auto, min given, both given (near the sum of the input ranges, or much
    narrower: the underrange core and the 'scaling failed' error), or given as -inf / +inf (auto)."""
    k = rng.random()
    lo, hi = float(ra[0] + rb[0]), float(ra[1] + rb[1])
    if k < 0.45:
        return 6, F(0), F(0)
    if k < 0.6:
        return 7, F(lo * rng.uniform(0.2, 1.5)), F(0)
    if k < 0.68:
        return 8, F(-np.inf) if rng.random() < 0.5 else F(lo * rng.uniform(0.2, 1.5)), F(np.inf)
    shrink = 10 ** rng.uniform(-4, 0) if rng.random() < 0.35 else rng.uniform(0.3, 1.5)
    o_lo, o_hi = F(lo * shrink), F(hi * shrink)
    return 8, o_lo, (o_hi if o_hi > o_lo else F(o_lo + F(0.5)))


def _data(rng: np.random.Generator, n: int) -> np.ndarray:
    """Codes: uniform, or piled at one end (an auto range then has to grow: the retry paths)."""
    k = rng.random()
    if k < 0.6:
        return rng.integers(0, 256, n, dtype=np.uint8)
    lo = int(rng.integers(0, 200)) if k < 0.8 else 0
    return rng.integers(lo, lo + 56, n).clip(0, 255).astype(np.uint8) if k < 0.8 else rng.integers(0, 30, n, dtype=np.uint8)


def _shapes(rng: np.random.Generator, i: int) -> tuple[tuple, tuple]:
    """Same shapes (3 in 4 cases; a few over 8192 elements: four work chunks), else a broadcast ``expand`` handles
    (a depth-1 operand, a scalar against one row), in whole 128-byte vectors."""
    if i % 4:
        n = int(rng.integers(9000, 17000)) if i % 97 == 1 else int(rng.integers(1, 800))
        s = tuple(int(x) for x in rng.integers(1, 6, 4)) if rng.random() < 0.2 else (1, 1, 1, n)
        return s, s
    if rng.random() < 0.3:
        d = int(rng.choice([128, 256, 384]))
        full, part = (1, 1, 1, d), (1, 1, 1, 1)
    else:  # h * w * d a multiple of 128
        d = int(rng.choice([2, 8, 32, 128, 256]))
        h, w = int(rng.integers(1, 4)), max(1, 128 // d)
        full, part = (1, h, w, d), (1, h, w, 1)
    return (full, part) if rng.random() < 0.5 else (part, full)


def _oracle_row_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """``n`` auto-range same-shape nodes drawn as the x86 oracle's "[auto output range]" row draws them (issue 36:
    1 case in 100 differed there): n of 1 / 3 / 128 / 200 / 1000, A "normal" / "pos" / "neg" / "tiny", B "normal" /
    "pos" / "neg", 1 or 3 runs."""
    def rr(kind: str) -> tuple[np.float32, np.float32]:
        lo, hi = {"normal": (-rng.uniform(0, 10), rng.uniform(0.01, 10)), "pos": (0.0, rng.uniform(0.01, 50)),
                  "neg": (-rng.uniform(0.01, 50), 0.0), "tiny": (-rng.uniform(0, 1e-3), rng.uniform(1e-4, 1e-3))}[kind]
        return F(lo), F(hi)
    cases = []
    for _ in range(n):
        size = int(rng.choice([1, 3, 128, 200, 1000]))
        ra, rb = rr(str(rng.choice(["normal", "pos", "neg", "tiny"]))), rr(str(rng.choice(["normal", "pos", "neg"])))
        runs = [(*ra, *rb, rng.integers(0, 256, size, dtype=np.uint8), rng.integers(0, 256, size, dtype=np.uint8))
                for _ in range(int(rng.choice([1, 3])))]
        cases.append((6, F(0), F(0), (1, 1, 1, size), (1, 1, 1, size), runs))
    return cases


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(n_inputs, out_min, out_max, a_shape, b_shape, runs): edge cases, ``n / 4`` nodes as the x86 oracle's auto-range
    row draws them, then ``n`` random nodes of 1-3 runs, each run (a_min, a_max, b_min, b_max, a, b); later runs keep
    or rescale the input ranges (the 1/32 rule)."""
    cases = []
    allc = np.arange(256, dtype=np.uint8)
    rev = allc[::-1].copy()
    shp = (1, 1, 1, 256)
    for spec in [(6, 0, 0), (7, -1, 0), (8, -2, 2), (8, -1e-3, 1e-3), (8, -1e-6, 1e-6), (8, 0, 1)]:
        for r in [(-1, 1, -1, 1), (0, 1, 0, 1), (-1, 1, -1e-3, 1e-3), (1, 2, 3, 5), (-6, 0, 0, 6),
                  (-0.000129, 0.000829, -2.546, 8.682)]:   # the last: issue 36's auto-range row
            cases.append((*spec, shp, shp, [(*map(F, r), allc, rev), (*map(F, r), rev, rev)]))
    for r in [(-0.000129, 0.000829, -2.546, 8.682), (-2.546, 8.682, -0.000129, 0.000829), (-1, 1, -3, 2)]:
        for spec in [(6, 0, 0), (8, -4, 12)]:
            cases.append((*spec, shp, (1, 1, 1, 1), [(*map(F, r), allc, allc[:1]), (*map(F, r), rev, allc[255:])]))
    for k in (0, 71, 82):  # 71, 82: qadd_888_hvx's "at least as large as in range" retry never ends (float32)
        r = (-1.0539583, 1.2320676, -15.893433, 11.412844)
        cases.append((6, F(0), F(0), shp, (1, 1, 1, 1), [(*map(F, r), allc, allc[k:k + 1]), (*map(F, r), rev, rev[:1])]))
    cases += _oracle_row_cases(rng, n // 4)
    for i in range(n):
        sa, sb = _shapes(rng, i)
        ra, rb = _range(rng), _range(rng)
        spec = _spec(rng, ra, rb)
        runs = []
        for r in range(int(rng.choice([1, 2, 3], p=[0.4, 0.35, 0.25]))):
            if r and rng.random() < 0.5:
                g = F(10 ** rng.uniform(-1, 2))
                ra, rb = (F(ra[0] * g), F(ra[1] * g)), (F(rb[0] * g), F(rb[1] * g))
            runs.append((*ra, *rb, _data(rng, int(np.prod(sa))), _data(rng, int(np.prod(sb)))))
        cases.append((*spec[:1], F(spec[1]), F(spec[2]), sa, sb, runs))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for n_in, lo, hi, sa, sb, runs in cases:
        parts.append(struct.pack("<i2f8ii", n_in, lo, hi, *sa, *sb, len(runs)))
        for *r, a, b in runs:
            parts += [struct.pack("<4f", *r), a.tobytes(), b.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays, one row per run: ``case`` (its node), ``run``, the node's n_inputs / spec / shapes, the input
    ranges, a / b / codes concatenated with ``a_off`` / ``b_off`` / ``offsets``, status (0 ok, 1 the C errs, 2 no
    end: ``qadd_888_hvx`` called itself 4,000 times, 3 not run after a 2), passes, output range."""
    pos, rows = 0, {k: [] for k in ("case", "run", "n_inputs", "spec_min", "spec_max", "a_shape", "b_shape", "a_min",
                                    "a_max", "b_min", "b_max", "a", "b", "codes", "status", "passes", "out_min", "out_max")}
    for ci, (n_in, lo, hi, sa, sb, runs) in enumerate(cases):
        nout = max(int(np.prod(sa)), int(np.prod(sb)))
        for ri, (a_lo, a_hi, b_lo, b_hi, a, b) in enumerate(runs):
            st, passes, o_lo, o_hi = struct.unpack_from("<iiff", out, pos); pos += 16
            codes = np.frombuffer(out, np.uint8, nout, pos).copy(); pos += nout
            for k, v in zip(rows, (ci, ri, n_in, lo, hi, sa, sb, a_lo, a_hi, b_lo, b_hi, a, b,
                                   codes if st == 0 else np.zeros(nout, np.uint8), st, passes, o_lo, o_hi)):
                rows[k].append(v)
    op_common.check_end(out, pos)
    g = {k: np.array(rows[k], np.float32) for k in ("spec_min", "spec_max", "a_min", "a_max", "b_min", "b_max",
                                                   "out_min", "out_max")}
    g.update({k: np.array(rows[k], np.int32) for k in ("case", "run", "n_inputs", "status", "passes", "a_shape", "b_shape")})
    for k, off in (("a", "a_off"), ("b", "b_off"), ("codes", "offsets")):
        g[k] = np.concatenate(rows[k])
        g[off] = np.concatenate([[0], np.cumsum([x.size for x in rows[k]])]).astype(np.int64)
    return g


def replay(g: dict[str, np.ndarray]) -> list[tuple[int, str]]:
    """Every run through the engine (one state per node, as nnlib keeps its node): ``(run, "")`` where codes and
    range equal the device's (or the device errs or does not end, status 1 / 2, and the engine refuses), else
    ``(run, what differs)``; runs after one that did not end (status 3) are left out."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    out, state = [], {}
    for i in range(len(g["case"])):
        if g["run"][i] == 0:
            state = {}
        if g["status"][i] == 3:  # not run: an earlier run of the node did not end
            continue
        s = lambda k, i=i: np.asarray(g[k][i], np.float32).reshape(1, 1, 1, 1)
        a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(g["a_shape"][i])
        b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(g["b_shape"][i])
        ins = [a, b, s("a_min"), s("a_max"), s("b_min"), s("b_max"), s("spec_min"), s("spec_max")][:g["n_inputs"][i]]
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]]
        try:
            q, mn, mx = run_op("QuantizedAdd_8p8to8", ins, state=state)
        except HexnnError as e:
            out.append((i, "" if g["status"][i] else f"engine refuses, device runs: {e}"))
            continue
        if g["status"][i]:
            out.append((i, "device errs, engine runs"))
            continue
        nd = int((q.reshape(-1) != dev).sum())
        same = (mn.reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                and mx.reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        diff = int(np.abs(q.reshape(-1).astype(np.int16) - dev).max()) if nd else 0
        out.append((i, "" if same and not nd else
                    f"{nd} codes differ (max {diff}); range dev=[{g['out_min'][i]!r}, {g['out_max'][i]!r}] "
                    f"engine=[{mn.reshape(-1)[0]!r}, {mx.reshape(-1)[0]!r}]"))
    return out


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit, first difference)."""
    res = replay(gold)
    bad = [(i, m) for i, m in res if m]
    first = (f"run {bad[0][0]} (case {gold['case'][bad[0][0]]}, n_inputs {gold['n_inputs'][bad[0][0]]}): {bad[0][1]}"
             if bad else "")
    return len(res), len(res) - len(bad), first
