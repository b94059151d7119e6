"""Golden cases of lib_nn's element-wise, pooling and padding kernels, for tests/xs3/test_libnn_golden_ops.py.

    python tools/golden_libnn_ops.py ORACLE_LIBNN_DIR [--out tests/data/golden/libnn] [--seed 1]

``ORACLE_LIBNN_DIR`` is the lib_nn oracle folder (``src/lib_nn``: lib_nn
commit 96bd67c, ``harness/shim.c``, ``harness/make_patched.sh``). As
``tools/golden_libnn.py`` does, it is copied to a temporary folder and built
twice with that tool's ``build()`` (gcc ``-O1 -fPIC -fwrapv -DNN_USE_REF``),
pristine and patched (VLSAT's rounding add in int64); here the copy's
``harness/shim.c`` also gets ``tools/golden_libnn_ops_shim.c`` appended (flat
entry points that fill lib_nn's structs and call ``add_elementwise``,
``avgpool2d``, ``avgpool2d_global``, ``maxpool2d``, ``lookup8``,
``requantize_16_to_8`` and ``pad_ref``). The patched build's outputs are the
expected ones; ``pristine_equal`` records whether the pristine build agrees
(these kernels do not use the patched ``vlsat_single_s16``, so it always should).

Cases per kernel: random ones (parameter fields over their ranges, shifts at
both ends, negative input shifts for add, windows with strides, 1x1 images,
odd channel counts where lib_nn allows them, inputs and parameters that
saturate at both ends), ones from TFLite-like quantization through
``add_params`` / ``global_avg_params``, and (``model``) the real inputs of
three ADD layers and the MEAN layer of
``models/real/keras_mobilenet_v2_1.0_224_int8.tflite`` on a photo, run by
LiteRT (builtin kernels, no delegate, all tensors kept) with the parameters ``add_params`` / ``global_avg_params`` give.

Only inputs, parameters and lib_nn's outputs are written, one
``<kernel>.npz`` per kernel (``np.savez_compressed``): case ``i`` has its
arrays under ``i/<name>`` and ``i/meta`` (JSON), and the folder's README.md
gets a section describing them.
"""
from __future__ import annotations

import ctypes
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))  # this checkout's hexnn_import (an installed copy may be older)
from golden_libnn import build_copy  # noqa: E402
from golden_libnn_lib import _buf, _ptr, golden_parser  # noqa: E402 - buffers with the slack lib_nn's 32-byte reads need
SHIM = Path(__file__).resolve().parent / "golden_libnn_ops_shim.c"
MODEL = ROOT / "models/real/keras_mobilenet_v2_1.0_224_int8.tflite"
KERNELS = ["add_elementwise", "avgpool2d", "avgpool2d_global", "maxpool2d", "pad", "lookup8", "requantize_16_to_8"]


