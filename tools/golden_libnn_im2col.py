"""Golden cases of lib_nn's conv2d_im2col C kernel, for tests/xs3/test_libnn_golden_im2col.py.

    python tools/golden_libnn_im2col.py ORACLE_LIBNN_DIR [--out tests/data/golden/libnn] [--seed 1]

``ORACLE_LIBNN_DIR`` is the lib_nn oracle folder (``src/lib_nn``: lib_nn
commit 96bd67c, ``harness/shim.c``, ``harness/make_patched.sh``). As
``tools/golden_libnn.py`` does, it is copied to a temporary folder and built
with that tool's ``build()`` (gcc ``-O1 -fPIC -fwrapv -DNN_USE_REF``), the
copy's ``harness/shim.c`` getting ``tools/golden_libnn_im2col_shim.c``
appended (``im2col_conv2d``: ``conv2d_im2col_init`` with one job for the whole
output, then ``conv2d_im2col``). Three builds:

- patched (``make_patched.sh``: VLSAT's rounding add in int64): the expected
  outputs;
- pristine: ``pristine_equal`` records whether it agrees (it differs only
  where its int32 rounding add overflows);
- patched with ``-DCONFIG_SYMMETRIC_SATURATION_conv2d_im2col=1``:
  ``symmetric_equal`` records whether the symmetric build agrees (the
  default build's clamp is already [-127, 127]; xs3/kernels_im2col.py).

Cases: the random BSO modes of ``tools/golden_libnn_cases.py`` (``full``,
``full0``, ``real``, ``nz``, and the saturating ``sat``, ``satx``,
``satpad``), windows from its ``rand_window`` (padding on every side,
strides 1..3; ``satpad``: windows reaching above and below the image), X_c in
{1, 2, 3, 4, 5, 8, 12, 20, 36}, Y_c a multiple of 4 (4..40, so tail groups of
4, 8, 12 channels too), K_h * K_w * X_c from 1 to several hundred; plus
``onepix``: single-pixel outputs with any Y_c (the only outputs whose Y_c need
not be a multiple of 4). ``order_sensitive``: conv2d_deep's steps and order
(32-channel chunks of each tap, padded rows first) would give other outputs
than conv2d_im2col's 32-byte chunks of the whole window in natural order;
``satpad`` draws until it is true.

Output: ``<out>/conv2d_im2col.npz`` (``np.savez_compressed``), case ``i``:
``i/x`` input ``[1, H, W, X_c]``, ``i/k`` weights in the kernel's layout
``[Y_c, R]`` (``im2col_weights``), ``i/bso``, ``i/y`` lib_nn's output,
``i/meta`` JSON (kernel, mode, zero point, window, output size, y_c, source,
``pristine_equal``, ``symmetric_equal``, ``order_sensitive``). The folder's
README.md is not touched.
"""
from __future__ import annotations

import ctypes
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))
import golden_libnn  # noqa: E402
from golden_libnn import build  # noqa: E402
from golden_libnn_cases import _outputs, rand_bso, rand_int8, rand_window  # noqa: E402
from golden_libnn_lib import _buf, _ptr, golden_parser  # noqa: E402 - buffers with the slack lib_nn's 32-byte reads need

from hexnn_import.xs3.bso import pack_bso  # noqa: E402
from hexnn_import.xs3.kernels_conv import accumulate_rows  # noqa: E402
from hexnn_import.xs3.kernels_im2col import im2col_weights  # noqa: E402
from hexnn_import.xs3.vpu import chunked_steps, vlmaccr  # noqa: E402
from hexnn_import.xs3.window import Window, patches  # noqa: E402

SHIM = Path(__file__).resolve().parent / "golden_libnn_im2col_shim.c"
KERNEL = "conv2d_im2col"
MODES = ("full", "full0", "real", "nz", "sat", "satx", "satpad")
X_CHANNELS = (1, 2, 3, 4, 5, 8, 12, 20, 36)
SYMMETRIC_FLAG = "-DCONFIG_SYMMETRIC_SATURATION_conv2d_im2col=1"


