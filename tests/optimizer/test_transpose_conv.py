"""create_transpose_conv_nodes (prepare.c -> expand_transpose_conv_nodes.c, weights as
transpose_conv_procweights.c process_transpose_conv_filter).

The expanded chain is checked against what the transposed convolution computes: the project's
QuantizedTransposeConv2d kernels (ops/kernels/conv_variants.py) take the scatter form of TF
``conv2d_transpose`` directly and share no code with the expansion (the gather convolution over the
space-to-batch, rotated weights, then DepthToSpace_8_d32 with crops). Both round the exact product sum
once (the §5 output stage), so the outputs must be equal code for code, and the ranges equal. The C's own
node list for a real model is in tests/data/golden/prepare (mediapipe_selfie_segmentation_aeq_int8, with
the bytes of the Consts this pass makes), checked by test_prepare_golden.py.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.engine import Engine
from hexnn_import.errors import OpError
from hexnn_import.ops.d32_io import d32_output
from hexnn_import.ops.quant import dequantize_u8, step_zero
from hexnn_import.ops.registry import run_op
from hexnn_import.optimizer.transpose_conv import quantize_uint8, transpose_conv_weights
from hexnn_import.testing.prepare_graphs import QBuilder, q3

RNG = np.random.default_rng(19)


def build(fh: int, fw: int, sh: int, sw: int, pads: tuple[int, int, int, int], dout: int, din: int,
          bias8: bool = False, scale: bool = False, out_range: tuple[float, float] = (-4.0, 3.96875),
          groups: int | None = None) -> QBuilder:
    """INPUT [1,5,6,din] -> QuantizedTransposeConv2d -> OUTPUT (quint8 triple)."""
    b = QBuilder()
    x = b.input((1, 5, 6, din), lo=-1.0, hi=1.5)
    oh, ow = 4 * sh + fh - pads[0] - pads[1], 5 * sw + fw - pads[2] - pads[3]
    w = RNG.integers(0, 256, (dout, fh, fw, din)).astype(np.uint8)
    if bias8:
        op, brange = "QuantizedTransposeConv2d_8x8p8to8", (-0.3, 0.4)
        bias = b.c(RNG.integers(0, 256, (1, 1, 1, dout)), np.uint8)
    else:
        op, brange = "QuantizedTransposeConv2d_8x8p32to8", (-1.0, 1.0)
        bias = b.c(RNG.integers(-900, 900, (1, 1, 1, dout)), np.int32)
    ins = [x[0], b.c(w, np.uint8, w.shape), x[1], x[2], b.c(-0.6), b.c(0.5), b.c(pads, np.int32, (1, 1, 2, 2)),
           b.g.shape_ref((1, sh, sw, 1)), bias, b.c(brange[0]), b.c(brange[1]), b.c(out_range[0]), b.c(out_range[1])]
    if scale or groups is not None:
        ins.append(b.c(RNG.uniform(0.2, 1.0, (1, 1, 1, dout)).astype(np.float32)))
    if groups is not None:
        ins.append(b.c(groups, np.int32, (1, 1, 1, 1)))
    tc = b.op(op, ins, (1, oh, ow, dout), name="tconv")
    b.output(q3(tc))
    return b


CASES = {
    # fh, fw, sh, sw, pads (top, bottom, left, right), dout, din
    "selfie_2x2_s2": (2, 2, 2, 2, (0, 0, 0, 0), 1, 16),
    "3x3_s2_same": (3, 3, 2, 2, (0, 1, 0, 1), 3, 5),
    "3x3_s2_pad1": (3, 3, 2, 2, (1, 1, 1, 1), 2, 4),
    "4x4_s2_pad1": (4, 4, 2, 2, (1, 1, 1, 1), 8, 3),
    "3x3_s1": (3, 3, 1, 1, (1, 1, 1, 1), 4, 6),
    "2x3_s1_valid": (2, 3, 1, 1, (0, 0, 0, 0), 33, 2),
    "4x4_s4": (4, 4, 4, 4, (0, 0, 0, 0), 2, 3),
    "3x5_s3x2": (3, 5, 3, 2, (1, 0, 2, 1), 5, 2),
}


def run(g, x: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(o) for o in Engine(g).run([x])[0]]


@pytest.mark.parametrize("variant", ["p32", "p32_scale", "p8", "p32_auto"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_expanded_graph_computes_the_transposed_convolution(case: str, variant: str) -> None:
    global RNG
    RNG = np.random.default_rng([19, list(CASES).index(case), ["p32", "p32_scale", "p8", "p32_auto"].index(variant)])
    fh, fw, sh, sw, pads, dout, din = CASES[case]
    b = build(fh, fw, sh, sw, pads, dout, din, bias8=variant == "p8", scale=variant == "p32_scale",
              out_range=(-np.inf, np.inf) if variant == "p32_auto" else (-4.0, 3.96875))
    g = hx.prepare(copy.deepcopy(b.g))
    ops = [n.op for n in g.nodes]
    assert not any(op.startswith("QuantizedTransposeConv2d") for op in ops)
    assert ("DepthToSpace_8_d32" in ops or "DepthToSpace_8" in ops) == (sh * sw > 1)
    x = RNG.integers(0, 256, (1, 5, 6, din)).astype(np.uint8)
    want, got = run(b.g, x), run(g, x)
    assert got[0].shape == want[0].shape
    if variant == "p32_auto":
        # auto ranges (-inf, +inf): the supernode widens its range as nnlib's supernode does, the transposed
        # conv kernel as the project chose (prepare.c never runs one): each rounds the same exact values
        # once onto its own grid, so they agree within the coarser step
        vals = [dequantize_u8(o[0], float(o[1].item()), float(o[2].item())) for o in (got, want)]
        coarser = max(step_zero(float(o[1].item()), float(o[2].item()))[0] for o in (got, want))
        assert np.abs(vals[0] - vals[1]).max() <= coarser * (1 + 1e-6)
        return
    np.testing.assert_array_equal(got[1:], want[1:])
    if variant in ("p8", "p32_scale"):
        # prepare.c's expansion rounds at a step the kernel does not: the 8-bit-bias op's products requantized to 8
        # bits (QuantizeDownAndShrinkRange) before its 8-bit bias add, the channel scales applied to the int32 sums
        # by their own node (QuantizedChannelScale_32xf); the kernel scales and adds the bias to the exact sums in
        # its output stage. On the same output range an element on a rounding boundary can land one code apart
        # (over 25 seeds x 8 shapes: p8 in 37 of 240 cases, p32_scale in 9 of 200, at most 2 elements each)
        diff = np.abs(got[0].astype(int) - want[0].astype(int))
        assert diff.max() <= 1 and (diff > 0).sum() <= 2, (diff.max(), int((diff > 0).sum()))
        return
    np.testing.assert_array_equal(got[0], want[0])


def test_groups_above_one_are_left_to_the_kernel() -> None:
    b = build(3, 3, 2, 2, (0, 1, 0, 1), 4, 4, groups=2)
    g = hx.prepare(copy.deepcopy(b.g))
    assert "QuantizedTransposeConv2d_8x8p32to8" in [n.op for n in g.nodes]


def test_selfie_expansion_is_the_c_node_sequence() -> None:
    """The C's sequence for the selfie model's transposed conv (prepare_x86 dump): a 12-input
    Supernode_8x8p32to8_d32 of [1,1,16,128] weights and [1,1,1,128] biases, then DepthToSpace_8_d32 by
    [2, 2] with crops [0, 0, 0, 0, 1] (the 32-padded filters cropped back to 1)."""
    b = build(2, 2, 2, 2, (0, 0, 0, 0), 1, 16, out_range=(-np.inf, np.inf))
    g = hx.prepare(copy.deepcopy(b.g))
    d2s = next(n for n in g.nodes if n.op == "DepthToSpace_8_d32")
    sn = g.node(d2s.inputs[0].src_id)
    assert sn.op == "Supernode_8x8p32to8_d32" and len(sn.inputs) == 12
    assert g.node(sn.inputs[1].src_id).data.shape == (1, 1, 16, 128)
    assert g.node(sn.inputs[7].src_id).data.shape == (1, 1, 1, 128)
    assert g.node(d2s.inputs[1].src_id).data.reshape(-1).tolist() == [2, 2]
    assert g.node(d2s.inputs[4].src_id).data.reshape(-1).tolist() == [0, 0, 0, 0, 1]
    assert sn.output_defs[0].shape == (1, 5, 6, 128) and d2s.output_defs[0].shape == (1, 10, 12, 1)


def test_weights_by_hand() -> None:
    """A 3x3 filter, block 2: padded to 4x4 with the zero code, sub-filter (dy, dx) = rows dy::2, columns
    dx::2, rotated 180 degrees, at output channel (dy*2 + dx)*32 + o."""
    w = RNG.integers(0, 256, (1, 3, 3, 2)).astype(np.uint8)
    out = transpose_conv_weights(w, 7, 2, 2, True)
    assert out.shape == (2, 2, 2, 128)
    padded = np.full((1, 4, 4, 2), 7, np.uint8)
    padded[:, :3, :3] = w
    for dy in range(2):
        for dx in range(2):
            sub = padded[0, dy::2, dx::2, :][::-1, ::-1]
            np.testing.assert_array_equal(out[:, :, :, (dy * 2 + dx) * 32], sub)
            assert (out[:, :, :, (dy * 2 + dx) * 32 + 1:(dy * 2 + dx + 1) * 32] == 7).all()


def test_quantize_uint8_is_nnlibs() -> None:
    """quantize.h: roundf((0 - min) * 255 / (max - min)) in float32, saturated."""
    assert quantize_uint8(0.0, -0.6, 0.5) == 139  # 0.6 * 255 / 1.1 = 139.09
    assert quantize_uint8(0.0, -1.0, 1.0) == 128  # 127.5 rounds away from zero
    assert quantize_uint8(0.0, 0.5, 1.0) == 0 and quantize_uint8(0.0, -2.0, -1.0) == 255


def d2s_d32(x: np.ndarray, block: list[int], crops: list[int] | None = None) -> tuple:
    ins = [d32_output(x), block, -1.0, 1.0] + ([crops] if crops is not None else [])
    return run_op("DepthToSpace_8_d32", ins)


def test_depth_to_space_d32_follows_the_d32_ops_header() -> None:
    """op_depthspace_d32.c's header: [b,h,w,bh*bw*d] -> [b,h,bh,w,bw,d] -> [b,h*bh,w*bw,d], then crops;
    a 5th crop entry keeps that many leading channels (at most 31 fewer); output depth a multiple of 32."""
    x = RNG.integers(0, 256, (1, 3, 4, 2 * 2 * 32)).astype(np.uint8)
    want = x.reshape(1, 3, 4, 2, 2, 32).transpose(0, 1, 3, 2, 4, 5).reshape(1, 6, 8, 32)
    out, lo, hi = d2s_d32(x, [2, 2])
    np.testing.assert_array_equal(out.logical_view(), want)
    assert (float(lo.item()), float(hi.item())) == (-1.0, 1.0)
    out = d2s_d32(x, [2, 2], [1, 0, 0, 1, 3])[0]
    np.testing.assert_array_equal(out.logical_view(), want[:, 1:, :7, :3])
    np.testing.assert_array_equal(d2s_d32(x, [2, 2], [0, 0, 0, 0, 0])[0].logical_view(), want)
    with pytest.raises(OpError, match="crop output depth"):
        d2s_d32(x, [2, 2], [0, 0, 0, 0, 33])
    with pytest.raises(OpError, match="crop output depth"):
        d2s_d32(np.concatenate([x, x], axis=3), [2, 2], [0, 0, 0, 0, 32])  # 64 -> 32: more than 31 fewer
    assert d2s_d32(x[..., :64], [2, 2])[0].logical_view().shape == (1, 6, 8, 16)  # 16 with block width 2
    with pytest.raises(OpError, match="output depth 16"):
        d2s_d32(x[..., :64], [4, 1])