class OpsLib:
    """One build of lib_nn plus the ops shim; :meth:`run` gives a case's output."""

    def __init__(self, path: Path):
        self.lib = ctypes.CDLL(str(path))

    def run(self, kernel: str, a: dict[str, np.ndarray], m: dict[str, Any]) -> np.ndarray:
        return getattr(self, "_" + kernel)(a, m)

    def _add_elementwise(self, a, m):
        x0, x1 = a["x0"], a["x1"]
        y = np.full(x0.size + 64, 0x55, np.int8)
        p = [int(v) for v in a["params"]]
        self.lib.ops_add_elementwise(_ptr(y), _ptr(_buf(x0)), _ptr(_buf(x1)), p[0], p[1], p[2], p[3],
                                     ctypes.c_int32(p[4]), p[5], x0.size)
        return y[:x0.size].reshape(x0.shape)

    def _pool(self, fn, a, m):
        x = a["x"]
        h, w, c = x.shape[-3:]
        (oh, ow), win = m["out_hw"], m["window"]
        y = np.full(oh * ow * c + 64, 0x55, np.int8)
        xb = _buf(x)
        fn(_ptr(y), _ptr(xb), h, w, c, oh, ow, *win)
        return y[:oh * ow * c].reshape(*x.shape[:-3], oh, ow, c)

    def _avgpool2d(self, a, m):
        return self._pool(self.lib.ops_avgpool2d, a, m)

    def _maxpool2d(self, a, m):
        return self._pool(self.lib.ops_maxpool2d, a, m)

    def _avgpool2d_global(self, a, m):
        x = a["x"]
        h, w, c = x.shape[-3:]
        y = np.full(c + 64, 0x55, np.int8)
        self.lib.ops_avgpool2d_global(_ptr(y), _ptr(_buf(x)), ctypes.c_int32(m["bias"]), m["scale"], m["shift"],
                                      h, w, c)
        return y[:c]

    def _lookup8(self, a, m):
        x = a["x"].view(np.uint8)
        y = np.full(x.size + 64, 0x55, np.uint8)
        self.lib.ops_lookup8(_ptr(y), _ptr(_buf(x)), _ptr(_buf(a["lut"].view(np.uint8))), x.size)
        return y[:x.size].view(a["lut"].dtype).reshape(x.shape)

    def _requantize_16_to_8(self, a, m):
        x = a["x"]
        y = np.full(x.size + 64, 0x55, np.int8)
        self.lib.ops_requantize_16_to_8(_ptr(y), _ptr(_buf(x)), x.size)
        return y[:x.size].reshape(x.shape)

    def _pad(self, a, m):
        x = a["x"]
        h, w, c = x.shape[-3:]
        t, b, left, r = m["pads"]
        n = (h + t + b) * (w + left + r) * c
        y = np.full(n + 64, 0x55, np.int8)
        word = (int(m["pad_value"]) & 0xFF) * 0x01010101
        self.lib.ops_pad(_ptr(y), _ptr(_buf(x)), h, w, c, t, b, left, r, ctypes.c_uint32(word))
        return y[:n].reshape(*x.shape[:-3], h + t + b, w + left + r, c)


def build_both(oracle: Path, work: Path) -> tuple[OpsLib, OpsLib]:
    """(patched, pristine) builds of the oracle's lib_nn with the ops shim appended to the harness shim."""
    _, patched, pristine = build_copy(oracle, work, SHIM)
    return OpsLib(patched), OpsLib(pristine)


# ------------------------------------------------------------------------------------------------ random cases

def _i8(rng: np.random.Generator, shape, mode: str = "full") -> np.ndarray:
    if mode == "max":
        return np.full(shape, 127, np.int8)
    if mode == "min":
        return np.full(shape, -128, np.int8)
    if mode == "ends":
        return rng.choice(np.array([-128, -127, 126, 127], np.int8), size=shape)
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def _case(mode: str, arrays: dict[str, np.ndarray], **meta: Any) -> dict[str, Any]:
    return {"arrays": arrays, "meta": dict(meta, mode=mode)}


def _rand_quant(rng: np.random.Generator) -> tuple[float, int]:
    return float(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))), int(rng.integers(-128, 128))


