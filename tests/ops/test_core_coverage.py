"""Every op of the quantized core (issue [Core ops]) has a kernel and shows so in `hexnn-import ops`."""
from __future__ import annotations

from hexnn_import.summary import op_coverage

CORE_OPS = """
QuantizedConv2d_8x8to32 QuantizedDepthwiseConv2d_8x8to32 QuantizedMatMul_8x8to32 QuantizedDilatedConv2d_8x8p32to8
QuantizedGroupedConv2d_8x8p32to8 QuantizedTransposeConv2d_8x8p32to8 QuantizedTransposeConv2d_8x8p8to8
Supernode_8x8p8to8 Supernode_8x8p32to8 DepthwiseSupernode_8x8p8to8 DepthwiseSupernode_8x8p32to8
QuantizedBatchNorm_8x8p8to8 QuantizedBatchNorm_8x8p32to8 QuantizedChannelScale_32xf
Quantize Dequantize AutoQuantize Quantize_int32 Dequantize_qint32_f QuantizeDownAndShrinkRange_32to8
RequantizationRange_32 Requantize_32to8 Requantize_8to8 QuantizedBiasAdd_8p8to32 QuantizedBiasAdd_32p32to32
QuantizedAdd_8p8to8 QuantizedAdd_8p8to32 QuantizedSub_8p8to32 QuantizedMul_8x8to32 QuantizedMul_8x8to8
QuantizedMaximum QuantizedMinimum QuantizedMax_8 QuantizedMin_8 QuantizedRelu_8 QuantizedReluX_8 QuantizedClamp_8
QuantizedPRelu_8 QuantizedPRelu_8_V2 QuantizedNeg_8 QuantizedSqrt_8 QuantizedRecip_8 QuantizedDiv_8
QuantizedSigmoid_8 QuantizedTanh_8 QuantizedSoftmax_8 QuantizedLRN_8 L2Normalize_8 QuantizedInstanceNorm_8
QuantizedInstanceNormBG_8 QuantizedEqual_8 QuantizedNotEqual_8 QuantizedLess_8 QuantizedLessEqual_8
QuantizedGreater_8 QuantizedGreaterEqual_8 Select_8
QuantizedMaxPool_8 QuantizedAvgPool_8 QuantizedL2Pool_8 QuantizedMean_8 QuantizedSum_8to32 Moments_8to32
ArgMax_8toInt32 ArgMax_8 ArgMin_8 TopK_8
QuantizedConcat_8 QuantizedSplit_8 QuantizedReshape QuantizedFlatten QuantizedSlice_8 QuantizedStridedSlice_8
QuantizedPad_8 QuantizedPad_V2_8 MirrorPad_8 Transpose_8 QuantizedTile_8 SpaceToDepth_8 DepthToSpace_8
SpaceToBatchND_8 BatchToSpaceND_8 QuantizedResizeBilinear_8 ResizeNearestNeighbor_8 AxisShuffle_8
QuantizedChannelShuffle_8 Gather_8 Table_8
""".split()


def test_every_core_op_has_a_kernel() -> None:
    rows = {r["name"]: r for r in op_coverage()}
    assert len(CORE_OPS) == 88
    missing = [op for op in CORE_OPS if not rows[op]["kernel"]]
    assert missing == []
