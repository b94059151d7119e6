"""Self-test of tools/hvx's runtime under qemu-hexagon: the stand-ins for the Hexagon toolchain's helper
libraries (float32 division, floorf, roundf, round, fmaxf / fminf, sqrtf, integer division) against numpy and Python's integers.

    python3 tools/hvx/selftest.py [-n 200000]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hvx_build

REC_IN = np.dtype([("a", "<f4"), ("b", "<f4"), ("i", "<i4"), ("j", "<i4"), ("k", "<i8"), ("l", "<i8")])
REC_OUT = np.dtype([("q", "<f4"), ("fl", "<f4"), ("rd", "<f4"), ("mx", "<f4"), ("mn", "<f4"), ("qi", "<i4"), ("ri", "<i4"),
                    ("qu", "<u4"), ("ru", "<u4"), ("qk", "<i8"), ("rk", "<i8"), ("qv", "<u8"), ("rv", "<u8"), ("rdd", "<f8"), ("sq", "<f4")], align=True)  # as the C struct


def records(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random operands: float32 bit patterns of every exponent (subnormals, huge, ties), nonzero divisors."""
    r = np.zeros(n, REC_IN)
    bits = rng.integers(0, 2 ** 32, (2, n), dtype=np.uint64).astype(np.uint32)
    bits[:, : n // 2] &= 0xBFFFFFFF  # half with exponents below 2**1 in magnitude: denser around the subnormals
    r["a"], r["b"] = bits[0].view(np.float32), bits[1].view(np.float32)
    r["a"][:1000] = rng.integers(-300, 300, 1000) / np.float32(4)  # floorf on halves and quarters
    r["i"] = rng.integers(-2 ** 31, 2 ** 31, n)
    r["j"] = rng.integers(-2 ** 31, 2 ** 31, n) >> rng.integers(0, 31, n)
    r["k"] = rng.integers(-2 ** 63, 2 ** 63, n, dtype=np.int64)
    r["l"] = rng.integers(-2 ** 63, 2 ** 63, n, dtype=np.int64) >> rng.integers(0, 63, n)
    r["j"][r["j"] == 0] = 7
    r["l"][r["l"] == 0] = 7
    return r


def check(r: np.ndarray, o: np.ndarray) -> dict[str, int]:
    """Mismatch counts per helper (NaN results compare as NaN, any payload; a NaN operand of fmaxf / fminf
    gives the other one, as numpy's fmax / fmin)."""
    differ = r["a"] != r["b"]  # +0 / -0 order is not specified by C99
    with np.errstate(all="ignore"):
        want_q, want_fl = r["a"] / r["b"], np.floor(r["a"])
        a64 = r["a"].astype(np.float64)  # C's roundf: halves away from zero (exact in float64)
        want_rd = np.where(np.abs(a64) >= 2.0 ** 23, a64, np.copysign(np.floor(np.abs(a64) + 0.5), a64))
        want_sq = np.sqrt(r["a"])  # IEEE: correctly rounded
    same = lambda x, y: (x.view(np.uint32) == y.view(np.uint32)) | (np.isnan(x) & np.isnan(y))
    i, j = r["i"].astype(np.int64), r["j"].astype(np.int64)
    qi = np.abs(i) // np.abs(j) * np.where((i < 0) == (j < 0), 1, -1)  # C truncates toward zero
    iu, ju = r["i"].view(np.uint32).astype(np.int64), r["j"].view(np.uint32).astype(np.int64)
    k, lv = [int(v) for v in r["k"]], [int(v) for v in r["l"]]
    qk = np.array([abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) for a, b in zip(k, lv)], dtype=object)
    rk = np.array([a - q * b for a, q, b in zip(k, qk, lv)], dtype=object)
    ku, lu = [a % 2 ** 64 for a in k], [b % 2 ** 64 for b in lv]
    return {"divsf3": int((~same(o["q"], want_q.astype(np.float32))).sum()),
            "floorf": int((~same(o["fl"], want_fl.astype(np.float32))).sum()),
            "roundf": int((~same(o["rd"], want_rd.astype(np.float32))).sum()),
            "round": int((~same(o["rdd"].astype(np.float32), want_rd.astype(np.float32))).sum()),
            "sqrtf": int((~same(o["sq"], want_sq)).sum()),
            "fmaxf/fminf": int((differ & ~(same(o["mx"], np.fmax(r["a"], r["b"]))
                                           & same(o["mn"], np.fmin(r["a"], r["b"])))).sum()),
            "divsi3/modsi3": int(((o["qi"] != qi) | (o["ri"] != i - qi * j)).sum()),
            "udivsi3/umodsi3": int(((o["qu"] != iu // ju) | (o["ru"] != iu % ju)).sum()),
            "divdi3/moddi3": sum(int(a) != b or int(c) != d for a, b, c, d in zip(o["qk"], qk, o["rk"], rk)),
            "udivdi3/umoddi3": sum(int(a) != b // c or int(d) != b % c for a, b, c, d in zip(o["qv"], ku, lu, o["rv"]))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200000)
    args = ap.parse_args(argv)
    work = pathlib.Path(tempfile.mkdtemp(prefix="hvx_selftest_"))
    unit = f'#include "{hvx_build.HERE / "selftest_runtime.c"}"\n'
    exe = hvx_build.build(pathlib.Path("/nonexistent"), work, "selftest", unit)
    r = records(args.n, np.random.default_rng(1))
    out = np.frombuffer(hvx_build.run(exe, np.int32(args.n).tobytes() + r.tobytes()), REC_OUT)
    bad = check(r, out)
    print(", ".join(f"{k}: {v} of {args.n} wrong" for k, v in bad.items()))
    return int(any(bad.values()))


if __name__ == "__main__":
    sys.exit(main())