def add_cases(rng: np.random.Generator, n: int) -> list[dict]:
    from hexnn_import.xs3.errors import XS3Error
    from hexnn_import.xs3.kernels_add import add_params

    cases = []

    def params(*p: int) -> np.ndarray:
        return np.array(p, np.int64)

    for _ in range(n):  # fields over their ranges (outputs mostly in range: bias near -sum)
        size = int(rng.integers(1, 300))
        shr0, shr1 = (int(v) for v in rng.integers(-24, 32, 2))
        m0, m1 = (int(v) for v in rng.integers(-2 ** 15, 2 ** 15, 2))
        out_shr = int(rng.integers(1, 32))
        bias = int(np.clip(rng.integers(-2 ** 31, 2 ** 31) >> int(rng.integers(0, 31)), -2 ** 31, 2 ** 31 - 1))
        cases.append(_case("full", {"x0": _i8(rng, size), "x1": _i8(rng, size),
                                    "params": params(shr0, m0, shr1, m1, bias, out_shr)}))
    for _ in range(n):  # negative input shifts (x << k) with products that wrap int32 in the C
        size = int(rng.integers(1, 200))
        shr0, shr1 = (int(v) for v in rng.integers(-24, -8, 2))
        m0, m1 = (int(v) for v in rng.integers(-2 ** 15, 2 ** 15, 2))
        cases.append(_case("wrap", {"x0": _i8(rng, size), "x1": _i8(rng, size),
                                    "params": params(shr0, m0, shr1, m1, int(rng.integers(-2 ** 31, 2 ** 31)),
                                                     int(rng.integers(20, 32)))}))
    edges = [(0, 1, 0, 1, 0, 1), (0, 32767, 0, -32768, 0, 31), (7, 1000, -7, -1000, 12345, 1),
             (31, 32767, 31, 32767, -5, 1), (-24, 1, -24, -1, 0, 31), (0, 1, 0, 1, 2 ** 31 - 1, 31),
             (0, 1, 0, 1, -2 ** 31, 31), (-6, 16384, -6, 16384, 0, 20), (0, 3, 0, 5, -1, 1), (8, 5, -1, 7, 3, 2)]
    for e in edges:  # shifts at both ends
        size = int(rng.integers(1, 300))
        cases.append(_case("edge", {"x0": _i8(rng, size), "x1": _i8(rng, size), "params": params(*e)}))
    for mode in ("max", "min", "ends"):  # saturation at both ends
        for _ in range(3):
            size = int(rng.integers(1, 100))
            m0, m1 = (int(v) for v in rng.integers(2 ** 12, 2 ** 15, 2))
            cases.append(_case("sat", {"x0": _i8(rng, size, mode), "x1": _i8(rng, size, mode),
                                       "params": params(-6, m0, -6, m1, int(rng.integers(-2 ** 20, 2 ** 20)),
                                                        int(rng.integers(10, 18)))}, input=mode))
    made = 0
    while made < n:  # TFLite-like quantization through add_params
        (s0, z0), (s1, z1), (so, zo) = _rand_quant(rng), _rand_quant(rng), _rand_quant(rng)
        try:
            p = add_params(s0, z0, s1, z1, so, zo)
        except XS3Error:
            continue
        size = int(rng.integers(1, 500))
        cases.append(_case("real", {"x0": _i8(rng, size), "x1": _i8(rng, size), "params": p.as_array()},
                           quant=[s0, z0, s1, z1, so, zo]))
        made += 1
    return cases


def _window_case(rng: np.random.Generator, kernel: str, mode: str, c: int | None = None,
                 one_by_one: bool = False) -> dict:
    c = c if c is not None else int(rng.choice([4, 8, 12, 16, 20, 32, 36, 52, 64]))
    if one_by_one:
        kh = kw = 1
        sv = sh = 1
        h = w = 1
        r0 = c0 = 0
        oh = ow = 1
    else:
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        sv, sh = (int(v) for v in rng.integers(1, 4, 2))
        oh, ow = (int(v) for v in rng.integers(1, 5, 2))
        r0, c0 = (int(v) for v in rng.integers(0, 3, 2))
        h = r0 + sv * (oh - 1) + kh + int(rng.integers(0, 3))
        w = c0 + sh * (ow - 1) + kw + int(rng.integers(0, 3))
    x = _i8(rng, (1, h, w, c), {"rand": "full"}.get(mode, mode))
    return _case(mode, {"x": x}, window=[kh, kw, r0, c0, sv, sh], out_hw=[oh, ow])


def pool_cases(kernel: str, rng: np.random.Generator, n: int) -> list[dict]:
    cases = [_window_case(rng, kernel, "rand") for _ in range(n)]
    cases += [_window_case(rng, kernel, m) for m in ("max", "min", "ends") for _ in range(3)]
    cases += [_window_case(rng, kernel, "rand", c=4, one_by_one=True),
              _window_case(rng, kernel, "max", one_by_one=True)]
    for kh, kw, sv, sh in [(2, 2, 2, 2), (2, 2, 1, 1), (2, 2, 2, 1), (3, 3, 2, 2), (7, 7, 1, 1), (1, 1, 2, 2),
                           (3, 5, 1, 3), (4, 4, 4, 4)]:  # the 2x2 path and the generic one, pow2 and not
        oh, ow = 3, 2
        h, w = sv * (oh - 1) + kh, sh * (ow - 1) + kw
        c = int(rng.choice([4, 16, 20, 36]))
        cases.append(_case("shape", {"x": _i8(rng, (1, h, w, c))}, window=[kh, kw, 0, 0, sv, sh], out_hw=[oh, ow]))
    return cases