class Im2colLib:
    """One build of lib_nn plus the im2col shim; :meth:`run` gives a case's output."""

    def __init__(self, path: Path):
        self.lib = ctypes.CDLL(str(path))

    def run(self, case: dict[str, Any]) -> np.ndarray:
        m = case["meta"]
        _, xh, xw, xc = case["x"].shape
        (oh, ow), yc = m["out_hw"], m["y_c"]
        (kh, kw), (r0, c0), (sv, sh) = m["window"]["shape"], m["window"]["start"], m["window"]["stride"]
        y = np.full(oh * ow * yc + 64, 0x55, np.int8)
        col = np.full(-(-(kh * kw * xc) // 32) * 32 + 64, 0x55, np.int8)  # the C zeroes what it uses
        x, k, bso = _buf(case["x"]), _buf(case["k"]), np.ascontiguousarray(case["bso"], np.int16)
        self.lib.im2col_conv2d(_ptr(y), _ptr(x), _ptr(col), _ptr(k), _ptr(bso), ctypes.c_int(int(m["zero_point"])),
                               xh, xw, xc, oh, ow, yc, kh, kw, r0, c0, sv, sh)
        assert not np.any(y[oh * ow * yc:] != 0x55), "conv2d_im2col wrote past its output"
        return y[:oh * ow * yc].reshape(1, oh, ow, yc)


def build_all(oracle: Path, work: Path) -> tuple[Im2colLib, Im2colLib, Im2colLib]:
    """(patched, pristine, patched symmetric) builds of the oracle's lib_nn with the im2col shim appended."""
    copy, patched, pristine = golden_libnn.build_copy(oracle, work, SHIM)
    flags = golden_libnn.GCC_FLAGS
    golden_libnn.GCC_FLAGS = [*flags, SYMMETRIC_FLAG]  # build() reads the module's flags when it runs
    try:
        symmetric = build(copy / "src_patched", copy / "harness", work / "build_patched_sym")
    finally:
        golden_libnn.GCC_FLAGS = flags
    return Im2colLib(patched), Im2colLib(pristine), Im2colLib(symmetric)


def _order_sensitive(x: np.ndarray, ohwi: np.ndarray, p, zp: int, win: Window, out_hw: tuple[int, int]) -> bool:
    """Whether conv2d_deep's steps and order would give other outputs than conv2d_im2col's (module doc)."""
    yc, kh, kw, xc = ohwi.shape
    n = kh * kw * xc
    im2col = vlmaccr(p.bias, patches(x, win, out_hw, zp).reshape(-1, n), ohwi.reshape(yc, n).T, chunked_steps([n]))
    deep = accumulate_rows(x, win, out_hw, zp, p.bias, ohwi.reshape(yc, kh, kw * xc), chunked_steps([xc] * (kh * kw)))
    return bool(np.any(_outputs(im2col, p) != _outputs(deep, p)))


def _draw(rng: np.random.Generator, mode: str) -> dict[str, Any]:
    pad_rows = mode == "satpad"
    xc = int(rng.choice(X_CHANNELS))
    kh, kw = int(rng.integers(3 if pad_rows else 1, 5)), int(rng.integers(1, 5))
    yc = 4 * int(rng.integers(1, 11))
    xh, xw, win, out_hw = rand_window(rng, kh, kw, pad_rows)
    if mode == "onepix":  # any Y_c: a single output pixel is the only one stored (no alignment to keep)
        yc, out_hw = int(rng.integers(1, 40)), (1, 1)
    x = rand_int8(rng, (1, xh, xw, xc), "full" if mode == "onepix" else mode)
    ohwi = rand_int8(rng, (yc, kh, kw, xc), "full" if mode == "onepix" else mode)
    zp = int(rng.integers(-128, 128))
    p = rand_bso(rng, yc, "full0" if mode == "onepix" else mode, ohwi.reshape(yc, -1).astype(np.int64).sum(1))
    meta = dict(kernel=KERNEL, mode=mode, zero_point=zp, out_hw=list(out_hw), y_c=yc, source="random",
                window=dict(shape=[kh, kw], start=[win.start_row, win.start_col], stride=[win.stride_v, win.stride_h]),
                order_sensitive=_order_sensitive(x, ohwi, p, zp, win, out_hw))
    return dict(x=x, k=im2col_weights(ohwi), bso=pack_bso(p), meta=meta)


def random_case(rng: np.random.Generator, mode: str) -> dict[str, Any]:
    """A random case; ``satpad`` draws until conv2d_im2col's step order shows against conv2d_deep's."""
    for _ in range(40 if mode == "satpad" else 1):
        case = _draw(rng, mode)
        if case["meta"]["order_sensitive"]:
            break
    return case


def random_cases(rng: np.random.Generator, per_mode: int, onepix: int) -> list[dict[str, Any]]:
    return [random_case(rng, mode) for mode in MODES for _ in range(per_mode)] + \
        [random_case(rng, "onepix") for _ in range(onepix)]


def write_cases(path: Path, cases: list[dict], patched: Im2colLib, pristine: Im2colLib, symmetric: Im2colLib) -> int:
    """Run every case through the builds and write the ``.npz``; returns the number of cases."""
    arrays: dict[str, np.ndarray] = {}
    for i, case in enumerate(cases):
        y = patched.run(case)
        meta = dict(case["meta"], pristine_equal=bool(np.array_equal(y, pristine.run(case))),
                    symmetric_equal=bool(np.array_equal(y, symmetric.run(case))))
        arrays.update({f"{i}/x": case["x"], f"{i}/k": case["k"], f"{i}/bso": case["bso"], f"{i}/y": y,
                       f"{i}/meta": np.array(json.dumps(meta, sort_keys=True))})
    np.savez_compressed(path, **arrays)
    return len(cases)


def main() -> None:
    ap = golden_parser(__doc__, "random cases per mode")
    ap.add_argument("--onepix", type=int, default=6, help="single-pixel cases with any Y_c")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        patched, pristine, symmetric = build_all(a.oracle.resolve(), Path(tmp))
        cases = random_cases(rng, a.per_mode, a.onepix)
        n = write_cases(a.out / f"{KERNEL}.npz", cases, patched, pristine, symmetric)
    modes: dict[str, int] = {}
    for c in cases:
        modes[c["meta"]["mode"]] = modes.get(c["meta"]["mode"], 0) + 1
    print(f"{KERNEL}: {n} cases ({', '.join(f'{m} {k}' for m, k in modes.items())}) -> {a.out / (KERNEL + '.npz')}")


if __name__ == "__main__":
    main()
