"""The 16-bit d32 family (issue 36): Convert_to_d32_16b / Convert_from_d32_16b, QuantizedAdd_u16_d32,
QuantizedSub_u16_d32, QuantizedPad_u16_d32, Supernode_16x16p32to16 and Supernode_u16x16p32to16_d32.

Independent references: the layout against nnlib's addressing worked by hand (op_convert_d32.c
``convert_to_d32_16b``: 32 lanes of 2 bytes per pixel of a slice, element ``(b, y, x, c)`` at
``((b*h_total + y+top) * nd32 + c//32) * w_total*32 + (x+left)*32 + c%32``), the right padding rule worked
by hand, the pad code from the C formula worked by hand, the adds / subs where set_addsub_scaling's gains are exactly 1
(worked by hand; tests/ops/test_hvx_add_u16_d32.py holds them to the device code), the supernode against the engine's transposed convolution
(its scatter form, a different code path) on the filter prepare.c's expansion makes, and the op counts
against nnlib's NN_IOCOUNT.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import CATALOG, run_op
from hexnn_import.ops.d32 import D32Tensor, to_d32
from hexnn_import.ops.kernels.d32_u16 import d32_pad_code16, width_padding_16b
from hexnn_import.ops.registry import PAD_NA, PAD_VALID
from hexnn_import.optimizer.transpose_conv import transpose_conv_weights
from hexnn_import.testing.opcheck import f32, i32, stride

#: NN_IOCOUNT of each op's nn_node_ops in nnlib 2.14.1 (op_convert_d32.c, op_addsubmul16_d32.c, op_pad_d32.c,
#: op_supernode_16b.c; the flat Supernode_16x16p32to16 of op_supernode.c sets none: 12 or 13 as built)
COUNTS = {"Convert_to_d32_16b": ((1, 5), (1, 1)), "Convert_from_d32_16b": ((1, 1), (1, 1)),
          "QuantizedAdd_u16_d32": ((8, 8), (3, 3)), "QuantizedSub_u16_d32": ((8, 8), (3, 3)),
          "QuantizedPad_u16_d32": ((4, 6), (3, 3)), "Supernode_u16x16p32to16_d32": ((12, 12), (3, 3)),
          "Supernode_16x16p32to16": ((12, 13), (3, 3))}


@pytest.mark.parametrize("op", sorted(COUNTS))
def test_counts_are_nnlibs(op: str) -> None:
    spec = CATALOG[op]
    assert ((spec.min_inputs, spec.max_inputs), (spec.min_outputs, spec.max_outputs)) == COUNTS[op]
    assert spec.source == "nnlib"


def test_width_padding_worked_by_hand() -> None:
    # left 4, min right 0: w=5 -> total 12, right 3; w=8 -> 12, right 0; left 0, w=1: total 4, k = 1 -> right 3;
    # left 0, w=2: total 4, k = 2 -> total 6, right 4; left 7, min right 7, w=2: total 16, right 7
    assert [width_padding_16b(5, 4, 0), width_padding_16b(8, 4, 0), width_padding_16b(1, 0, 0),
            width_padding_16b(2, 0, 0), width_padding_16b(2, 7, 7)] == [3, 0, 3, 4, 7]
    # left 1, w 1, min right 7: total (1+1+7+3)&~3 = 12, right 10 > 7: lowered by 2 to 8 (a total of 10)
    assert width_padding_16b(1, 1, 7) == 8


def test_convert_to_d32_16b_layout_worked_by_hand() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 65536, size=(2, 3, 5, 40), dtype=np.uint16)
    (t,) = run_op("Convert_to_d32_16b", [x], node="to")
    assert isinstance(t, D32Tensor) and t.dtype == np.uint16 and t.padding == (4, 4, 4, 3, 0, 24)
    raw = t.data.reshape(-1)
    nd32, h_total, w_total = 2, 11, 12
    for (b, y, xx, c) in [(0, 0, 0, 0), (1, 2, 4, 39), (1, 1, 3, 32), (0, 2, 1, 31)]:
        addr = ((b * h_total + y + 4) * nd32 + c // 32) * w_total * 32 + (xx + 4) * 32 + c % 32
        assert raw[addr] == x[b, y, xx, c]
    (back,) = run_op("Convert_from_d32_16b", [t], node="from")
    assert back.dtype == np.uint16 and np.array_equal(back, x)


def test_convert_to_d32_16b_options_and_refusals() -> None:
    x = np.arange(2 * 3 * 32, dtype=np.uint16).reshape(1, 2, 3, 32)
    (t,) = run_op("Convert_to_d32_16b", [x, i32([5]), i32([1]), i32([4]), i32([2])], node="to")
    assert t.padding == (2, 2, 1, 4, 0, 0)  # input 1 ignored; total (1+3+4+3)&~3 = 8, right 4
    assert np.array_equal(t.logical(), x)


def test_convert_to_d32_16b_lays_out_a_width_total_of_2_mod_4_and_refuses_8_bit_data() -> None:
    """Left padding 0 on a width of 2: op_convert_d32.c rounds the total up to 4, then ``k = w + 4 - total`` = 2
    raises it by 2 (a padding under 3), so right = 4 and the width total is 6 - two 16-bit positions per
    128-byte vector, a layout the device makes (tests/ops/test_hvx_convert_u16_d32.py) and the engine holds."""
    x = np.array([7, 65535], dtype=np.uint16).reshape(1, 1, 2, 1)
    (t,) = run_op("Convert_to_d32_16b", [x, i32([0]), i32([0])], node="to")
    assert (t.left, t.right, t.w_total) == (0, 4, 6)
    np.testing.assert_array_equal(run_op("Convert_from_d32_16b", [t], node="from")[0], x)
    with pytest.raises(Exception, match="uint16"):
        run_op("Convert_to_d32_16b", [np.zeros((1, 1, 1, 1), np.uint8)], node="to")


def ends(outs: tuple) -> list[float]:
    """The output min / max of an op's outputs."""
    return [float(np.asarray(v).reshape(-1)[0]) for v in outs[1:]]