def global_cases(rng: np.random.Generator, n: int) -> list[dict]:
    from hexnn_import.xs3.errors import XS3Error
    from hexnn_import.xs3.kernels_pool import global_avg_params

    cases = []

    def shape() -> tuple[int, int, int, int]:
        return (1, int(rng.integers(1, 8)), int(rng.integers(1, 8)), int(rng.integers(1, 70)))  # odd C too

    for _ in range(n):
        sh = shape()
        shift = int(rng.integers(0, 32))
        scale = int(rng.integers(-128, 128))
        bias = int(rng.integers(-2 ** 31 + 2 ** 24, 2 ** 31 - 2 ** 24) >> int(rng.integers(0, 31)))
        cases.append(_case("full", {"x": _i8(rng, sh)}, bias=bias, scale=scale, shift=shift))
    for shift, scale, bias in [(0, 1, 0), (0, -128, 0), (31, 127, 2 ** 30), (31, 1, -2 ** 30), (1, 1, 0), (1, -1, 1),
                               (0, 127, 2 ** 31 - 2 ** 24), (24, 64, 0), (16, -64, -123456)]:
        cases.append(_case("edge", {"x": _i8(rng, shape())}, bias=bias, scale=scale, shift=shift))
    for mode in ("max", "min", "ends"):
        for _ in range(3):
            cases.append(_case("sat", {"x": _i8(rng, shape(), mode)}, bias=int(rng.integers(-2 ** 12, 2 ** 12)),
                               scale=int(rng.choice([-128, -100, 100, 127])), shift=int(rng.integers(0, 6)),
                               input=mode))
    cases.append(_case("1x1", {"x": _i8(rng, (1, 1, 1, 5))}, bias=0, scale=1, shift=0))
    made = 0
    while made < n:
        sh = shape()
        (si, zi), (so, zo) = _rand_quant(rng), _rand_quant(rng)
        try:
            bias, scale, shift = global_avg_params(si, zi, so, zo, sh[1] * sh[2])
        except XS3Error:
            continue
        cases.append(_case("real", {"x": _i8(rng, sh)}, bias=bias, scale=scale, shift=shift, quant=[si, zi, so, zo]))
        made += 1
    return cases


def pad_cases(rng: np.random.Generator, n: int) -> list[dict]:
    cases = []
    for i in range(n + 6):
        h, w = (int(v) for v in rng.integers(1, 7, 2))
        c = int(rng.choice([4, 8, 12, 24, 36]))
        pads = [int(v) for v in rng.integers(0, 4, 4)]
        value = int(rng.integers(-128, 128))
        if i >= n:  # edges: no padding, one side only, 1x1 images, extreme pad values
            pads = [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [3, 3, 3, 3], [0, 1, 1, 0], [2, 0, 0, 0]][i - n]
            value = [-128, 127, 0, -1, -128, 127][i - n]
            if i - n in (2, 3):
                h = w = 1
        cases.append(_case("rand" if i < n else "edge", {"x": _i8(rng, (1, h, w, c))}, pads=pads, pad_value=value))
    return cases


def lookup_cases(rng: np.random.Generator, n: int) -> list[dict]:
    from hexnn_import.xs3.kernels_misc import clamp_lut

    codes = np.arange(-128, 128, dtype=np.int8)
    cases = [_case("all_codes", {"x": codes, "lut": rng.integers(-128, 128, 256, dtype=np.int8)})]
    cases.append(_case("all_codes_u8", {"x": codes, "lut": rng.integers(0, 256, 256, dtype=np.uint8)}))
    for _ in range(n):
        cases.append(_case("rand", {"x": _i8(rng, int(rng.integers(1, 400))),
                                    "lut": rng.integers(-128, 128, 256, dtype=np.int8)}))
    for lo, hi in [(-128, 127), (0, 127), (-128, 0), (-5, 70), (10, 10), (-1, 1)]:
        cases.append(_case("clamp", {"x": codes, "lut": clamp_lut(lo, hi)}, clamp=[lo, hi]))
    return cases


