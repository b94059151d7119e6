"""QuantizedSoftmax_8's large-depth path on nnlib's device code (op_softmax_d32.c ``softmax_larged_flat_exec``).

``softmax_flat_execute`` takes it from depth 1408 and 5632 bytes: a histogram of each row (asm
``histogram_flat_asm``), its dot product with a table of ``exp(step * (i - 255))`` built by
``fill_largedepth_lookup`` from libm's ``expf`` / ``expm1f``, the reciprocal and a 192-entry code table per row.
The Hexagon toolchain's libm is not here: each case brings the libm values its table needs, correctly rounded
float32 (``numpy`` in float64, then rounded), and the harness's ``expf`` / ``expm1f`` return them
(``harness_softmax_larged.c``); so the row checks the whole path given those values, and the engine, which uses
the same correctly rounded values, equals the device wherever the device's libm rounds correctly. The file's
functions run unedited as in ``op_softmax``.
"""
from __future__ import annotations

import pathlib
import struct

import numpy as np
import op_softmax

NAME = "softmax_larged"
OPS = ("QuantizedSoftmax_8",)
SOURCE = op_softmax.SOURCE
FUNCTIONS = ["softmax_flat_execute", "softmax_larged_flat_exec", "softmax_larged_flat_worker",
             "fill_largedepth_lookup", "softmax_larged_batchchunk"]
ASM = op_softmax.ASM
HEADERS = op_softmax.HEADERS
HARNESS = "harness_softmax_larged.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """op_softmax's unit (the graph stand-ins and the file's functions verbatim)."""
    return op_softmax.body(nnlib)


def _codes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Logits-like codes: a narrow background (compressible) and 1-40 peaks within 12 codes of each other, which
    hold most of the softmax; or uniform."""
    if rng.random() < 0.1:
        return rng.integers(0, 256, n, dtype=np.uint8)
    x = rng.normal(rng.uniform(20, 150), rng.uniform(1, 8), n)
    k = int(rng.integers(1, 41))
    x[rng.choice(n, k, replace=False)] = rng.uniform(160, 255) - rng.integers(0, 13, k)
    return np.clip(np.round(x), 0, 255).astype(np.uint8)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(shape, n_inputs, in_min, in_max, beta, codes): edge cases (depth 1408 in 4 rows, one row of 5632, all codes
    equal, one code far above the rest, beta 0 / negative / large, a range with min above max) then ``n`` random
    ones (depth 1408-4000 in the fewest rows that reach 5632 bytes, ranges 1-100 wide, beta 1 or 0.05-4)."""
    z = lambda k, v: np.full(k, v, np.uint8)
    spike = _codes(rng, 5632)
    spike[100] = 255
    cases = [((1, 1, 4, 1408), 3, F(-8), F(8), F(1), _codes(rng, 5632)),
             ((1, 1, 1, 5632), 4, F(-20), F(20), F(1), _codes(rng, 5632)),
             ((1, 2, 1, 3000), 3, F(-5), F(5), F(1), z(6000, 77)),
             ((1, 1, 1, 5632), 4, F(-3), F(30), F(2), (np.minimum(spike, 60) + (spike == 255) * 195).astype(np.uint8)),
             ((1, 1, 4, 1500), 4, F(-10), F(10), F(0), _codes(rng, 6000)),
             ((1, 1, 4, 1500), 4, F(-10), F(10), F(-1), _codes(rng, 6000)),
             ((1, 1, 3, 2000), 4, F(-60), F(60), F(30), _codes(rng, 6000)),
             ((1, 1, 4, 1600), 3, F(4), F(-4), F(1), _codes(rng, 6400))]
    for _ in range(n):
        d = int(rng.integers(1408, 4001))
        rows = int(np.ceil(5632 / d))
        shape = (1, 1, rows, d) if rng.random() < 0.7 else (1, rows, 1, d)
        s = F(10 ** rng.uniform(0, 2))
        lo = F(-s * rng.uniform(0.2, 1))
        hi = F(lo + s * rng.uniform(0.5, 2))
        beta = F(1) if rng.random() < 0.5 else F(10 ** rng.uniform(-1.3, 0.6))
        cases.append((shape, 4 if beta != 1 or rng.random() < 0.3 else 3, lo, hi, beta, _codes(rng, rows * d)))
    return cases


def libm_pairs(in_min: F, in_max: F, beta: F) -> list[tuple[int, int, int]]:
    """(kind, argument bits, result bits) of every ``expf`` (0) / ``expm1f`` (1) call ``fill_largedepth_lookup``
    makes for this range and beta, each correctly rounded to float32."""
    from hexnn_import.ops.nnlib_f32 import flt_div_255
    from hexnn_import.ops.nnlib_softmax_device import expf_cr, expm1f_cr

    step = flt_div_255(F(F(beta) * F(in_max - in_min)))
    xs = step * (np.arange(0, 256, 4) - 255).astype(F)
    m1 = np.array([step, F(step * F(2))], F)
    bits = lambda a: a.astype(F).view(np.uint32).tolist()
    pairs = {(0, x, y) for x, y in zip(bits(xs), bits(expf_cr(xs)))}
    pairs |= {(1, x, y) for x, y in zip(bits(m1), bits(expm1f_cr(m1)))}
    return sorted(pairs)


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for shape, n_in, lo, hi, beta, x in cases:
        pairs = libm_pairs(lo, hi, beta if n_in == 4 else F(1))
        parts += [struct.pack("<5i3f", *shape, n_in, lo, hi, beta), x.tobytes(), struct.pack("<i", len(pairs)),
                  np.array(pairs, np.uint32).tobytes()]
    return b"".join(parts)


#: the flat softmax row's golden arrays, case inputs and comparison (same case tuple, same record)
unpack, case_inputs, compare = op_softmax.unpack, op_softmax.case_inputs, op_softmax.compare