def _rand_d32(x: np.ndarray, rng: np.random.Generator) -> D32Tensor:
    t = to_d32(x, top=2, bottom=2, left=4, before=0)
    return t.fill_padding(rng)


@pytest.mark.parametrize("op", ["QuantizedAdd_u16_d32", "QuantizedSub_u16_d32"])
def test_add_sub_d32_with_equal_ranges_worked_by_hand(op: str) -> None:
    """One range for A, B and the output: set_addsub_scaling's gains are 1 (scales 16384, shift 13), so the device
    computes ``a + b - z`` / ``a - b + z`` exactly (z the zero code), saturated; B broadcast as [1,1,1,d], or A
    onto B (operands swapped, the subtraction reversed), whatever the padding bytes hold."""
    rng = np.random.default_rng(7)
    z = 16384  # -(-1) / (4 / 65536)
    r = [f32([-1.0]), f32([3.0])] * 3
    for k in range(9):
        shape = (1, int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.choice([1, 5, 32, 40])))
        a = rng.integers(0, 65536, size=shape, dtype=np.uint16)
        b = rng.integers(0, 65536, size=shape if k % 3 else (1, 1, 1, shape[3]), dtype=np.uint16)
        if k % 3 == 1:
            a, b = b[:1, :1, :1], a  # A broadcast onto B
        want = a.astype(np.int64) + b - z if op.startswith("QuantizedAdd") else a.astype(np.int64) - b + z
        out = run_op(op, [_rand_d32(a, rng), _rand_d32(b, rng), *r], node="d32")
        assert isinstance(out[0], D32Tensor) and np.array_equal(out[0].logical(), np.clip(want, 0, 65535))
        assert ends(out) == [-1.0, 3.0]


def test_add_u16_d32_refuses_a_two_way_broadcast() -> None:
    a, b = np.zeros((1, 1, 3, 4), np.uint16), np.zeros((1, 2, 3, 1), np.uint16)
    with pytest.raises(Exception, match="incompatible"):
        run_op("QuantizedAdd_u16_d32", [to_d32(a), to_d32(b), *[f32([-1.0]), f32([3.0])] * 3], node="add")


def test_pad_code_worked_by_hand() -> None:
    # (0 - (-1)) * 65536 / 4 = 16384; (0.5 + 1) * 65536 / 4 = 24576; outside: saturated; +-inf: ends
    assert [d32_pad_code16(0.0, -1.0, 3.0), d32_pad_code16(0.5, -1.0, 3.0), d32_pad_code16(9.0, -1.0, 3.0),
            d32_pad_code16(-9.0, -1.0, 3.0), d32_pad_code16(np.inf, -1.0, 3.0),
            d32_pad_code16(-np.inf, -1.0, 3.0)] == [16384, 24576, 65535, 0, 65535, 0]


