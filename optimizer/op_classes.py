"""Op-class flags: skip a whole pass when no node of its class exists.

hexagon_nn_prepare_notes.txt, "Order of Optimization Passes": nn_graph.h
tags ops with class flags; an 'or' of the flags of every node is made before
the passes run, and a pass whose class is absent is skipped. Here the set is
computed once by :func:`op_class_set` and the editor ORs in the class of
every node it adds, so a pass that creates nodes of a class (Convert_to_d32
in convert_to_depth32) enables the passes that need it.

The op groups the passes single out live here, in one place: :data:`_CLASSES` (the class flags),
:data:`FUSED_OPS` (the product ops supernode fusion turns into supernodes; their class is ``PRODUCT32``) and
:data:`XS3_PREFIX` (the ops of the XS3 lowering, ``XS3_<lib_nn kernel>``: :func:`is_xs3`).
"""
from __future__ import annotations

import enum
from typing import Iterable


class OpClass(enum.IntFlag):
    """Classes of ops that some pass looks for."""

    NONE = 0
    REQUANTRANGE = enum.auto()   # RequantizationRange_32
    QUANTIZE = enum.auto()       # Quantize, AutoQuantize
    DEQUANTIZE = enum.auto()     # Dequantize
    REQUANT8 = enum.auto()       # Requantize_8to8
    REQUANT32 = enum.auto()      # Requantize_32to8, QuantizeDownAndShrinkRange_32to8
    ADD32 = enum.auto()          # QuantizedAdd_8p8to32
    PRODUCT32 = enum.auto()      # 8x8 -> 32 products that may become supernodes
    RELU = enum.auto()           # QuantizedRelu_8, QuantizedReluX_8, QuantizedClamp_8
    SUPERNODE = enum.auto()      # flat supernodes (move_relus)
    D32_CANDIDATE = enum.auto()  # ops with a _d32 twin
    D32_CONVERT = enum.auto()    # Convert_to_d32 / Convert_from_d32
    CONCAT_D32 = enum.auto()     # QuantizedConcat_8_d32
    CONST = enum.auto()          # Const
    QUANTMUL8TO32 = enum.auto()  # QuantizedMul_8x8to32 (fold_scalar_mpys)
    TRANSPOSECONV = enum.auto()  # QuantizedTransposeConv2d_* (create_transpose_conv_nodes)


#: product op -> (fused op with quint8 bias, fused op with qint32 bias): hexagon_nn_prepare_notes.txt's supernode
#: fusion (optimizer/supernodes.py); the products are the ``PRODUCT32`` class
FUSED_OPS: dict[str, tuple[str, str]] = {
    "QuantizedConv2d_8x8to32": ("Supernode_8x8p8to8", "Supernode_8x8p32to8"),
    "QuantizedDepthwiseConv2d_8x8to32": ("DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8"),
    "QuantizedMatMul_8x8to32": ("Supernode_8x8p8to8", "Supernode_8x8p32to8"),
}

#: the graph op of an XS3 (lib_nn) kernel is this prefix and the kernel's name (hexnn_import.xs3.kernel_table)
XS3_PREFIX = "XS3_"

_CLASSES: dict[str, OpClass] = {
    **{op: OpClass.PRODUCT32 for op in FUSED_OPS},
    "RequantizationRange_32": OpClass.REQUANTRANGE,
    "Quantize": OpClass.QUANTIZE,
    "AutoQuantize": OpClass.QUANTIZE,
    "Dequantize": OpClass.DEQUANTIZE,
    "Requantize_8to8": OpClass.REQUANT8 | OpClass.D32_CANDIDATE,
    "Requantize_32to8": OpClass.REQUANT32,
    "QuantizeDownAndShrinkRange_32to8": OpClass.REQUANT32,
    "QuantizedAdd_8p8to32": OpClass.ADD32,
    "QuantizedRelu_8": OpClass.RELU,
    "QuantizedReluX_8": OpClass.RELU,
    "QuantizedClamp_8": OpClass.RELU,
    "Supernode_8x8p8to8": OpClass.SUPERNODE | OpClass.D32_CANDIDATE,
    "Supernode_8x8p32to8": OpClass.SUPERNODE | OpClass.D32_CANDIDATE,
    "DepthwiseSupernode_8x8p8to8": OpClass.D32_CANDIDATE,
    "DepthwiseSupernode_8x8p32to8": OpClass.D32_CANDIDATE,
    "QuantizedBatchNorm_8x8p8to8": OpClass.D32_CANDIDATE,
    "QuantizedBatchNorm_8x8p32to8": OpClass.D32_CANDIDATE,
    "QuantizedMaxPool_8": OpClass.D32_CANDIDATE,
    "QuantizedAvgPool_8": OpClass.D32_CANDIDATE,
    "QuantizedL2Pool_8": OpClass.D32_CANDIDATE,
    "QuantizedConcat_8": OpClass.D32_CANDIDATE,
    "QuantizedAdd_8p8to8": OpClass.D32_CANDIDATE,
    "QuantizedResizeBilinear_8": OpClass.D32_CANDIDATE,
    "QuantizedTanh_8": OpClass.D32_CANDIDATE,
    "QuantizedSigmoid_8": OpClass.D32_CANDIDATE,
    "QuantizedPRelu_8": OpClass.D32_CANDIDATE,
    "QuantizedPRelu_8_V2": OpClass.D32_CANDIDATE,
    "QuantizedSoftmax_8": OpClass.D32_CANDIDATE,
    "Supernode_8x8p8to8_d32": OpClass.D32_CANDIDATE,
    "Supernode_8x8p32to8_d32": OpClass.D32_CANDIDATE,
    "DepthwiseSupernode_8x8p8to8_d32": OpClass.D32_CANDIDATE,
    "DepthwiseSupernode_8x8p32to8_d32": OpClass.D32_CANDIDATE,
    "QuantizedMul_8x8to32": OpClass.QUANTMUL8TO32,
    "Convert_to_d32": OpClass.D32_CONVERT,
    "Convert_from_d32": OpClass.D32_CONVERT,
    "QuantizedConcat_8_d32": OpClass.CONCAT_D32,
    "Const": OpClass.CONST,
    "QuantizedTransposeConv2d_8x8p32to8": OpClass.TRANSPOSECONV,
    "QuantizedTransposeConv2d_8x8p8to8": OpClass.TRANSPOSECONV,
    "QuantizedTransposeConv2d_16x16p32to16": OpClass.TRANSPOSECONV,
    "DepthToSpace_8": OpClass.D32_CANDIDATE,
}


def op_class(op: str) -> OpClass:
    """The class flags of one op (``NONE`` for ops no pass singles out)."""
    return _CLASSES.get(op, OpClass.NONE)


def is_xs3(op: str) -> bool:
    """An op of the XS3 lowering (``XS3_<kernel>``, :data:`XS3_PREFIX`)."""
    return op.startswith(XS3_PREFIX)


def op_class_set(ops: Iterable[str]) -> OpClass:
    """The 'or' of the class flags of the given ops (nn->op_class_set)."""
    flags = OpClass.NONE
    for op in set(ops):
        flags |= op_class(op)
    return flags
