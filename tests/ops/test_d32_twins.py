"""Every flat-twin _d32 op against its flat twin, bit for bit (SEMANTICS.md §7).

Property cases over random shapes (d not a multiple of 32, w not a multiple
of 4, batch > 1) and random paddings: the logical result and the min/max of
each _d32 op equal the flat op's on the same logical data, and do not change
when FillPadding_8_d32 writes 0x00, 0xFF or random bytes into the padding of
the inputs. The flat twins are the already-tested kernels of
``ops/kernels``. Sub has no flat twin (no flat QuantizedSub_8p8to8 exists; the engine follows op_add_d32.c's
own subtraction, issue 36): it is checked against the exact difference.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.d32 import D32Tensor, right_padding, to_d32
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import PAD_SAME, PAD_VALID
from hexnn_import.testing.opcheck import f32, i32, stride

INF = math.inf
#: FillPadding_8_d32 (spatial, depth) fills applied after the first run (whose padding is random bytes).
REFILLS = ((0x00, 0x00), (0xFF, 0xFF), (-1, -1), (0x5A, -1))


def rand_d32(x: np.ndarray, rng: np.random.Generator) -> D32Tensor:
    """``x`` laid out as d32 with random paddings of the Convert_to_d32 family, padding random bytes."""
    left = int(rng.integers(0, 8))
    right = right_padding(left, x.shape[2], int(rng.integers(0, 8)))
    tb = int(rng.integers(0, 5))
    t = to_d32(x, top=tb, bottom=tb, left=left, right=right, before=int(rng.integers(0, 32)))
    return t.fill_padding(rng)


def refill(t: D32Tensor, spatial: int, depth: int, node: str) -> D32Tensor:
    """FillPadding_8_d32 on ``t`` (the op under test for the padding independence)."""
    (out,) = run_op("FillPadding_8_d32", [t, i32([spatial]), i32([depth])], node=node)
    return out


def rand_shape(rng: np.random.Generator, max_hw: int = 6) -> tuple[int, int, int, int]:
    return (int(rng.integers(1, 4)), int(rng.integers(1, max_hw + 1)), int(rng.integers(1, 10)),
            int(rng.choice([1, 3, 17, 31, 33, 45, 64, 70])))


def rand_u8(rng, shape) -> np.ndarray:
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def assert_twin(d32_op: str, flat_op: str, inputs: list, d32_slots: tuple[int, ...], rng, padding=PAD_SAME,
                flat_inputs: list | None = None, refills=REFILLS, within: int = 0) -> tuple:
    """Run both ops and compare (codes within ``within`` of the flat op's: the d32 ops whose device code rounds
    otherwise); then refill the padding of every d32 input and compare again."""
    flat_out = run_op(flat_op, flat_inputs if flat_inputs is not None else inputs, padding=padding, node="flat")
    d_inputs = list(inputs)
    for i in d32_slots:
        d_inputs[i] = rand_d32(inputs[i], rng)
    for k, (sp, dp) in enumerate([(None, None), *refills]):
        if k:
            d_inputs = [refill(v, sp, dp, f"fill{k}") if i in d32_slots else v for i, v in enumerate(d_inputs)]
        out = run_op(d32_op, d_inputs, padding=padding, node="d32")
        assert isinstance(out[0], D32Tensor)
        t = out[0]
        assert t.padding[:3] == (4, 4, 4) and t.before == 0 and t.w_total % 4 == 0 and t.d_total % 32 == 0
        if within:
            assert np.abs(t.logical().astype(np.int64) - flat_out[0]).max(initial=0) <= within
        else:
            np.testing.assert_array_equal(t.logical(), flat_out[0])
        assert t.logical().dtype == flat_out[0].dtype
        for a, b in zip(out[1:], flat_out[1:]):
            assert a.item() == b.item()
    return flat_out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("bias32", [True, False])
def test_supernodes_match_flat(seed, bias32):
    rng = np.random.default_rng(100 + seed + 10 * bias32)
    b, h, w, din = rand_shape(rng)
    dout = int(rng.choice([1, 5, 33]))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    suffix = "p32to8" if bias32 else "p8to8"
    bias = rng.integers(-2000, 2000, (1, 1, 1, dout), dtype=np.int32) if bias32 else rand_u8(rng, (1, 1, 1, dout))
    out_rng = [(-INF, INF), (-2.0, 2.0), (0.0, INF)][seed]
    x = rand_u8(rng, (b, h, w, din))
    wts = rand_u8(rng, (fh, fw, din, dout))
    inputs = [x, wts, -1.0, 1.0, -0.5, 0.5, stride(int(rng.integers(1, 3)), int(rng.integers(1, 3))), bias,
              -1.0, 1.0, *out_rng]
    pad = [PAD_SAME, PAD_VALID][seed % 2] if fh <= h and fw <= w else PAD_SAME
    assert_twin(f"Supernode_8x8{suffix}_d32", f"Supernode_8x8{suffix}", inputs, (0,), rng, pad)
    k = f32(rng.uniform(0.01, 1.0, dout))
    assert_twin(f"Supernode_8x8{suffix}_d32", f"Supernode_8x8{suffix}", [*inputs, k], (0,), rng, pad)
    # depthwise: weights [fh, fw, din, dmul]
    dmul = int(rng.integers(1, 3))
    dw_bias = bias[..., :1].repeat(din * dmul, axis=3)
    dw_inputs = [x, rand_u8(rng, (fh, fw, din, dmul)), -1.0, 1.0, -0.5, 0.5, stride(1, 2), dw_bias, -1.0, 1.0,
                 *out_rng]
    assert_twin(f"DepthwiseSupernode_8x8{suffix}_d32", f"DepthwiseSupernode_8x8{suffix}", dw_inputs, (0,), rng, pad)
    dw_k = f32(rng.uniform(1.0 / 2048, 1.0, din * dmul))   # the 13th input (prepare.c's fused ChannelScale)
    assert_twin(f"DepthwiseSupernode_8x8{suffix}_d32", f"DepthwiseSupernode_8x8{suffix}", [*dw_inputs, dw_k], (0,),
                rng, pad)
    # batch norm: scale / bias [1,1,1,d] or [1,1,1,1]
    n = [din, 1][seed % 2]
    bn_bias = bias[..., :1].repeat(n, axis=3)
    bn_inputs = [x, rand_u8(rng, (1, 1, 1, n)), -1.0, 1.0, -0.5, 0.5, bn_bias, -1.0, 1.0, *out_rng]
    assert_twin(f"QuantizedBatchNorm_8x8{suffix}_d32", f"QuantizedBatchNorm_8x8{suffix}", bn_inputs, (0,), rng)


@pytest.mark.parametrize("bias32", [True, False])
def test_input_supernode_matches_flat(bias32):
    rng = np.random.default_rng(7 + bias32)
    suffix = "p32to8" if bias32 else "p8to8"
    for din in (1, 3, 4):
        x = rand_u8(rng, (2, 5, 7, din))
        bias = rng.integers(-99, 99, (1, 1, 1, 40), dtype=np.int32) if bias32 else rand_u8(rng, (1, 1, 1, 40))
        inputs = [x, rand_u8(rng, (3, 3, din, 40)), -1.0, 1.0, -0.5, 0.5, stride(2, 2), bias, -1.0, 1.0, -INF, INF]
        assert_twin(f"InputSupernode_8x8{suffix}_outd32", f"Supernode_8x8{suffix}", inputs, (), rng)


@pytest.mark.parametrize("seed", range(4))
def test_pools_resize_nonlinear_match_flat(seed):
    rng = np.random.default_rng(200 + seed)
    b, h, w, d = rand_shape(rng, max_hw=7)
    x = rand_u8(rng, (b, h, w, d))
    fh, fw = int(rng.integers(1, min(h, 3) + 1)), int(rng.integers(1, min(w, 3) + 1))
    pad = [PAD_SAME, PAD_VALID][seed % 2]
    # the d32 AvgPool and ResizeBilinear follow their device code (integral buffer / 3x3 asm; the 2x asm and the
    # HVX general path), within one code of the flat ops' portable C (test_hvx_avgpool_d32.py, test_hvx_resize_d32.py)
    for op in ("QuantizedMaxPool_8", "QuantizedAvgPool_8", "QuantizedL2Pool_8"):
        inputs = [x, -0.5, 1.5, stride(fh, fw), stride(int(rng.integers(1, 3)), int(rng.integers(1, 3)))]
        assert_twin(f"{op}_d32", op, inputs, (0,), rng, pad, within=int(op == "QuantizedAvgPool_8"))
    size = i32([int(rng.integers(1, 9)), int(rng.integers(1, 9))])
    assert_twin("QuantizedResizeBilinear_8_d32", "QuantizedResizeBilinear_8", [x, size, -1.0, 3.0], (0,), rng,
                within=1)
    size2 = np.maximum(size, 2)   # align_corners divides by (out - 1) in op_resizebilinear.c: out >= 2
    assert_twin("QuantizedResizeBilinear_8_d32", "QuantizedResizeBilinear_8", [x, size2, -1.0, 3.0, i32([1])],
                (0,), rng, within=1)
    # QuantizedTanh_8_d32 / Sigmoid_8_d32 are not twins of the flat ops: op_tanh_d32.c's fixed-point
    # table vs op_tanh.c's tanhf (test_d32_hand.py and the nnlib harness rows check them)


def b_shapes(a: tuple[int, int, int, int]) -> list[tuple[int, int, int, int]]:
    """B shapes the d32 texts allow broadcasting to A (w/d broadcast only with b = h = 1)."""
    b, h, w, d = a
    return [a, (1, h, w, d), (b, 1, w, d), (1, 1, w, 1), (1, 1, 1, d), (1, 1, 1, 1), (1, 1, w, d)]


@pytest.mark.parametrize("seed", range(3))
def test_add_sub_mul_match_flat(seed):
    # The exact 256x256 tables of the flat twins take ~20 ms each: two shapes per seed, one refill.
    rng = np.random.default_rng(300 + seed)
    a_shape = rand_shape(rng)
    a = rand_u8(rng, a_shape)
    a_rng, b_rng = (-1.0, 3.0), (-2.0, 0.5)
    out = [[], [-4.0, 4.0], [-INF, 2.0]][seed]
    shapes = b_shapes(a_shape)
    refills = ((0xFF, -1),)
    for j, shape in enumerate([a_shape, shapes[1 + int(rng.integers(0, len(shapes) - 1))]]):
        bq = rand_u8(rng, shape)
        inputs = [a, bq, *a_rng, *b_rng, *out]
        # the d32 Add / Sub run the flat same-shape arithmetic on B expanded to A's shape (nnlib's d32 add
        # broadcasts inside its own loop; the flat op's separate broadcast path, qadd_888_hvx, is not theirs)
        bx = np.ascontiguousarray(np.broadcast_to(bq, a_shape))
        # ... but for op_add_d32.c's own range rules (issue 36; held to the device by test_hvx_add_d32.py): a single B
        # with both output ends free re-codes A (mode_broadcast_1111), and a free min with a given max is tracked
        # (op_add.c tracks only a free max): those have no flat twin
        add = ("QuantizedAdd_8p8to8_d32", "QuantizedAdd_8x8to8_d32")[j]
        if not (out == [-INF, 2.0] or (not out and shape == (1, 1, 1, 1))):
            assert_twin(add, "QuantizedAdd_8p8to8", inputs, (0, 1), rng, flat_inputs=[a, bx, *inputs[2:]],
                        refills=refills)
        else:   # each code within one step of the exact sum, clipped to the range the op reports
            q, mn, mx = run_op(add, [rand_d32(a, rng), rand_d32(bq, rng), *inputs[2:]])
            lo, hi = mn.item(), mx.item()
            total = dequantize_u8(a, *a_rng) + dequantize_u8(bx, *b_rng)
            got = dequantize_u8(q.logical(), lo, hi)
            assert np.all(np.abs(got - np.clip(total, lo, hi)) <= 1.0001 * (hi - lo) / 255)
        # Sub follows op_add_d32.c's own subtraction (issue 36; held to the device by test_hvx_add_d32.py), which has
        # no flat twin: each code within one step of the exact difference on its range, also with the padding
        # refilled; A broadcast to B is done as rsub(B, A) and gives b - a here (first operand minus second)
        sub = ("QuantizedSub_8p8to8_d32", "QuantizedSub_8x8to8_d32")[j]
        diff = dequantize_u8(a, *a_rng) - dequantize_u8(bx, *b_rng)
        for x, y, rx, ry, want in ((a, bq, a_rng, b_rng, diff), (bq, a, b_rng, a_rng, -diff)):
            ins = [rand_d32(x, rng), rand_d32(y, rng), *rx, *ry, *out]
            for k in range(2):
                if k:
                    ins = [refill(v, 0xFF, -1, "fill") if i < 2 else v for i, v in enumerate(ins)]
                q, mn, mx = run_op(sub, ins)
                lo, hi = mn.item(), mx.item()
                step = (hi - lo) / 255
                got = dequantize_u8(q.logical(), lo, hi)
                assert np.all(np.abs(got - np.clip(want, lo, hi)) <= 1.0001 * step)
        # the d32 multiply follows op_add_d32.c's own multiply (issue 36; held to the device by
        # test_hvx_add_d32.py): its range holds 0, and each code is within one step of the exact product
        # (clipped to that range); padding refilled gives the same answer
        prod = dequantize_u8(a, *a_rng) * dequantize_u8(bx, *b_rng)
        first = None
        for k in range(2):
            ins = [rand_d32(a, rng), rand_d32(bq, rng), *a_rng, *b_rng]
            if k:
                ins = [refill(v, 0xFF, -1, "fill") if i < 2 else v for i, v in enumerate(ins)]
            q, mn, mx = run_op("QuantizedMul_8x8to8_d32", ins)
            lo, hi = mn.item(), mx.item()
            assert lo <= 0 <= hi
            got = dequantize_u8(q.logical(), lo, hi)
            assert np.all(np.abs(got - np.clip(prod, lo, hi)) <= 1.0001 * (hi - lo) / 255)
            first = first or (q.logical().copy(), lo, hi)
            assert np.array_equal(q.logical(), first[0]) and (lo, hi) == first[1:]


@pytest.mark.parametrize("dim", range(4))
def test_concat_any_dim_and_alignment_is_the_depth_concat_moved(dim):
    # The requantization is per input and per byte (op_concat_d32.c; its arithmetic is the device op row's,
    # tools/hvx/op_concat_d32.py): joining along `dim` is joining along depth with that axis moved there, whatever
    # each input's alignment and padding bytes.
    rng = np.random.default_rng(400 + dim)
    base = list(rand_shape(rng))
    parts, ranges = [], [(-1.0, 1.0), (0.0, 2.0), (-3.0, 0.5)]
    for _ in ranges:
        shape = list(base)
        shape[dim] = int(rng.integers(1, 40 if dim == 3 else 4))
        parts.append(rand_u8(rng, shape))
    mins, maxs = [r[0] for r in ranges], [r[1] for r in ranges]
    moved = [np.ascontiguousarray(np.moveaxis(p, dim, 3)) for p in parts]
    depth_q, depth_mn, depth_mx = run_op("QuantizedConcat_8_d32", [i32([3]), *(rand_d32(m, rng) for m in moved),
                                                                   *mins, *maxs])
    expect = np.moveaxis(depth_q.logical(), 3, dim)
    d_parts = [rand_d32(p, rng) for p in parts]  # each input its own random alignment
    for k, (sp, dp) in enumerate([(None, None), *REFILLS]):
        if k:
            d_parts = [refill(t, sp, dp, f"c{k}") for t in d_parts]
        q, mn, mx = run_op("QuantizedConcat_8_d32", [i32([dim]), *d_parts, *mins, *maxs])
        np.testing.assert_array_equal(q.logical(), expect)
        assert (mn.item(), mx.item()) == (depth_mn.item(), depth_mx.item())
        assert mn.item() == -3.0 and mx.item() == pytest.approx(2.0, abs=0.02)   # [-3, 2] zero-fixed
