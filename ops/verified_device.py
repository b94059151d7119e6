"""Device-code rows per op (issue 36): the engine against nnlib's own HVX and assembly under ``qemu-hexagon``.

``tools/hvx/golden_hvx.py`` builds nnlib's registered device functions (XiaoMi/nnlib df7ad3c, unedited, clang for
Hexagon v66 / 128-byte HVX), runs them in ``qemu-hexagon`` and keeps the cases in
``tests/data/golden/hvx/<row>.npz`` (provenance in ``<row>.json``); ``tests/ops/test_hvx_<row>.py`` replays them
through the engine and asserts the exact count and every traced difference, so a figure here that goes stale
fails there. Several ops share a row (one harness): the counts are the row's, or each op's where the replay
splits them (``add_d32``). docs/verification.md, "HVX".
"""
from __future__ import annotations

#: op -> (golden row, cases, cases the engine reproduces bit for bit, where they differ and why)
DEVICE: dict[str, tuple[str, int, int, str]] = {
    "QuantizedAdd_8p8to8": ("add", 773, 773, ""),
    "QuantizedAdd_8p8to32": ("arith832", 330, 330, ""),
    "QuantizedSub_8p8to32": ("arith832", 330, 330, ""),
    "QuantizedMul_8x8to32": ("arith832", 330, 330, ""),
    "AutoQuantize": ("autoquantize", 375, 374, "the engine refuses a data width past float32 (the device's min is "
                     "NaN)"),
    "Quantize": ("quantize", 311, 311, ""),
    "QuantizedConcat_8": ("concat", 305, 305, ""),
    "Dequantize": ("dequantize", 330, 330, ""),
    "QuantizedMinimum": ("minmax", 326, 326, ""),
    "QuantizedMaximum": ("minmax", 326, 326, ""),
    "QuantizedPRelu_8": ("prelu", 318, 318, ""),
    "QuantizedRelu_8": ("relu", 342, 342, ""),
    "QuantizedReluX_8": ("relu", 342, 342, ""),
    "QuantizedClamp_8": ("relu", 342, 342, ""),
    "Requantize_32to8": ("requantize", 342, 342, ""),
    "QuantizeDownAndShrinkRange_32to8": ("requantize", 342, 342, ""),
    "QuantizedResizeBilinear_8": ("resize", 325, 315, "4x where (w_in - 1) * depth is a multiple of 128: the "
                                  "last pixel's right neighbour is the next bytes in memory, followed (the next "
                                  "row's first pixel) except on the tensor's last row, which reads past the "
                                  "tensor (not deterministic: the engine keeps the pixel itself; 10 cases, the "
                                  "last three columns of the rows from the last input row); the align-corners "
                                  "path refused where the device fails (depth above 2; one output row from "
                                  "several: a NULL memcpy)"),
    "QuantizedSoftmax_8": ("softmax", 315, 315, ""),
    "QuantizedSoftmax_8_d32": ("softmax_d32", 345, 345, ""),
    "Neg_f": ("unary", 316, 316, ""),
    "Abs_f": ("unary", 316, 316, ""),
    "Neg_int32": ("unary", 316, 316, ""),
    "Abs_int32": ("unary", 316, 316, ""),
    "QuantizedNeg_8": ("unary", 316, 316, ""),
    "QuantizedSqrt_8": ("unary", 316, 316, ""),
    # whole vendor op files against nnlib's own nn_graph.h, check() then execute() 1-3 times per node
    "Supernode_8x8p32to8_d32": ("supernode", 641, 641, ""),
    "Supernode_8x8p8to8_d32": ("supernode", 641, 641, ""),
    "DepthwiseSupernode_8x8p32to8_d32": ("dwise", 625, 558, "depth multiplier 2: the device's kernels map output "
                                         "channels one to one onto input channels it does not have and never "
                                         "write the output's last d32 chunk (21 runs; the harness zeroes the "
                                         "buffer, so the recording is reproducible): not deterministic, the engine "
                                         "keeps its answer (67 runs). Followed, with a warning: the s1_7xN / "
                                         "s2_5xN channel-scales slice defect, and the 3x3 kernels' output padding "
                                         "columns in an auto range (those reading bytes no op sets left out)"),
    "DepthwiseSupernode_8x8p8to8_d32": ("dwise", 625, 558, "as DepthwiseSupernode_8x8p32to8_d32"),
    "QuantizedAdd_8p8to8_d32": ("add_d32", 377, 377, ""),
    "QuantizedSub_8p8to8_d32": ("add_d32", 402, 402, ""),
    "QuantizedMul_8x8to8_d32": ("add_d32", 154, 154, ""),
    "QuantizedMaxPool_8_d32": ("maxpool_d32", 475, 475, ""),
    "QuantizedAvgPool_8_d32": ("avgpool_d32", 349, 292, "the image reduced to 1x1 over a depth that is not a "
                               "multiple of 32: the device's range takes in the d32 depth-padding lanes, each the "
                               "sum of its own padding bytes with only the low byte set to the zero sum "
                               "(Q6_Q_vand_VR(depthmask, 1)); the padding holds what the previous op left (in a "
                               "network also bytes past its input), the engine keeps the zero sum the C means "
                               "(57 of 82 such cases differ; the model of the mask gives all 82)"),
    "QuantizedNeg_8_d32": ("neg_d32", 333, 333, ""),
    "QuantizedSplit_8_d32": ("split_d32", 329, 329, ""),
    "QuantizedConcat_8_d32": ("concat_d32", 322, 322, ""),
    "QuantizedPRelu_8_V2_d32": ("prelu_v2_d32", 311, 311, ""),
    "QuantizedInstanceNorm_8_d32": ("instancenorm_d32", 326, 326, ""),
    "QuantizedPad_8_d32": ("pad_d32", 468, 468, ""),
    "DepthToSpace_8_d32": ("depthspace_d32", 319, 319, ""),
    "QuantizedResizeBilinear_8_d32": ("resize_d32", 323, 323, ""),
    "InputSupernode_8x8p32to8_outd32": ("supernode_input", 646, 646, ""),
    "InputSupernode_8x8p8to8_outd32": ("supernode_input", 646, 646, ""),
    "QuantizedPadForConv_8_d32": ("padforconv_d32", 447, 447, ""),
    "QuantizedPad_u16_d32": ("pad_u16_d32", 468, 468, ""),
    "QuantizedAdd_u16_d32": ("add_u16_d32", 243, 243, ""),
    "QuantizedSub_u16_d32": ("add_u16_d32", 229, 229, ""),
    "Convert_to_d32_16b": ("convert_u16_d32", 281, 281, ""),
    "Convert_from_d32_16b": ("convert_u16_d32", 281, 281, ""),
    "Supernode_u16x16p32to16_d32": ("supernode_u16_d32", 343, 343, ""),
    "Supernode_16x16p32to16": ("supernode16_flat", 460, 460, ""),
    "QuantizedEqual_8": ("compare", 54, 54, ""),
    "QuantizedNotEqual_8": ("compare", 54, 54, ""),
    "QuantizedLess_8": ("compare", 54, 54, ""),
    "QuantizedLessEqual_8": ("compare", 54, 54, ""),
    "QuantizedGreater_8": ("compare", 54, 54, ""),
    "QuantizedGreaterEqual_8": ("compare", 54, 54, ""),
    "Select_8": ("select", 306, 306, ""),
    "QuantizedRecip_8": ("recip", 319, 275, "42 cases read table entries op_recip.c never writes (lines 217 / 244 / "
                         "252 set inverses[i] only for a value other than 0, the split skipping the codes between "
                         "its ends; lines 230 / 265 convert every i): those 140 elements (the zero code) are not "
                         "compared, the engine gives the reciprocal saturated onto the range; 2 ranges without 0 "
                         "from 256 elements take none of recip_execute's branches (line 367 on): codes and range "
                         "never written, the engine refuses"),
    "QuantizedDiv_8": ("div", 318, 318, ""),
    "Supernode_8x8p32to8": ("supernode_flat", 1261, 1175, "the engine follows the registered flat op "
                            "(op_supernode.c, a graph marked prepared / run_flat_device; an unprepared graph "
                            "computes prepare's _d32 node): 86 runs of nodes with 4+ output rows where the "
                            "device's HVX path reads bytes that are not the node's - a depth not a multiple of 16 "
                            "laid out as if padded (23), windows past the input or the rows fast_im2col_co writes "
                            "(63) - the engine refuses"),
    "Supernode_8x8p8to8": ("supernode_flat", 1261, 1175, "as Supernode_8x8p32to8"),
    "ArgMax_8toInt32": ("argmax", 385, 385, ""),
    "ArgMax_8": ("argmax", 385, 385, ""),
    "ArgMin_8": ("argmax", 385, 385, ""),
    "Transpose_8": ("transpose", 201, 201, ""),
    "Transpose_16": ("transpose", 79, 79, ""),
    "Transpose_f": ("transpose", 87, 87, ""),
    "Transpose_int32": ("transpose", 80, 80, ""),
    "AxisShuffle_8": ("transpose", 38, 38, ""),
    "QuantizedPad_8": ("pad", 199, 199, ""),
    "QuantizedPad_V2_8": ("pad", 96, 96, ""),
    "QuantizedPad_u16": ("pad", 108, 108, ""),
    "Convert_to_d32": ("convert_d32", 184, 184, ""),
    "Convert_from_d32": ("convert_d32", 224, 224, ""),
    "Requantize_8to8": ("requant8", 166, 166, ""),
    "Requantize_8to8_d32": ("requant8", 172, 172, ""),
    "QuantizedBiasAdd_32p32to32": ("bias32", 176, 176, ""),
    "QuantizedChannelScale_32xf": ("bias32", 169, 169, ""),
    "CastInt32ToFloat32": ("cast", 60, 60, ""),
    "CastUInt8ToFloat32": ("cast", 52, 52, ""),
    "CastFloat32ToInt32": ("cast", 57, 57, ""),
    "CastUInt8ToInt32": ("cast", 56, 56, ""),
    "CastInt32ToUInt8": ("cast", 47, 47, ""),
    "CastFloat32ToUInt8": ("cast", 68, 68, ""),
    "ResizeNearestNeighbor_8": ("resizenear", 323, 323, ""),
    "QuantizedReshape": ("reshape", 182, 182, ""),
    "Reshape": ("reshape", 152, 152, ""),
    "QuantizedSlice_8": ("slice", 120, 115, "more than one batch job with a height count other than the width "
                         "count: op_slice.c:296 takes the batch output stride as h_out_stride * w_size (not h_size), "
                         "so later batches land misplaced, part unwritten, part past the output (not deterministic: "
                         "the engine keeps the slice; 5 cases)"),
    "Slice_int32": ("slice", 112, 109, "as QuantizedSlice_8 (3 cases)"),
    "Slice_f": ("slice", 104, 101, "as QuantizedSlice_8 (3 cases)"),
    "QuantizedTanh_8": ("tanh", 75, 75, ""),
    "QuantizedSigmoid_8": ("tanh", 79, 79, ""),
    "QuantizedTanh_8_d32": ("tanh", 78, 78, ""),
    "QuantizedSigmoid_8_d32": ("tanh", 96, 96, ""),
    "QuantizedConv2d_8x8to32": ("conv2d", 348, 348, ""),
    "QuantizedMatMul_8x8to32": ("matmul", 200, 200, ""),
    "QuantizedMatMul_8x8to32_ref": ("matmul", 200, 200, ""),
    "RequantizationRange_32": ("rqrange", 356, 356, ""),
    "QuantizedBiasAdd_8p8to32": ("biasadd8", 366, 366, ""),
    "MirrorPad_8": ("mirrorpad", 190, 190, ""),
    "MirrorPad_f": ("mirrorpad", 206, 206, ""),
    "QuantizedMean_8": ("mean", 358, 358, ""),
    "QuantizedSum_8to32": ("sum", 362, 362, ""),
    "L2Normalize_8": ("l2norm", 389, 387, "a row of zero distances longer than the store along depth (200 / 300 codes "
                      "here): op_l2normalize_8.c:256 writes 127 by one q6op_vstu_variable_ARV, which reaches only the "
                      "rest of the row's vector and the next one; the bytes past it keep what the output buffer held "
                      "(not deterministic: the engine gives them 127 too; 2 cases). Followed: the depth path's "
                      "integer norm and the negated rows of a power-of-two norm, with a warning"),
    "QuantizedMul_u16": ("mul_u16", 335, 335, ""),
    "Convert_16_8": ("convert16_8", 218, 218, ""),
    "Convert_u16_8": ("convert16_8", 218, 218, ""),
    "Box_Decoder_f": ("box_decoder", 203, 203, ""),
}
