"""QuantizedRelu_8 / QuantizedReluX_8 / QuantizedClamp_8 on nnlib's device code: cases, harness I/O, golden arrays.

op_relu.c's executes quantize their bounds with ``quantize_uint8`` (include/quantize.h) and run the assembly
``relu_kernel`` / ``reluX_kernel`` (hexagon/asm_src/relu_kernel_h.S, unedited); the front lines are in
``harness_relu.c``. The output range is the input range, copied.
"""
from __future__ import annotations

import struct

import numpy as np

NAME = "relu"
OPS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")
SOURCE = "hexagon/ops/src/op_relu.c"
FUNCTIONS: list[str] = []
ASM = ["hexagon/asm_src/relu_kernel_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h"]
HARNESS = "harness_relu.c"
F = np.float32


def _range(rng: np.random.Generator) -> tuple[float, float]:
    """An input range: containing 0 (mostly), excluding it, narrow or zero-width."""
    k = rng.random()
    if k < 0.7:
        return F(-rng.uniform(0, 1) * 10 ** rng.uniform(-2, 2)), F(rng.uniform(0, 1) * 10 ** rng.uniform(-2, 2))
    if k < 0.85:
        lo = F(rng.uniform(-20, 20)); return lo, F(lo + F(rng.uniform(0.01, 20)))
    if k < 0.93:
        c = F(rng.uniform(-5, 5)); return c, F(c + F(1e-6))
    c = F(rng.uniform(-5, 5)) if rng.random() < 0.5 else F(0); return c, c


def _bound(rng: np.random.Generator, lo: float, hi: float) -> float:
    """A bound inside the range (ties of quantize_uint8 included), outside it, or infinite."""
    k = rng.random()
    if k < 0.6:
        return F(rng.uniform(lo, hi)) if hi > lo else F(lo)
    if k < 0.75:   # exactly half a step off a code
        step = F((hi - lo) / F(255)) if hi > lo else F(1)
        return F(lo + step * F(int(rng.integers(0, 255)) + 0.5))
    if k < 0.92:
        return F(rng.uniform(-100, 100))
    return F(np.inf) if rng.random() < 0.5 else F(-np.inf)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(kind, codes, in_min, in_max, a, b): every code under fixed ranges, then ``n`` random cases."""
    allc = np.arange(256, dtype=np.uint8)
    cases = [(k, allc, F(lo), F(hi), F(a), F(b)) for k in (0, 1, 2)
             for lo, hi, a, b in [(-1, 1, 0.5, 0.75), (0, 6, 6, 3), (-6, 0, -1, 1), (1, 3, 2, 2.5), (-3, -1, -2, 5),
                                  (0, 0, 0, 0), (-1, 1, 2, -2), (-1, 1, -np.inf, np.inf)]]
    for size in (1, 127, 128, 129, 255, 257):   # the vector tails
        cases += [(k, (np.arange(size) * 7 % 256).astype(np.uint8), F(-1), F(2), F(0.6), F(1.2)) for k in (0, 1, 2)]
    for i in range(n):
        lo, hi = _range(rng)
        cases.append((i % 3, rng.integers(0, 256, int(rng.integers(1, 700)), dtype=np.uint8), lo, hi,
                      _bound(rng, lo, hi), _bound(rng, lo, hi)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for kind, q, *f in cases:
        parts += [struct.pack("<ii4f", kind, q.size, *f), q.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: codes in / out concatenated with ``offsets``; per case kind, input range, bounds a / b."""
    sizes = [c[1].size for c in cases]
    if sum(sizes) != len(out):
        raise ValueError(f"harness wrote {len(out)} bytes, expected {sum(sizes)}")
    col = lambda k: np.array([c[k] for c in cases], np.float32)
    return {"offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            "kind": np.array([c[0] for c in cases], np.int32), "codes": np.concatenate([c[1] for c in cases]),
            "in_min": col(2), "in_max": col(3), "a": col(4), "b": col(5),
            "out": np.frombuffer(out, np.uint8).copy()}


def inputs(gold: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """``run_op`` inputs of case ``i``."""
    s = lambda k: gold[k][i].reshape(1, 1, 1, 1)
    off = gold["offsets"]
    ins = [gold["codes"][off[i]:off[i + 1]].reshape(1, 1, 1, -1), s("in_min"), s("in_max")]
    return ins + [[], [s("a")], [s("a"), s("b")]][gold["kind"][i]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes the engine reproduces and whose range it passes through, first difference)."""
    from hexnn_import.ops.registry import run_op
    off, exact, first = gold["offsets"], 0, ""
    for i in range(len(off) - 1):
        q, mn, mx = run_op(OPS[gold["kind"][i]], inputs(gold, i))
        dev = gold["out"][off[i]:off[i + 1]]
        ok = (np.array_equal(q.reshape(-1), dev) and mn.reshape(-1)[:1].tobytes() == gold["in_min"][i:i + 1].tobytes()
              and mx.reshape(-1)[:1].tobytes() == gold["in_max"][i:i + 1].tobytes())
        exact += ok
        if not ok and not first:
            first = (f"case {i} {OPS[gold['kind'][i]]} range=[{gold['in_min'][i]!r}, {gold['in_max'][i]!r}] "
                     f"a={gold['a'][i]!r} b={gold['b'][i]!r}: {int((q.reshape(-1) != dev).sum())} codes differ")
    return len(off) - 1, exact, first