def test_pad_u16_d32_pads_height_and_width_with_the_code() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 65536, size=(1, 2, 3, 33), dtype=np.uint16)
    pads = i32([0, 0, 1, 2, 3, 0, 0, 0]).reshape(1, 1, 4, 2)
    out, mn, mx = run_op("QuantizedPad_u16_d32", [_rand_d32(x, rng), f32([-1.0]), f32([3.0]), pads], node="pad")
    got = out.logical()
    assert got.shape == (1, 5, 6, 33) and np.array_equal(got[:, 1:3, 3:6], x)
    assert (got[:, 0] == 16384).all() and (got[:, 3:] == 16384).all() and (got[:, :, :3] == 16384).all()
    assert ends((out, mn, mx)) == [-1.0, 3.0]
    with pytest.raises(Exception, match="depth"):
        run_op("QuantizedPad_u16_d32", [_rand_d32(x, rng), f32([-1.0]), f32([3.0]),
                                        i32([0, 0, 0, 0, 0, 0, 0, 1]).reshape(1, 1, 4, 2)], node="pad")


@pytest.mark.parametrize("out_range", [(-np.inf, np.inf), (-2.0, 6.0)])
def test_supernode16_is_the_transposed_conv_it_expands(out_range: tuple[float, float]) -> None:
    """prepare.c's stride-1 expansion (zero-code padding r-1-pad, the filter rotated to HWIO) as the
    Supernode_u16x16p32to16_d32 prepare makes of it, against QuantizedTransposeConv2d_16x16p32to16 on the same data.
    (The flat Supernode_16x16p32to16 follows its own device code, op_supernode.c's 8-bit output stage:
    tests/ops/test_hvx_supernode16_flat.py.)"""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 65536, size=(1, 5, 6, 3), dtype=np.uint16)
    w = rng.integers(0, 65536, size=(4, 3, 2, 3), dtype=np.uint16)  # [O, H, W, I]
    bias = rng.integers(-2 ** 20, 2 ** 20, size=4).astype(np.int32)
    in_r, w_r, b_r = (f32([-1.5]), f32([2.5])), (f32([-0.25]), f32([0.75])), (f32([-64.0]), f32([64.0]))
    o_r = (f32([out_range[0]]), f32([out_range[1]]))
    pads = [1, 0, 0, 1]  # top, bottom, left, right
    ref = run_op("QuantizedTransposeConv2d_16x16p32to16",
                 [x, w, *in_r, *w_r, i32(pads).reshape(1, 1, 2, 2), stride(1, 1), bias.reshape(1, 1, 1, 4), *b_r,
                  *o_r], padding=PAD_NA, node="tc")
    zero_x = int(round(1.5 / (4.0 / 65536)))  # quantize_uint16(0.0, -1.5, 2.5)
    zero_w = int(round(0.25 / (1.0 / 65536)))
    padded = np.pad(x, [(0, 0), (2 - 1, 2 - 0), (1 - 0, 1 - 1), (0, 0)], constant_values=zero_x)
    hwio = transpose_conv_weights(w, zero_w, 1, 1, False)
    args = [hwio, *in_r, *w_r, stride(1, 1), bias.reshape(1, 1, 1, 4), *b_r, *o_r]
    d32 = run_op("Supernode_u16x16p32to16_d32", [_rand_d32(padded, rng), *args], padding=PAD_VALID, node="sn_d32")
    assert d32[0].logical().shape == ref[0].shape == (1, 6, 6, 4)
    # the _d32 op follows the device (op_supernode_16b.c, tests/ops/test_hvx_supernode_u16_d32.py): its codes
    # step (max - min) / 65536 from a float32 zero; an auto range grows by the device's retries to a power of two
    lo, hi = ends(d32)
    got = (d32[0].logical().astype(np.float64) - round(-lo * 65536 / (hi - lo))) * ((hi - lo) / 65536)
    want = (ref[0].astype(np.float64) - round(-ends(ref)[0] * 65535 / (ends(ref)[1] - ends(ref)[0]))) * (
        (ends(ref)[1] - ends(ref)[0]) / 65535)
    assert np.abs(got - want).max() <= 1.5 * (hi - lo) / 65536  # measured 1.01 (auto), 1.41 (fixed) steps
    if np.isinf(out_range[0]):
        assert lo <= ends(ref)[0] and hi == 16.0 >= ends(ref)[1]  # to_next_power_of_two of the extreme
    else:
        assert ends(d32) == ends(ref) and np.abs(d32[0].logical().astype(int) - ref[0]).max() <= 1
