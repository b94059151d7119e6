"""hexnn_import.xs3's conv2d_im2col against XMOS lib_nn's own C kernel, bit for bit (hexnn-import issue 23).

``tests/data/golden/libnn/conv2d_im2col.npz`` holds inputs, kernel-layout
weights, BSO tensors, windows and the outputs of lib_nn's portable C
``conv2d_im2col`` (commit 96bd67c, written by
``tools/golden_libnn_im2col.py``): the random BSO modes of the other kernels,
saturating accumulators (windows padded above and below included), windows
padded on every side, strides, X_c from 1 to 36, tail channel groups and
single-pixel outputs of any Y_c. Every case goes through
:func:`conv2d_im2col` with both option sets and must give lib_nn's output
exactly. A property test checks that, where no accumulator can saturate,
conv2d_im2col and conv2d_deep compute the same layer (up to conv2d_im2col's
[-127, 127] clamp).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.testing.libnn_golden import GoldenCase, load_cases
from hexnn_import.xs3.bso import BSOParams, pack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_conv import conv2d_deep, deep_weights
from hexnn_import.xs3.kernels_im2col import conv2d_im2col, im2col_weights, kernel_row_elements
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions, can_saturate
from hexnn_import.xs3.window import Window

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "libnn" / "conv2d_im2col.npz"
#: cases the generator writes with its defaults (12 per mode x 7 modes + 6 single-pixel ones)
N_CASES = 90
SYMMETRIC = VPUOptions(symmetric_output=True)


Case = GoldenCase


def run(c: Case, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """The case through the simulated conv2d_im2col."""
    return conv2d_im2col(c.x, c.k, c.bso, c.meta["zero_point"], c.window, c.out_hw, options)


def load() -> tuple[Case, ...]:
    return load_cases(GOLDEN)


@pytest.mark.parametrize("options", [DEFAULT_OPTIONS, SYMMETRIC], ids=["default", "symmetric"])
def test_conv2d_im2col_equals_lib_nn(options: VPUOptions) -> None:
    cases = load()
    assert len(cases) == N_CASES
    bad = []
    for i, c in enumerate(cases):
        got = run(c, options)
        assert got.shape == c.y.shape and got.dtype == c.y.dtype == np.int8, (i, got.shape, got.dtype)
        if not np.array_equal(got, c.y):
            d = int(np.abs(got.astype(np.int64) - c.y.astype(np.int64)).max())
            bad.append(f"case {i} ({c.meta['mode']}): max |diff| {d}")
    assert not bad


def _pads(c: Case) -> set[str]:
    w, (oh, ow), (xh, xw) = c.window, c.out_hw, c.x.shape[1:3]
    sides = {"top": w.start_row < 0, "left": w.start_col < 0,
             "bottom": w.start_row + (oh - 1) * w.stride_v + w.k_h > xh,
             "right": w.start_col + (ow - 1) * w.stride_h + w.k_w > xw}
    return {s for s, on in sides.items() if on}


def test_cases_reach_what_the_c_defines() -> None:
    """Every mode; padding on each side; strides; X_c, Y_c and patch sizes both sides of 32; the C's quirks."""
    cases = load()
    modes: dict[str, int] = {}
    for c in cases:
        modes[c.meta["mode"]] = modes.get(c.meta["mode"], 0) + 1
    assert modes == {"full": 12, "full0": 12, "real": 12, "nz": 12, "sat": 12, "satx": 12, "satpad": 12, "onepix": 6}
    for side in ("top", "bottom", "left", "right"):
        assert sum(side in _pads(c) for c in cases) >= 10, side
    assert sum(c.window.stride_v > 1 and c.window.stride_h > 1 for c in cases) >= 10
    assert {c.x.shape[3] for c in cases} >= {1, 2, 3, 4, 8, 12, 20, 36}
    patch = [c.window.k_h * c.window.k_w * c.x.shape[3] for c in cases]
    assert sum(n < 32 for n in patch) >= 20 and sum(n > 32 for n in patch) >= 20
    assert sum(n % 4 != 0 for n in patch) >= 10  # kernel rows padded to a multiple of 4
    assert sum(c.meta["y_c"] % 16 != 0 for c in cases) >= 30  # tail channel groups (the C's dummy VLMACCRs)
    assert sum(c.meta["y_c"] % 4 != 0 for c in cases if c.out_hw == (1, 1)) >= 3  # single pixel: any Y_c
    # conv2d_deep's steps (per-tap chunks, padded rows first) would give other outputs than the C's
    assert sum(c.meta["order_sensitive"] for c in cases) >= 5
    # pristine lib_nn's int32 rounding add in VLSAT wraps somewhere; the symmetric build never differs
    assert sum(not c.meta["pristine_equal"] for c in cases) >= 5
    assert all(c.meta["symmetric_equal"] for c in cases)
    # the default build's unused VDEPTH1 mask: never -128, values below -127 come out as -127
    assert not any((c.y == -128).any() for c in cases)
    assert sum(int((c.y == -127).sum()) for c in cases) >= 100


