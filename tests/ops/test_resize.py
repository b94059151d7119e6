"""QuantizedResizeBilinear_8 and ResizeNearestNeighbor_8 (op texts; tf legacy coordinates; SEMANTICS.md §6)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops import run_op
from hexnn_import.ops.nnlib_f32 import fmaf
from hexnn_import.ops.nnlib_resize_flat import fmaf32
from hexnn_import.testing.opcheck import assert_op_error


def ints(*vals: int) -> np.ndarray:
    return np.array(vals, np.int32).reshape(1, 1, 1, -1)


def row(*codes: int) -> np.ndarray:
    """A 1x1xWx1 image."""
    return np.array(codes, np.uint8).reshape(1, 1, -1, 1)




def src_coord(y: int, n_in: int, n_out: int, align: bool) -> float:
    if align and n_out > 1:
        return y * (n_in - 1) / (n_out - 1)
    return 0.0 if align else y * n_in / n_out


def bilinear_ref(x: np.ndarray, h_out: int, w_out: int, align: bool) -> np.ndarray:
    """float64 reference: interpolation weight matrices applied along h then w (unrounded)."""
    def weights(n_in: int, n_out: int) -> np.ndarray:
        m = np.zeros((n_out, n_in))
        for y in range(n_out):
            s = src_coord(y, n_in, n_out, align)
            i0 = math.floor(s)
            f = s - i0
            m[y, i0] += 1 - f
            m[y, min(i0 + 1, n_in - 1)] += f
        return m
    wy, wx = weights(x.shape[1], h_out), weights(x.shape[2], w_out)
    return np.einsum("yh,bhwd,xw->byxd", wy, x.astype(np.float64), wx)


# ---------------------------------------------------------------- nearest neighbour

def test_nearest_by_hand():
    # width 3 -> 5, no align: src = x*3/5 = 0, .6, 1.2, 1.8, 2.4 -> floor 0,0,1,1,2
    q, mn, mx = run_op("ResizeNearestNeighbor_8", [row(10, 20, 30), ints(1, 5), -1.0, 1.0])
    assert q.shape == (1, 1, 5, 1) and q.ravel().tolist() == [10, 10, 20, 20, 30]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # align_corners: src = x*2/4 = 0, .5, 1, 1.5, 2 -> round half away 0,1,1,2,2
    q, _, _ = run_op("ResizeNearestNeighbor_8", [row(10, 20, 30), ints(1, 5), -1.0, 1.0, ints(1)])
    assert q.ravel().tolist() == [10, 20, 20, 30, 30]
    # downscale 4 -> 2: no align src = 0, 2 -> [1, 3]. op_resizenear.c uses the align_corners scale
    # (in-1)/(out-1) only when BOTH output dims are > 1: output [1, 2] keeps scale 4/2 = 2 and rounds
    # src = 0, 2 -> [1, 3] (nnlib's C gives [1, 3]); output [2, 2] aligned: src = x*3/1 = 0, 3 -> [1, 4]
    q, _, _ = run_op("ResizeNearestNeighbor_8", [row(1, 2, 3, 4), ints(1, 2), -1.0, 1.0])
    assert q.ravel().tolist() == [1, 3]
    q, _, _ = run_op("ResizeNearestNeighbor_8", [row(1, 2, 3, 4), ints(1, 2), -1.0, 1.0, ints(1)])
    assert q.ravel().tolist() == [1, 3]
    q, _, _ = run_op("ResizeNearestNeighbor_8", [row(1, 2, 3, 4), ints(2, 2), -1.0, 1.0, ints(1)])
    assert q.ravel().tolist() == [1, 4, 1, 4]
    # height too: 2x1 column [5, 6] -> 3x1 with align, but width 1: plain scale 2/3 in float32,
    # src = 0, 0.667, 1.333 -> round 0, 1, 1
    col = np.array([5, 6], np.uint8).reshape(1, 2, 1, 1)
    q, _, _ = run_op("ResizeNearestNeighbor_8", [col, ints(3, 1), -1.0, 1.0, ints(1)])
    assert q.ravel().tolist() == [5, 6, 6]
    # 2x2 -> 3x3 aligned: scale (2-1)/(3-1) = 0.5, src 0, .5, 1 -> round half away 0, 1, 1
    x = np.arange(4, dtype=np.uint8).reshape(1, 2, 2, 1)
    q, _, _ = run_op("ResizeNearestNeighbor_8", [x, ints(3, 3), -1.0, 1.0, ints(1)])
    assert q.ravel().tolist() == [0, 1, 1, 2, 3, 3, 2, 3, 3]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(7, 3), (2, 9), (5, 5), (1, 1)])
def test_nearest_equals_indexing(size, align):
    x = np.random.default_rng(4).integers(0, 256, size=(2, 5, 4, 3)).astype(np.uint8)
    q, _, _ = run_op("ResizeNearestNeighbor_8", [x, ints(*size), -1.0, 1.0, ints(int(align))])
    rows = [min(int(math.floor(src_coord(y, 5, size[0], align) + (0.5 if align else 0))), 4)
            for y in range(size[0])]
    cols = [min(int(math.floor(src_coord(c, 4, size[1], align) + (0.5 if align else 0))), 3)
            for c in range(size[1])]
    assert np.array_equal(q, x[:, rows][:, :, cols])


# ---------------------------------------------------------------- bilinear

def test_bilinear_by_hand():
    # width 2 -> 4, no align: src = 0, .5, 1, 1.5; i1 clipped to 1 at the edge
    # 10, 10 + 11*.5 = 15.5 -> 16 (half away), 21, 21
    q, mn, mx = run_op("QuantizedResizeBilinear_8", [row(10, 21), ints(1, 4), -2.0, 6.0])
    assert q.shape == (1, 1, 4, 1) and q.ravel().tolist() == [10, 16, 21, 21]
    assert (mn.item(), mx.item()) == (-2.0, 6.0)
    # align_corners as a float flag (non-zero bits): src = x/2 = 0, .5, 1 -> 10, (uint8)(15.5 + 0.5f) = 16, 21
    two_rows = np.repeat(row(10, 21), 2, axis=1)
    q, _, _ = run_op("QuantizedResizeBilinear_8", [two_rows, ints(2, 3), -2.0, 6.0, 1.0])
    assert q.ravel().tolist() == [10, 16, 21] * 2
    # thirds: [0, 100] -> 3, no align: src = 0, 2/3, 4/3 -> 0, 66.67 -> 67, 100 (edge)
    q, _, _ = run_op("QuantizedResizeBilinear_8", [row(0, 100), ints(1, 3), -2.0, 6.0])
    assert q.ravel().tolist() == [0, 67, 100]
    # exact ties round away: [0, 1] -> 4: 0, .5 -> 1, 1, 1
    q, _, _ = run_op("QuantizedResizeBilinear_8", [row(0, 1), ints(1, 4), -2.0, 6.0])
    assert q.ravel().tolist() == [0, 1, 1, 1]
    # 2-D, align: [[0,10],[20,40]] -> 3x3; centre (0+10+20+40)/4 = 17.5 -> 18;
    # edge midpoints (0+10)/2 = 5, (0+20)/2 = 10, (10+40)/2 = 25, (20+40)/2 = 30
    x = np.array([[0, 10], [20, 40]], np.uint8).reshape(1, 2, 2, 1)
    q, _, _ = run_op("QuantizedResizeBilinear_8", [x, ints(3, 3), -2.0, 6.0, ints(1)])
    assert q[0, :, :, 0].tolist() == [[0, 5, 10], [10, 18, 25], [20, 30, 40]]
    # same image, no align, 4x4: (1,1) is src (.5,.5) -> 17.5 -> 18; (3,3) clips to 40;
    # (1,3) is src (.5, 1.5) -> columns clip to 1: (10+40)/2 = 25
    q, _, _ = run_op("QuantizedResizeBilinear_8", [x, ints(4, 4), -2.0, 6.0])
    assert (q[0, 1, 1, 0], q[0, 3, 3, 0], q[0, 1, 3, 0]) == (18, 40, 25)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(7, 3), (3, 11), (6, 8), (1, 2)])
def test_bilinear_against_float64(size, align):
    x = np.random.default_rng(5).integers(0, 256, size=(2, 4, 5, 3)).astype(np.uint8)
    if align and 1 in size:   # op_resizebilinear.c divides by (out - 1): NaN positions, every code 255 (below)
        return
    q, mn, mx = run_op("QuantizedResizeBilinear_8", [x, ints(*size), -1.0, 3.0, ints(int(align))])
    v = bilinear_ref(x, *size, align)
    exp = np.floor(v + 0.5)  # v >= 0: round half away
    tie = np.abs(v - np.floor(v) - 0.5) < 1e-9  # float64 may land either side of an exact tie
    assert q.dtype == np.uint8 and q.shape == (2, *size, 3)
    assert np.array_equal(q[~tie], exp[~tie])
    assert np.all(np.abs(q[tie] - v[tie]) <= 0.5 + 1e-9)
    assert (mn.item(), mx.item()) == (-1.0, 3.0)


def r32(v: Fraction) -> Fraction:
    """The float32 nearest an exact value (via float64: none of the values below sits on a float32 tie)."""
    return Fraction(float(np.float32(float(v))))


def test_bilinear_general_fuses_each_lerp():
    """resizebilinear_general's ``linear_interpolate`` ``s + (e - s) * t`` is one fused multiply-add on the device
    (clang contracts it: ``fmaf(e - s, t, s)``, one rounding), worked in exact rationals: 2x2 -> 4x3, element
    (1, 1) at ``fy = 0.5``, ``fx = (float)2/3``; unfused (the product rounded first) and exact it is 116, fused 117."""
    x = np.array([[202, 104], [239, 25]], np.uint8).reshape(1, 2, 2, 1)
    t, half = Fraction(float(np.float32(2) / np.float32(3))), Fraction(1, 2)
    fused = lambda s, e, f: r32(s + (e - s) * f)
    unfused = lambda s, e, f: r32(s + r32((e - s) * f))
    want = [int(r32(lerp(lerp(202, 104, t), lerp(239, 25, t), half) + half)) for lerp in (fused, unfused)]
    exact = (202 + (104 - 202) * t + 239 + (25 - 239) * t) / 2
    assert want == [117, 116] and int(exact + half) == 116
    q, _, _ = run_op("QuantizedResizeBilinear_8", [x, ints(4, 3), -1.0, 1.0])
    assert q[0, 1, 1, 0] == 117


def test_fmaf32_rounds_once():
    """The general path's fused multiply-add (ops/nnlib_resize_flat.py ``fmaf32``): one rounding of the exact
    ``a * b + c``, worked by hand at float32 midpoints (float64 lands on them exactly; ties go to even) and just
    past one (2**-12 * (2**-12 + 2**-35) puts 1 + 2**-24 + 2**-47 above the midpoint: up), and equal to the
    project's two-sum ``fmaf`` on 10**5 random triples of the path's kind (integer differences times fractions)."""
    h = np.float32(2.0 ** -12)
    a, b = np.full(4, h, np.float32), np.array([h, h, h + np.float32(2.0 ** -35), h], np.float32)
    c = np.array([1.0, 1.0 + 2.0 ** -23, 1.0, -1.0], np.float32)
    want = [1.0, 1.0 + 2.0 ** -22, 1.0 + 2.0 ** -23, -1.0 + 2.0 ** -24]
    assert fmaf32(a, b, c).tolist() == want
    rng = np.random.default_rng(7)
    d = rng.integers(-255, 256, 10 ** 5).astype(np.float32) * rng.random(10 ** 5).astype(np.float32)
    t, s = rng.random(10 ** 5).astype(np.float32), rng.integers(0, 256, 10 ** 5).astype(np.float32)
    assert np.array_equal(fmaf32(d, t, s).view(np.int32), fmaf(d, t, s).view(np.int32))


def test_bilinear_align_corners_4x_on_7bit_weights():
    """Align corners, 4 -> 16 wide, depth 1: op_resizebilinear.c's ``resizebilinear_hvx``. Column c sits at
    ``c * 3 / 15 = c / 5``; ``weight_generation`` steps ``add_per = ((3 << 32) + 7) // 15 = 858993459`` from
    ``1 << 16`` and keeps 7 fraction bits: 25, 51, 76, 102 / 128 for c = 1..4 (0.2, 0.4, 0.6, 0.8 truncated), then
    ``(left * (128 - f) + right * f + 64) >> 7``: from [0, 200] 39, 80, 119, 159 (the float path: 40, 80, 120, 160).
    One input row: the row fraction is 0."""
    x = np.array([0, 200, 200, 200], np.uint8).reshape(1, 1, 4, 1)
    q, _, _ = run_op("QuantizedResizeBilinear_8", [x, ints(1, 16), -1.0, 1.0, ints(1)])
    assert q.ravel()[:6].tolist() == [0, 39, 80, 119, 159, 200]
    assert q.ravel()[6:].tolist() == [200] * 10
    # depth 3 on that path: weight_generation takes depth 1-2, the device fails ("didn't get scaling plan")
    assert_op_error("QuantizedResizeBilinear_8", [np.zeros((1, 1, 4, 3), np.uint8), ints(1, 16), -1.0, 1.0, ints(1)],
                    "weight_generation")


def test_bilinear_align_corners_to_one_is_255():
    """Align corners with an output side of 1 on the general path: the scale ``(float)(in - 1) / (1 - 1)`` is
    inf (NaN for in = 1), position ``0 * scale`` NaN, every interpolation NaN and ``(uint8)(NaN + 0.5f)`` the
    all-ones Hexagon conversion of NaN: 255 everywhere, whatever the input."""
    x = np.zeros((2, 3, 5, 4), np.uint8)
    for size in ((1, 3), (4, 1), (1, 1)):
        with pytest.warns(DeviceDefectWarning, match="NaN"):
            q, mn, mx = run_op("QuantizedResizeBilinear_8", [x, ints(*size), -1.0, 1.0, ints(1)])
        assert q.shape == (2, *size, 4) and (q == 255).all() and (mn.item(), mx.item()) == (-1.0, 1.0)


def test_bilinear_4x_right_edge_reads_the_next_row():
    """Exact 4x of a 2x1x1 column (``(w_in - 1) * depth = 0``): ``resizebilinear_4x``'s ``vsetq2(0)`` sets every
    lane, so row 0's pixel takes row 1's pixel as its right neighbour: output (0, 1) is ``(12 * 0 + 4 * 160 + 8)
    >> 4 = 40`` (not 0); row 1, the tensor's last, reads past the tensor on the device: the engine keeps the pixel
    itself (160) and warns once."""
    x = np.array([0, 160], np.uint8).reshape(1, 2, 1, 1)
    with pytest.warns(DeviceDefectWarning, match="resizebilinear_4x"):
        q, _, _ = run_op("QuantizedResizeBilinear_8", [x, ints(8, 4), -1.0, 1.0])
    assert q[0, 0, :, 0].tolist() == [0, 40, 80, 120]
    assert q[0, 7, :, 0].tolist() == [160] * 4
    # (2 - 1) * 1 = 1: the last pixel is its own neighbour, as the general path
    y, _, _ = run_op("QuantizedResizeBilinear_8", [np.array([0, 160], np.uint8).reshape(1, 1, 2, 1), ints(4, 8), -1.0, 1.0])
    assert y[0, 0].ravel().tolist() == [0, 40, 80, 120, 160, 160, 160, 160]


def test_identity_size_is_a_copy():
    x = np.random.default_rng(6).integers(0, 256, size=(1, 3, 4, 2)).astype(np.uint8)
    for op in ("QuantizedResizeBilinear_8", "ResizeNearestNeighbor_8"):
        for align in (0, 1):
            q, _, _ = run_op(op, [x, ints(3, 4), -1.0, 1.0, ints(align)])
            assert np.array_equal(q, x)


def test_resize_errors():
    x = np.zeros((1, 2, 2, 1), np.uint8)
    bl = "QuantizedResizeBilinear_8"   # op_resizebilinear.c: the range is copied, any size >= 0 runs
    assert_op_error(bl, [x, ints(-1, 2), -1.0, 1.0], "cannot resize")
    assert run_op(bl, [x, ints(0, 2), -1.0, 1.0])[0].shape == (1, 0, 2, 1)
    q, mn, mx = run_op(bl, [x, ints(2, 3), 1.0, 0.0, float("nan")])   # NaN bits: align_corners on
    assert q.shape == (1, 2, 3, 1) and (mn.item(), mx.item()) == (1.0, 0.0)
    for op in ("QuantizedResizeBilinear_8", "ResizeNearestNeighbor_8"):
        assert_op_error(op, [x[0], ints(2, 2), -1.0, 1.0], "expected 4-D")
    assert_op_error(bl, [x, ints(2, 2, 2), -1.0, 1.0], "has 3 values")
    nn = "ResizeNearestNeighbor_8"
    assert_op_error(nn, [x, ints(-1, 2), -1.0, 1.0], "negative")        # C: "output prepare failed"
    assert_op_error(nn, [x, ints(2), -1.0, 1.0], "nnlib reads 2")      # the C would read past the tensor


def test_nearest_what_the_c_accepts():
    """op_resizenear.c resizenear_8_execute: cases the op text made errors (values from nnlib's C)."""
    x = np.arange(4, dtype=np.uint8).reshape(1, 2, 2, 1)
    nn = "ResizeNearestNeighbor_8"
    # only newdims[0], newdims[1] are read: [2, 3, 2] is [2, 3]; src cols = 0, 2/3, 4/3 -> 0, 0, 1
    q, _, _ = run_op(nn, [x, ints(2, 3, 2), -1.0, 1.0])
    assert q.shape == (1, 2, 3, 1) and q.ravel().tolist() == [0, 0, 1, 2, 2, 3]
    # size 0: an empty tensor
    assert run_op(nn, [x, ints(0, 2), -1.0, 1.0])[0].shape == (1, 0, 2, 1)
    # the range is copied unchecked
    q, mn, mx = run_op(nn, [x, ints(2, 2), 1.0, 0.0])
    assert q.ravel().tolist() == [0, 1, 2, 3] and (mn.item(), mx.item()) == (1.0, 0.0)
    # align_corners is tensor_get_int32(t, 0): a float's bits, so NaN and -0.0 mean "on", 0.0 "off"
    on = [0, 1, 1, 2, 3, 3, 2, 3, 3]
    off = [0, 0, 1, 0, 0, 1, 2, 2, 3]
    for flag, want in ((float("nan"), on), (-0.0, on), (0.0, off), (np.int32(1), on)):
        q, _, _ = run_op(nn, [x, ints(3, 3), -1.0, 1.0, np.array(flag).reshape(1, 1, 1, 1)])
        assert q.ravel().tolist() == want
