"""Op groups, in one place (issue 35), and the op-class flags: skip a whole pass when no node of its class exists.

In ``ops/`` (the lowest floor) because the engine, the optimizer and the XS3 lowering all read them; nothing here
imports another module of the package.

hexagon_nn_prepare_notes.txt, "Order of Optimization Passes": nn_graph.h
tags ops with class flags; an 'or' of the flags of every node is made before
the passes run, and a pass whose class is absent is skipped. Here the set is
computed once by :func:`op_class_set` and the editor ORs in the class of
every node it adds, so a pass that creates nodes of a class (Convert_to_d32
in convert_to_depth32) enables the passes that need it.

The op groups the passes (and the engine) single out live here, in one place, each matched by exact name:
:data:`_GROUPS` (each class's ops), :data:`FUSED_OPS` (the product ops supernode fusion turns into
supernodes: ``PRODUCT32``), :data:`D32_OPS` (flat ops with a _d32 twin) and :data:`OVERSIZE_CANDIDATES`
(together ``D32_CANDIDATE``), :data:`REQUANT32_OPS`, :data:`RELU_OPS`, :data:`SUPERNODE_OPS`, and
:data:`XS3_PREFIX` (the ops of the XS3 lowering, ``XS3_<lib_nn kernel>``: :func:`is_xs3`); then the groups
single passes read: the range tables of ranges.py and the bias fit (:data:`PASSTHROUGH_OPS`,
:data:`MORE_PASSTHROUGH_OPS`, :data:`SPLIT_OPS`, :data:`UNION_OPS`, :data:`FIXED_OUTPUT`,
:data:`ALL_SUPERNODES`, :data:`CHAIN_LINKS`), move_relus' :data:`RELU_COMMUTES`, fold_scalar_mpys'
:data:`SCALABLE`, :data:`TRANSPOSE_CONV_OPS`, convert_to_depth32's :data:`WHEN_INPUT_D32`,
:data:`INPUT_SUPERNODES` and :data:`D32_SUPERNODES`, dead-node removal's :data:`RETAINED_OPS`, and the
engine's :data:`WORK_OPS` (the products whose kernels hold working arrays). Where a group names input
slots it names them as the op catalog does (``optimizer/slots.py``).
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

#: flat op -> its _d32 twin (prepare.c convert_to_depth32, optimizer/d32_passes.py); with
#: :data:`OVERSIZE_CANDIDATES` the ``D32_CANDIDATE`` class
D32_OPS: dict[str, str] = {
    "Supernode_8x8p8to8": "Supernode_8x8p8to8_d32", "Supernode_8x8p32to8": "Supernode_8x8p32to8_d32",
    "DepthwiseSupernode_8x8p8to8": "DepthwiseSupernode_8x8p8to8_d32",
    "DepthwiseSupernode_8x8p32to8": "DepthwiseSupernode_8x8p32to8_d32",
    "QuantizedBatchNorm_8x8p8to8": "QuantizedBatchNorm_8x8p8to8_d32",
    "QuantizedBatchNorm_8x8p32to8": "QuantizedBatchNorm_8x8p32to8_d32",
    "QuantizedMaxPool_8": "QuantizedMaxPool_8_d32", "QuantizedAvgPool_8": "QuantizedAvgPool_8_d32",
    "QuantizedL2Pool_8": "QuantizedL2Pool_8_d32", "QuantizedConcat_8": "QuantizedConcat_8_d32",
    "QuantizedAdd_8p8to8": "QuantizedAdd_8p8to8_d32", "QuantizedResizeBilinear_8": "QuantizedResizeBilinear_8_d32",
    "QuantizedTanh_8": "QuantizedTanh_8_d32", "QuantizedSigmoid_8": "QuantizedSigmoid_8_d32",
    "QuantizedPRelu_8": "QuantizedPRelu_8_d32", "QuantizedPRelu_8_V2": "QuantizedPRelu_8_V2_d32",
    "QuantizedSoftmax_8": "QuantizedSoftmax_8_d32", "Requantize_8to8": "Requantize_8to8_d32",
    "DepthToSpace_8": "DepthToSpace_8_d32",
}

#: d32 supernodes whose filter may need more padding than the d32 layout keeps (optimizer/oversize.py)
OVERSIZE_CANDIDATES = frozenset({
    "Supernode_8x8p8to8_d32", "Supernode_8x8p32to8_d32",
    "DepthwiseSupernode_8x8p8to8_d32", "DepthwiseSupernode_8x8p32to8_d32",
})

#: the requantizations that end a product chain (``REQUANT32``; optimizer/fusion_match.py)
REQUANT32_OPS = frozenset({"Requantize_32to8", "QuantizeDownAndShrinkRange_32to8"})
#: the relu / clamp nodes a supernode's range can take in (``RELU``; fusion_match.py, relus.py)
RELU_OPS = frozenset({"QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8"})
#: the flat supernodes (``SUPERNODE``; relus.py move_relus)
SUPERNODE_OPS = frozenset({"Supernode_8x8p8to8", "Supernode_8x8p32to8"})

#: the graph op of an XS3 (lib_nn) kernel is this prefix and the kernel's name (hexnn_import.xs3.kernel_table)
XS3_PREFIX = "XS3_"

#: ops whose output range (outputs 1, 2) is their input range: they report their in_min / in_max inputs
#: (ranges.py's static ranges, held to prepare.c's output; relus.py)
PASSTHROUGH_OPS = frozenset({
    "QuantizedMaxPool_8", "QuantizedAvgPool_8", "QuantizedRelu_8", "QuantizedReluX_8", "QuantizedReshape",
    "QuantizedFlatten", "QuantizedStridedSlice_8", "QuantizedSlice_8", "Transpose_8", "SpaceToDepth_8",
    "DepthToSpace_8", "BatchToSpaceND_8", "SpaceToBatchND_8", "QuantizedTile_8", "ResizeNearestNeighbor_8",
    "QuantizedMaxPool_8_d32", "QuantizedAvgPool_8_d32",
})
#: more such ops, which only the bias fit follows (bias_fit_floor.py; PASSTHROUGH_OPS is held to prepare.c)
MORE_PASSTHROUGH_OPS = frozenset({"MirrorPad_8"})
#: ops with n data outputs before their min and max (outputs n, n + 1) whose range is their input's in_min /
#: in_max (op_split.c ``qsplit_execute_8`` copies them; bias_fit_floor.py)
SPLIT_OPS = frozenset({"QuantizedSplit_8"})
#: ops whose reported range is the union of their inputs' (op_concat.c ``[min of mins, max of maxes]``;
#: bias_fit_floor.py)
UNION_OPS = frozenset({"QuantizedConcat_8"})
#: op -> its (min, max) input slots, for ops that report ``adjust_range`` of those Const ends (ranges.py):
#: the requested range of a Quantize, the output range of the others
FIXED_OUTPUT: dict[str, tuple[str, str]] = {
    "Quantize": ("in_min", "in_max"),
    **{op: ("out_min", "out_max") for op in (
        "Requantize_32to8", "Supernode_8x8p8to8", "Supernode_8x8p32to8", "Supernode_8x8p8to8_d32",
        "Supernode_8x8p32to8_d32", "DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8",
        "DepthwiseSupernode_8x8p8to8_d32", "DepthwiseSupernode_8x8p32to8_d32", "InputSupernode_8x8p8to8_outd32",
        "InputSupernode_8x8p32to8_outd32", "QuantizedBatchNorm_8x8p8to8", "QuantizedBatchNorm_8x8p32to8",
        "QuantizedBatchNorm_8x8p8to8_d32", "QuantizedBatchNorm_8x8p32to8_d32", "QuantizedAdd_8p8to8",
        "QuantizedAdd_8p8to8_d32")},
}
#: every supernode op (flat, d32, depthwise; bias_fit_inputs.py's auto-range defaults)
ALL_SUPERNODES = ("Supernode_8x8p8to8", "Supernode_8x8p32to8", "Supernode_8x8p8to8_d32", "Supernode_8x8p32to8_d32",
                  "DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8", "DepthwiseSupernode_8x8p8to8_d32",
                  "DepthwiseSupernode_8x8p32to8_d32")
#: ops between a product and the requantize that ends its chain (fusion_match.match_conv_chain; bias_fit_chain.py)
CHAIN_LINKS = ("QuantizedBiasAdd_32p32to32", "QuantizedBiasAdd_8p8to32", "QuantizedChannelScale_32xf",
               "Requantize_32to8")
#: ops move_relus crosses on the way up (relus.py): data in slot ``data``, range passed through, and
#: op(relu(x)) == relu(op(x))
RELU_COMMUTES = frozenset({
    "QuantizedMaxPool_8", "QuantizedReshape", "QuantizedFlatten", "QuantizedStridedSlice_8", "QuantizedSlice_8",
    "Transpose_8", "SpaceToDepth_8", "DepthToSpace_8", "BatchToSpaceND_8", "SpaceToBatchND_8", "QuantizedTile_8",
    "ResizeNearestNeighbor_8",
})
#: supernode-like producers whose ranges can absorb a scale, with their six range slots (weights min / max,
#: bias min / max, output min / max): prepare.c range_inputs_convolution / _batchnorm (scalar_mpys.py)
SCALABLE: dict[str, tuple[str, ...]] = {
    **{op: ("w_min", "w_max", "bias_min", "bias_max", "out_min", "out_max") for op in (
        "Supernode_8x8p8to8", "Supernode_8x8p32to8", "DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8")},
    **{op: ("scale_min", "scale_max", "bias_min", "bias_max", "out_min", "out_max") for op in (
        "QuantizedBatchNorm_8x8p8to8", "QuantizedBatchNorm_8x8p32to8")},
}
#: transposed conv op -> (bias add op, 8-bit bias): expand_transpose_conv_nodes.c's info tables (transpose_conv.py)
TRANSPOSE_CONV_OPS: dict[str, tuple[str, bool]] = {
    "QuantizedTransposeConv2d_8x8p32to8": ("QuantizedBiasAdd_32p32to32", False),
    "QuantizedTransposeConv2d_8x8p8to8": ("QuantizedBiasAdd_8p8to32", True),
}
#: ops convert_to_depth32 converts only when their input 0 is already d32 (a Convert_from_d32 output; d32_passes.py)
WHEN_INPUT_D32 = frozenset({"QuantizedTanh_8", "QuantizedSigmoid_8", "Requantize_8to8"})
#: flat supernode -> its input supernode (d32 output; prepare.c do_convert_to_short_conv, d32_passes.py)
INPUT_SUPERNODES = {"Supernode_8x8p8to8": "InputSupernode_8x8p8to8_outd32",
                    "Supernode_8x8p32to8": "InputSupernode_8x8p32to8_outd32"}
#: the d32 supernodes whose ranges a QuantizedConcat_8_d32 can unify (d32_passes.py)
D32_SUPERNODES = frozenset({"Supernode_8x8p8to8_d32", "Supernode_8x8p32to8_d32"})
#: ops kept even when nothing reads them (NN_NODE_FLAG_RETAIN; check.py), besides nodes with no outputs and
#: the ``Close*`` ops (:data:`RETAINED_PREFIX`)
RETAINED_OPS = frozenset({"INPUT", "OUTPUT", "Sink", "Check", "Assign", "Variable", "PPrint_8", "PPrint_32",
                          "PPrint_f", "PPrint_8_d32", "PPrintWithPadding_8_d32"})
RETAINED_PREFIX = "Close"
#: the product ops whose kernels hold working arrays per output element while they run (exact sums and
#: pre-saturation codes; hexnn_import.engine.activation_bytes counts them towards the peak): the 8x8 -> 32
#: products, the transposed / grouped / dilated convs and every supernode
WORK_OPS = frozenset({
    "QuantizedConv2d_8x8to32", "QuantizedConv2d_16x16to32", "QuantizedDepthwiseConv2d_8x8to32",
    "QuantizedMatMul_8x8to32", "QuantizedMatMul_8x8to32_ref", "QuantizedTransposeConv2d_8x8p32to8",
    "QuantizedTransposeConv2d_8x8p8to8",
    "QuantizedTransposeConv2d_16x16p32to16", "QuantizedGroupedConv2d_8x8p32to8", "QuantizedDilatedConv2d_8x8p32to8",
    *ALL_SUPERNODES, "InputSupernode_8x8p8to8_outd32", "InputSupernode_8x8p32to8_outd32",
    "Supernode_16x16p32to16", "Supernode_u16x16p32to16_d32",
})

#: class -> its ops (an op may be in several: its flags are or-ed)
_GROUPS: tuple[tuple[OpClass, tuple[str, ...]], ...] = (
    (OpClass.REQUANTRANGE, ("RequantizationRange_32",)),
    (OpClass.QUANTIZE, ("Quantize", "AutoQuantize")),
    (OpClass.DEQUANTIZE, ("Dequantize",)),
    (OpClass.REQUANT8, ("Requantize_8to8",)),
    (OpClass.REQUANT32, tuple(sorted(REQUANT32_OPS))),
    (OpClass.ADD32, ("QuantizedAdd_8p8to32",)),
    (OpClass.PRODUCT32, tuple(FUSED_OPS)),
    (OpClass.RELU, tuple(sorted(RELU_OPS))),
    (OpClass.SUPERNODE, tuple(sorted(SUPERNODE_OPS))),
    (OpClass.D32_CANDIDATE, (*D32_OPS, *sorted(OVERSIZE_CANDIDATES))),
    (OpClass.D32_CONVERT, ("Convert_to_d32", "Convert_from_d32")),
    (OpClass.CONCAT_D32, ("QuantizedConcat_8_d32",)),
    (OpClass.CONST, ("Const",)),
    (OpClass.QUANTMUL8TO32, ("QuantizedMul_8x8to32",)),
    (OpClass.TRANSPOSECONV, ("QuantizedTransposeConv2d_8x8p32to8", "QuantizedTransposeConv2d_8x8p8to8",
                             "QuantizedTransposeConv2d_16x16p32to16")),
)


def _class_table(groups: tuple[tuple[OpClass, tuple[str, ...]], ...]) -> dict[str, OpClass]:
    out: dict[str, OpClass] = {}
    for flag, ops in groups:
        for op in ops:
            out[op] = out.get(op, OpClass.NONE) | flag
    return out


_CLASSES: dict[str, OpClass] = _class_table(_GROUPS)


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
