"""convert_insane_dwise: depthwise convolutions that are another op (hexagon_nn 2.14.1 prepare.c
``do_convert_insane_dwise``, ``do_convert_insane_dwise_to_Mul``, ``do_convert_insane_dwise_to_Conv2d``;
optimize() runs it right after make_quantized_dwise, before remove_unnecessary_quants, on every node).

A ``QuantizedDepthwiseConv2d_8x8to32`` whose filter (input 1) and stride (input 6) are Consts becomes

- ``QuantizedMul_8x8to32`` when the filter is ``1 x 1`` with depth multiplier 1 (``filt_height``,
  ``filt_width``, ``filt_batches`` all 1) and the stride is ``1 x 1``: an elementwise multiply that
  broadcasts the filter over the channels. The new node takes the depthwise's first six inputs
  (data, filter and the four range ends), padding ``NN_PAD_NA``, its id and output definitions; the
  filter Const's shape ``[1, 1, C, 1]`` becomes ``[1, 1, 1, C]`` (``filt_depth`` and
  ``filt_batches`` swapped in its tensor shape and output definition, in place, as the C does - its
  bytes are the same);
- else ``QuantizedConv2d_8x8to32`` when the filter's input depth (``filt_depth``) is 1: a depthwise
  convolution of one input channel is an ordinary one, whose filter ``[h, w, 1, M]`` is already laid
  out as a convolution's. The new node takes the depthwise's seven inputs, padding, id and output
  definitions.

The products compute the same sums as the depthwise (each output channel ``c`` is ``x[..., c] * f[c]``
resp. ``sum x[..., 0] * f[..., m]``), so only the op - and what the later passes make of it - changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.graph import NNPad, Node, OutputDef
from hexnn_import.optimizer.consts import purge_const_cache
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import replace_node_with
from hexnn_import.optimizer.lookup import find_node_must_be_Const
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.slots import slot
from hexnn_import.ops.op_groups import OpClass

DWISE = "QuantizedDepthwiseConv2d_8x8to32"


def swap_filter_depth_batches(ed: GraphEditor, filt: Node) -> None:
    """Swap dims 2 and 3 (``filt_depth``, ``filt_batches``) of a Const filter's shape and output definition,
    in place (do_convert_insane_dwise_to_Mul); the bytes stay."""
    h, w, d, b = filt.output_defs[0].shape
    filt.output_defs[0] = OutputDef((h, w, b, d), filt.output_defs[0].dtype)
    if filt.data is not None:
        filt.data = np.ascontiguousarray(filt.data).reshape(h, w, b, d)
    purge_const_cache(ed, filt.node_id)
    ed.changes += 1


def convert(ed: GraphEditor, node: Node, op: str, n_inputs: int, padding: NNPad) -> None:
    """The ctor of ``op`` on the depthwise's first ``n_inputs`` refs, same id and output definitions,
    put where the depthwise was (replace_nodes)."""
    new = ed.make_node(op, node.inputs[:n_inputs], node.output_defs, padding, node.name, node_id=node.node_id)
    replace_node_with(ed, None, node, new)


@dataclass(frozen=True)
class ConvertInsaneDwise(PatternPass):
    """1x1 depthwise, multiplier 1, stride 1 -> QuantizedMul_8x8to32; one input channel -> QuantizedConv2d."""

    name: str = "convert_insane_dwise"
    requires: ClassVar[OpClass] = OpClass.PRODUCT32
    ordered: ClassVar[bool] = True  # graph_iterator: list order (a filter shared by two nodes is swapped once)
    roots: ClassVar[frozenset[str]] = frozenset({DWISE})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        if node.op != DWISE:
            return False
        filt = find_node_must_be_Const(ed, slot(node, "filter").src_id)
        stride = find_node_must_be_Const(ed, slot(node, "stride").src_id)
        if filt is None or stride is None or len(filt.output_defs[0].shape) != 4 \
                or len(stride.output_defs[0].shape) != 4:
            return False
        fh, fw, fdepth, fbatches = filt.output_defs[0].shape
        _, sh, sw, _ = stride.output_defs[0].shape
        if (fh, fw, fbatches, sh, sw) == (1, 1, 1, 1, 1):
            convert(ed, node, "QuantizedMul_8x8to32", 6, NNPad.NA)
            swap_filter_depth_batches(ed, filt)
            return True
        if fdepth == 1:
            convert(ed, node, "QuantizedConv2d_8x8to32", 7, node.padding)
            return True
        return False