def test_im2col_weights_layout() -> None:
    rng = np.random.default_rng(3)
    for shape in [(4, 3, 3, 3), (8, 1, 1, 5), (12, 2, 3, 36), (5, 1, 2, 1)]:
        w = rng.integers(-128, 128, shape).astype(np.int8)
        k = im2col_weights(w)
        n = int(np.prod(shape[1:]))
        assert k.dtype == np.int8 and k.shape == (shape[0], -(-n // 4) * 4)
        assert k.shape[1] == kernel_row_elements(*shape[1:])
        assert np.array_equal(k[:, :n], w.reshape(shape[0], n)) and not k[:, n:].any()


def _layer(rng: np.random.Generator, x_c: int, y_c: int, out: tuple[int, int] | None = None):
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sv, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    r0, c0 = -int(rng.integers(0, kh)), -int(rng.integers(0, kw))
    xh, xw = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    oh = out[0] if out else int(rng.integers(1, len([o for o in range(64) if r0 + sv * o < xh]) + 1))
    ow = out[1] if out else int(rng.integers(1, len([o for o in range(64) if c0 + sh * o < xw]) + 1))
    x = rng.integers(-128, 128, (int(rng.integers(1, 3)), xh, xw, x_c)).astype(np.int8)
    w = rng.integers(-128, 128, (y_c, kh, kw, x_c)).astype(np.int8)
    i16 = lambda: rng.integers(-32768, 32768, y_c)  # noqa: E731
    p = BSOParams(rng.integers(-2 ** 24, 2 ** 24, y_c), rng.integers(0, 16, y_c), i16(), i16(), i16(),
                  rng.integers(0, 32, y_c))
    return x, w, p, int(rng.integers(-128, 128)), Window(kh, kw, r0, c0, sv, sh), (oh, ow)


def test_equals_conv2d_deep_where_nothing_saturates() -> None:
    """Same OHWI weights, channels a multiple of 4, no accumulator able to saturate: the same layer.

    conv2d_im2col clamps to [-127, 127] in either build, so it equals conv2d_deep built symmetric, and
    conv2d_deep's default output with -128 raised to -127.
    """
    rng = np.random.default_rng(23)
    seen_128 = 0
    for _ in range(150):
        x_c, y_c = 4 * int(rng.integers(1, 10)), 4 * int(rng.integers(1, 11))
        x, w, p, zp, win, out_hw = _layer(rng, x_c, y_c)
        assert not can_saturate(p.bias, w.reshape(y_c, -1), axis=1)
        bso = pack_bso(p)
        got = conv2d_im2col(x, im2col_weights(w), bso, zp, win, out_hw)
        deep = conv2d_deep(x, deep_weights(w), bso, zp, win, out_hw)
        assert np.array_equal(got, conv2d_deep(x, deep_weights(w), bso, zp, win, out_hw, SYMMETRIC))
        assert np.array_equal(got, np.maximum(deep, -127))
        seen_128 += int((deep == -128).sum())
    assert seen_128 > 0  # the two clamps did differ somewhere


def test_constraints() -> None:
    """XS3Error for what the C asserts or gets wrong; a single output pixel takes any Y_c."""
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8)
    w6 = rng.integers(-128, 128, (6, 2, 2, 3)).astype(np.int8)
    p = BSOParams(*(rng.integers(0, 8, 6) for _ in range(6)))
    bso, k6, win = pack_bso(p), im2col_weights(w6), Window(2, 2, -1, -1)
    assert conv2d_im2col(x, k6, bso, 0, win, (1, 1)).shape == (1, 1, 1, 6)  # one pixel: any Y_c
    with pytest.raises(XS3Error, match="multiple of 4"):  # VSTRPV asserts word-aligned output pixels
        conv2d_im2col(x, k6, bso, 0, win, (2, 1))
    with pytest.raises(XS3Error, match="kernel rows"):  # K's row stride is K_h*K_w*X_c rounded up to 4
        conv2d_im2col(x, np.zeros((6, 16), np.int8), bso, 0, win, (1, 1))
    k4 = im2col_weights(w6[:4])
    with pytest.raises(XS3Error, match="wholly in padding"):  # the C reads outside the image past the right edge
        conv2d_im2col(x, k4, bso, 0, Window(2, 2, 0, 0, 1, 3), (1, 3))
    with pytest.raises(XS3Error):
        conv2d_im2col(x.astype(np.int16), k4, bso, 0, win, (1, 1))