def requant_cases(rng: np.random.Generator, n: int) -> list[dict]:
    cases = [_case("all_codes", {"x": np.arange(-2 ** 15, 2 ** 15, dtype=np.int16)})]
    for _ in range(n):
        cases.append(_case("rand", {"x": rng.integers(-2 ** 15, 2 ** 15, int(rng.integers(1, 300)), dtype=np.int16)}))
    edge = np.array([-32768, -32767, -32641, -32640, -32639, -32513, -32512, -129, -128, -127, -1, 0, 127, 128, 383,
                     384, 32383, 32384, 32511, 32512, 32767], np.int16)
    cases.append(_case("edge", {"x": edge}))
    return cases


# ------------------------------------------------------------------------------------------------ model cases

def _photo_input(lite: Any, k: int) -> np.ndarray:
    """Photo ``k`` (of the repository's test crops) on the model's int8 input, as bench/speed_real.py maps it."""
    from hexnn_import.testing.photos import photo_batch

    d = lite.get_input_details()[0]
    _, h, w, c = (int(v) for v in d["shape"])
    scale, zp = float(d["quantization"][0]), int(d["quantization"][1])
    lo, hi = (-128 - zp) * scale, (127 - zp) * scale
    img = lo + photo_batch(k + 1, h, w, c)[k] / 255.0 * (hi - lo)
    return np.clip(np.round(img / scale) + zp, -128, 127).astype(np.int8)[None]


def model_cases(path: Path, n_add: int = 3) -> dict[str, list[dict]]:
    """The real inputs of ``n_add`` ADD layers and the MEAN layer, on photo 0, with this project's parameters."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from hexnn_import.xs3.kernels_add import add_params
    from hexnn_import.xs3.kernels_pool import global_avg_params

    lite = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                       experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    lite.allocate_tensors()
    lite.set_tensor(lite.get_input_details()[0]["index"], _photo_input(lite, 0))
    lite.invoke()
    quant = {t["index"]: (float(t["quantization"][0]), int(t["quantization"][1])) for t in lite.get_tensor_details()}
    ops = lite._get_ops_details()
    adds = [o for o in ops if o["op_name"] == "ADD"]
    out: dict[str, list[dict]] = {"add_elementwise": [], "avgpool2d_global": []}
    for o in adds[-n_add:]:  # the deepest (smallest) ADD layers keep the files small
        a, b = (int(i) for i in o["inputs"])
        y = int(o["outputs"][0])
        (s0, z0), (s1, z1), (so, zo) = quant[a], quant[b], quant[y]
        p = add_params(s0, z0, s1, z1, so, zo)
        out["add_elementwise"].append(_case("model", {"x0": lite.get_tensor(a), "x1": lite.get_tensor(b),
                                                      "params": p.as_array()},
                                            source=f"{path.name} op {o['index']} ADD", quant=[s0, z0, s1, z1, so, zo]))
    for o in ops:
        if o["op_name"] != "MEAN":
            continue
        x, y = int(o["inputs"][0]), int(o["outputs"][0])
        xv = lite.get_tensor(x)
        (si, zi), (so, zo) = quant[x], quant[y]
        bias, scale, shift = global_avg_params(si, zi, so, zo, xv.shape[1] * xv.shape[2])
        out["avgpool2d_global"].append(_case("model", {"x": xv}, bias=bias, scale=scale, shift=shift,
                                             source=f"{path.name} op {o['index']} MEAN", quant=[si, zi, so, zo]))
    return out


# ------------------------------------------------------------------------------------------------ writing

def write_kernel(path: Path, kernel: str, cases: list[dict], patched: OpsLib, pristine: OpsLib) -> int:
    arrays: dict[str, np.ndarray] = {}
    for i, case in enumerate(cases):
        meta = dict(case["meta"], kernel=kernel)
        y = patched.run(kernel, case["arrays"], meta)
        meta["pristine_equal"] = bool(np.array_equal(y, pristine.run(kernel, case["arrays"], meta)))
        for name, a in case["arrays"].items():
            arrays[f"{i}/{name}"] = np.asarray(a)
        arrays[f"{i}/y"] = y
        arrays[f"{i}/meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)
    return len(cases)


README_SECTION = """
## Element-wise, pooling and padding kernels

