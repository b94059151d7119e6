"""QuantizedInstanceNorm_8_d32 on nnlib's device code (op_instancenorm_hvx.c, whole): cases, I/O, comparison.

nnlib registers the op with ``instancenorm_hvx_check`` and ``instancenorm_execute_wrapper``: per batch it zaps the
right (and, for an odd height, one bottom) padding to 0x80, finds each channel's sums, sum of squares, max and min
with the asm ``getstats_asm``, works mean and 1/sd in its 16-bit pseudo-float qf16 (vqf16.h, src/qf16.c; the asm
``visqrt64_asm`` with ``lut_isqrt_asm``), the output range from the normalized extremes, and writes the codes with
the asm ``renorm_asm``. The whole file is compiled unedited with nnlib's own ``nn_graph.h``, src/qf16.c's
conversions verbatim beside it.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "instancenorm_d32"
OPS = ("QuantizedInstanceNorm_8_d32",)
SOURCE = "hexagon/ops/src/op_instancenorm_hvx.c"
FUNCTIONS = ["instancenorm_hvx_execute", "instancenorm_analyze", "instancenorm_requantize", "instancenorm_hvx_check",
             "i2q", "uli2q", "f2q", "q2f"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("getstats_h", "renorm_h", "visqrt64_h", "padzap_d32", "vmemset_h",
                                          "nn_os_fast")]
HEADERS: list[str] = []
HARNESS = "harness_instancenorm_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
#: ldexpf for src/qf16.c's q2f (the freestanding runtime has none): exact IEEE scaling by 2**e, in integers (ours)
LDEXPF = """
float ldexpf(float x, int e) {
	union { float f; uint32_t u; } v = { x };
	uint32_t sign = v.u & 0x80000000u, m = v.u & 0x007fffffu;
	int ex = (int)((v.u >> 23) & 0xff);
	if (ex == 0xff || (ex == 0 && m == 0)) return x;
	if (ex == 0) { while (!(m & 0x00800000u)) { m <<= 1; ex--; } ex++; } else m |= 0x00800000u;
	ex += e;
	if (ex >= 0xff) { v.u = sign | 0x7f800000u; return v.f; }
	if (ex >= 1) { v.u = sign | ((uint32_t)ex << 23) | (m & 0x007fffffu); return v.f; }
	int sh = 1 - ex;                       /* subnormal: round to nearest, ties to even */
	if (sh > 25) { v.u = sign; return v.f; }
	uint32_t q = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
	if (rem > half || (rem == half && (q & 1))) q++;
	v.u = sign | q; return v.f;
}
"""


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``nn_tensor_addressing_d32`` (src/shape_util.c) verbatim, the whole op_instancenorm_hvx.c,
    then src/qf16.c's ``norm32``, ``cl032``, ``i2q``, ``uli2q``, ``q2f`` and ``f2q`` (with its union) verbatim (after it: qf16.h and
    qftables.h have no include guards)."""
    return (f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_addressing_d32"])
            + f'#include "{nnlib / SOURCE}"\n' + LDEXPF
            + hvx_build.extract_functions(nnlib / "hexagon/src/qf16.c", ["norm32", "cl032", "i2q", "uli2q", "q2f"])
            + hvx_build.extract_span(nnlib / "hexagon/src/qf16.c", r"^typedef union", r"^struct qf16 addqf",
                                     inclusive=False))


def _case(rng: np.random.Generator, shape: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 14)),
                      int(rng.integers(1, 100))]
    kind = int(rng.integers(0, 4))
    if kind == 0:                       # uniform codes
        x = rng.integers(0, 256, shape)
    elif kind == 1:                     # normal about a per-channel centre
        x = rng.normal(rng.uniform(40, 220, shape[3]), rng.uniform(1, 40, shape[3]), shape)
    elif kind == 2:                     # narrow: a few codes per channel
        x = rng.integers(0, 3, shape) + rng.integers(0, 250, shape[3])
    else:                               # one outlier row on a flat field
        x = np.full(shape, rng.integers(0, 256)); x[:, 0] = rng.integers(0, 256, x[:, 0].shape)
    lo = -rng.uniform(0, 8)
    return {"hdr": shape, "range": np.array([lo, lo + rng.uniform(0.1, 16)], F),
            "x": np.clip(np.rint(x), 0, 255).astype(np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (depth 1 / 31 / 32 / 33 / 64 / 100, heights 1-3 (the odd-row zap), widths 1-5 (each right padding),
    a constant channel, an all-constant input) and ``n`` random ones (uniform, normal, narrow or outlier codes)."""
    out = [_case(rng, [1, h, w, d]) for d in (1, 31, 32, 33, 64, 100) for h, w in ((1, 1), (2, 3), (3, 5), (1, 4))]
    c = _case(rng, [1, 4, 6, 40]); c["x"][..., 7] = 99; out.append(c)
    c = _case(rng, [2, 3, 3, 20]); c["x"][:] = 17; out.append(c)
    return out + [_case(rng) for _ in range(n)]


#: the harness framing of a one-input d32 op (op_common): stdin, golden arrays, the engine's inputs of a case
pack, unpack, case_inputs = op_common.unary_d32_pack, op_common.unary_d32_unpack, op_common.unary_d32_case_inputs


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range -, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        try:
            q, mn, mx = run_op("QuantizedInstanceNorm_8_d32", case_inputs(gold, i))
        except HexnnError as e:
            ok, msg = False, f"engine error {e}"
        else:
            q, dev, _, ok = op_common.d32_run(q, mn, mx, gold, i)
            d = (q.astype(np.int16) - dev) if q.shape == dev.shape else np.ones(1)
            msg = (f"status {gold['status'][i]}; {int((d != 0).sum())} codes differ (max {int(np.abs(d).max())}); "
                   f"range [{mn.reshape(-1)[0]!r}, {mx.reshape(-1)[0]!r}] vs "
                   f"[{gold['out_min'][i]!r}, {gold['out_max'][i]!r}]")
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
