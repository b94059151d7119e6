"""Why a lowered layer's outputs miss its source runtime's, per kernel and reference: the manifest row's
``agreement_note`` (:mod:`.layer_agreement`; docs/xs3.md, "What lowers on real models").

The bar is SEMANTICS §8's: >= 99% of a layer's outputs equal to the runtime's, none more than 1 code off. Each
reason below was measured on the repository's models (the BSO's two roundings: ``bench/xs3_fc16_composition.py``
shows ``fully_connected_16`` plus a rounding shift agrees no better; onnxruntime's U8S8 saturation: its exact
U8U8 kernels put every such layer within 1).
"""
from __future__ import annotations


#: the agreement bar of a lowered layer (SEMANTICS §8)
BAR_EXACT, BAR_DIFF = 0.99, 1
#: the runtime kernels a layer is compared with, by the ``kernels`` name of :func:`litert_codes`
REFERENCE_NAMES = {"builtin": "LiteRT builtin int8 kernels", "auto": "LiteRT default (XNNPACK delegate)",
                   "reference": "LiteRT reference kernels", "onnxruntime": "onnxruntime (graph optimizations off)"}
#: source ops whose LiteRT default kernel (XNNPACK, what ``Interpreter`` runs unless told otherwise) is not its
#: builtin one in arithmetic, with why that one is the reference: LiteRT's builtin int8 MEAN offsets its
#: rounding per shape (a truncated zero-point term), XNNPACK's rounds the exact mean once, as lib_nn's
#: depthwise conv does (docs/xs3.md, "What lowers on real models")
DEFAULT_KERNEL_OPS = {"MEAN": "auto"}
#: why a kernel's outputs can miss LiteRT's by one code (the output stage no lib_nn composition avoids)
BSO_NOTE = ("lib_nn's BSO output stage rounds twice (the accumulator to 16 bits by shift1, then a 16-bit scale "
            "and shift2) where LiteRT rounds once with a 31-bit multiplier; every lib_nn kernel with weights "
            "(conv2d_*, fully_connected_8 / _16) goes through that int16 stage (the VPU's VLSAT / VLMUL), so no "
            "composition is exact (fully_connected_16 then a rounding shift by 8 agrees no better); a layer with "
            "few outputs shows each such near-tie as a large share")
NOTES = {**{k: BSO_NOTE for k in ("conv2d_deep", "conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise",
                                   "fully_connected_8", "fully_connected_16")},
         "add_elementwise": "lib_nn's add_elementwise scales each input by a 16-bit multiplier and rounds "
                            "twice, LiteRT's int8 ADD once with 31-bit multipliers",
         "avgpool2d": "lib_nn's avgpool2d scales the sum by an 8-bit factor, LiteRT divides exactly",
         "avgpool2d_global": "lib_nn's avgpool2d_global scales the sum by an 8-bit factor, LiteRT divides "
                             "exactly"}


#: QOperator ops onnxruntime runs on its U8S8 kernels (``vpmaddubsw`` on x86 without VNNI: 16-bit saturation)
U8S8_OPS = frozenset({"QLinearConv", "QGemm", "QLinearMatMul"})
U8S8_NOTE = ("onnxruntime's U8S8 kernel sums pairs of uint8 x int8 products in 16 bits with saturation "
             "(vpmaddubsw) on an x86 CPU without VNNI, as this one; against its exact U8U8 kernels "
             "(session.x64quantprecision, graph optimizations on) the QOperator MobileNetV3-small's and "
             "EfficientNet-B0's such layers are all within 1 code")
MEAN_NOTE = {"onnxruntime": "onnxruntime averages in float32 and rounds half to even; lib_nn's depthwise conv "
                            "rounds the exact mean half up through a 15-bit scale: ties and near-ties differ by 1",
             "auto": "XNNPACK rounds the exact mean once; lib_nn's depthwise conv through a 15-bit scale",
             "builtin": "LiteRT's builtin int8 MEAN offsets its rounding per shape (a truncated zero-point term)"}


def shortfall_note(kernel: str, reference: str, opname: str = "", source_op: str = "") -> str:
    """Why a layer of ``kernel`` (source op ``opname`` / ``source_op``) misses the bar against ``reference``
    (the manifest row's ``agreement_note``)."""
    if source_op in U8S8_OPS and reference == "onnxruntime" and not _vnni():
        return U8S8_NOTE
    if opname == "MEAN" and reference in MEAN_NOTE:
        return MEAN_NOTE[reference]
    why = NOTES.get(kernel)
    if kernel == "lookup8":
        why = ("its table is LiteRT's builtin int8 arithmetic of the op" if reference != "onnxruntime" else
               "its table is onnxruntime's float32 arithmetic of the op")
        why += f"; {REFERENCE_NAMES.get(reference, reference)} computes some codes otherwise"
    return why or f"not analysed: {kernel} against {REFERENCE_NAMES.get(reference, reference)}"


def _vnni() -> bool:
    """Whether this CPU has VNNI (then onnxruntime's U8S8 products are exact)."""
    from hexnn_import.ops.compiled_int8 import cpu_flags

    return bool({"avx512_vnni", "avx_vnni"} & set(cpu_flags()))