Written by `tools/golden_libnn_ops.py` (regenerate: `python tools/golden_libnn_ops.py <lib_nn oracle folder>
[--out tests/data/golden/libnn] [--seed 1]`), which builds lib_nn as `tools/golden_libnn.py` does plus the flat
entry points of `tools/golden_libnn_ops_shim.c`. Read by `tests/xs3/test_libnn_golden_ops.py`. Expected outputs
are the patched build's (`pristine_equal`: unmodified lib_nn agrees). Case `i`: its inputs `i/<name>`, lib_nn's
output `i/y`, `i/meta` JSON (`kernel`, `mode`, parameters, `source` for model cases).

- `add_elementwise`: `i/x0`, `i/x1` int8, `i/params` int64 `[shr0, m0, shr1, m1, bias, out_shr]`
  (nn_add_params_t).
- `avgpool2d`, `maxpool2d`: `i/x` int8 `[1, H, W, C]`; meta `window` `[K_h, K_w, start_row, start_col,
  stride_v, stride_h]`, `out_hw`.
- `avgpool2d_global`: `i/x` int8 `[1, H, W, C]`; meta `bias`, `scale`, `shift`; `i/y` is `[C]`.
- `pad`: `i/x` int8 `[1, H, W, C]`; meta `pads` `[top, bottom, left, right]`, `pad_value` (int8; the C gets the
  word `0x01010101 * (pad_value & 0xFF)`).
- `lookup8`: `i/x` int8, `i/lut` (256 int8 or uint8; `y` has the table's dtype).
- `requantize_16_to_8`: `i/x` int16.

Modes: `full` / `rand` random fields or inputs, `edge` shifts and values at both ends, `wrap` (add: input shifts
-24..-9 whose int32 products wrap in the C), `sat` / `max` / `min` / `ends` outputs saturating at both ends,
`shape` (pooling: the 2x2 path, generic windows with power-of-two and other pixel counts), `real` parameters from
random TFLite quantization through `add_params` / `global_avg_params`, `clamp` (`clamp_lut` tables), `model`:
real inputs of ADD / MEAN layers of `models/real/keras_mobilenet_v2_1.0_224_int8.tflite` (LiteRT, photo 0).

| kernel | cases | by mode |
|---|---|---|
"""

MARK = "\n## Element-wise, pooling and padding kernels\n"


def main() -> None:
    ap = golden_parser(__doc__)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    n = a.per_mode
    models = model_cases(MODEL)
    cases = {
        "add_elementwise": add_cases(rng, n) + models["add_elementwise"],
        "avgpool2d": pool_cases("avgpool2d", rng, n),
        "avgpool2d_global": global_cases(rng, n) + models["avgpool2d_global"],
        "maxpool2d": pool_cases("maxpool2d", rng, n),
        "pad": pad_cases(rng, n),
        "lookup8": lookup_cases(rng, n),
        "requantize_16_to_8": requant_cases(rng, n),
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        patched, pristine = build_both(a.oracle.resolve(), Path(tmp))
        for kernel in KERNELS:
            k = write_kernel(a.out / f"{kernel}.npz", kernel, cases[kernel], patched, pristine)
            modes: dict[str, int] = {}
            for c in cases[kernel]:
                modes[c["meta"]["mode"]] = modes.get(c["meta"]["mode"], 0) + 1
            rows.append(f"| {kernel} | {k} | {', '.join(f'{m} {v}' for m, v in modes.items())} |")
            size = (a.out / f"{kernel}.npz").stat().st_size
            print(f"{kernel}: {k} cases -> {a.out / (kernel + '.npz')} ({size // 1024} KB)")
    readme = a.out / "README.md"
    text = readme.read_text() if readme.exists() else "# Golden cases of lib_nn's C kernels\n"
    after = ""
    if MARK in text:  # this tool's section is replaced; the sections after it stay
        text, rest = text[:text.index(MARK)], text[text.index(MARK) + len(MARK):]
        after = rest[rest.find("\n## "):] if "\n## " in rest else ""
    readme.write_text(text.rstrip("\n") + "\n" + README_SECTION + "\n".join(rows) + "\n" + after)


if __name__ == "__main__":
    main()
