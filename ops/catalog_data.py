"""Raw op catalog entries, one per op named in the two op documents (format: see catalog.py).

Written by hand from ``hexagon_nn_ops.txt`` (the main document) and
``hexagon_nn_ops_early.txt`` (the early edition), in the main document's
order; the few names only the early edition has come last, then the few ops no
document names that hexagon_nn 2.14.1's prepare.c creates (``source`` "nnlib",
from nnlib's op table; their notes cite the C file). Each entry says
where the op is documented (``source``), what it computes (``doc``), and what
the text gets wrong or leaves open (``notes``).

Conventions used throughout (the documents use them too, mostly):

- quantized data travels with two float scalar inputs ``in_min``/``in_max``
  and gives outputs ``data, min, max`` in that order; where a text lists
  ``max, min`` the entry still says min then max and notes it.
- a type the text leaves out is the obvious one for the op's suffix
  (``_f`` float, ``_int32`` int32, ``_8`` quint8, ``_16`` qint16, ``_u16``
  quint16, ``_d32`` quint8_d32), and the notes say so.
- 8-bit data the text calls "uint8_t" or "qint8" but that carries a min/max
  range is quint8 (hexagon_nn has no signed 8-bit quantized type).
- variadic ops give ``n_inputs``/``n_outputs`` and describe the repeat in
  ``notes``; their slot lists show one instance of each repeated slot.
"""

OPS: dict[str, dict] = {
    # ------------------------------------------------------------------
    # Graph input/output, constants, debug and checking ops
    # ------------------------------------------------------------------
    "INPUT": {
        "inputs": [], "outputs": ["data:any"], "n_outputs": (0, None),
        "source": "both", "doc": "graph input",
        "notes": "0 inputs, n outputs: one output per tensor handed to hexagon_nn_execute()",
    },
    "OUTPUT": {
        "inputs": ["data:any"], "n_inputs": (0, None), "outputs": [],
        "source": "both", "doc": "graph output",
        "notes": "n inputs, 0 outputs: each input is one tensor returned by hexagon_nn_execute()",
    },
    "Convert_to_aix_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "from_aix:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "re-lay d32 data out in the 'aix d32' format; min/max pass through",
        "notes": "element types not stated: input taken as d32 quint8, output typed quint8 because the aix d32 "
                 "layout is not the hexagon_nn d32 layout of SEMANTICS §7; input 3 is a flag (read as int32)",
    },
    "Nop": {
        "inputs": ["data:any"], "n_inputs": (0, None), "outputs": ["data:any"], "n_outputs": (0, None),
        "source": "both", "doc": "copy each input to the output of the same index",
        "notes": "n inputs, n outputs; output i is a copy of input i",
    },
    "Sink": {
        "inputs": ["data:any"], "n_inputs": (0, None), "outputs": [],
        "doc": "consume its inputs and do nothing",
        "notes": "N inputs of any type, 0 outputs",
    },
    "Const": {"inputs": [], "outputs": ["data:any"], "source": "both", "doc": "constant data"},
    "Check": {
        "inputs": ["a:any", "b:any"], "outputs": [],
        "source": "both", "doc": "check that input 0 == input 1",
    },
    "Close_f": {
        "inputs": ["dut:float", "ref:float", "?tolerance:float"], "outputs": [],
        "source": "both", "doc": "check that float input 0 is close to input 1",
        "notes": "heading says 2 inputs; 'optional 2nd parameter' (0-based input 2) is the allowed error as a "
                 "fraction of the reference range, default 0.07",
    },
    "Close_quint8": {
        "inputs": ["dut:quint8", "ref:quint8"], "outputs": [],
        "source": "both", "doc": "check that quint8 input 0 is close to input 1",
    },
    "Close_int32": {
        "inputs": ["dut:int32", "ref:int32"], "outputs": [],
        "source": "both", "doc": "check that int32 input 0 is close to input 1",
    },
    "Close_qint32": {
        "inputs": ["dut:qint32", "ref:qint32"], "outputs": [],
        "source": "both", "doc": "check that qint32 input 0 is close to input 1",
    },
    "Close_q_quint8": {
        "inputs": ["dut:quint8", "dut_min:float", "dut_max:float", "ref:quint8", "ref_min:float", "ref_max:float",
                   "?offset_index:int32", "?error_ratio:float"],
        "outputs": [],
        "source": "both", "doc": "dequantize DUT and REF quint8 tensors and check they are close",
        "notes": "text types data as uint8_t (it is dequantized, so quint8); the early edition has only the 6 "
                 "required inputs; types of optional offset_index (int32) and error_ratio (float, default 0.07 "
                 "= FUDGE_FACTOR) are not stated",
    },
    "Close_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "ref:float",
                   "?max_excess_error:float", "?max_error_frac:float"],
        "outputs": [],
        "source": "both", "doc": "check d32 quint8 data against a float reference (excess-error test)",
        "notes": "defaults: max excess error 0.2, max fraction with excess error 0.05; a negative input 4 forces "
                 "logging of stats",
    },
    "PPrint_8": {
        "inputs": ["data:quint8", "?dim:int32", "?start:int32", "?stop:int32"], "outputs": [],
        "source": "both", "doc": "pretty-print an 8-bit tensor",
        "notes": "optional int scalars limit the display on one axis (dim -1 = no limit)",
    },
    "PPrint_8_d32": {
        "inputs": ["data:quint8_d32", "?dim:int32", "?start:int32", "?stop:int32"], "outputs": [],
        "source": "both", "doc": "pretty-print a d32 tensor",
    },
    "PPrintWithPadding_8_d32": {
        "inputs": ["data:quint8_d32", "?dim:int32", "?start:int32", "?stop:int32"], "outputs": [],
        "source": "both", "doc": "pretty-print a d32 tensor including its padding bytes",
        "notes": "'before' padding shows with negative indices",
    },
    "PPrint_32": {
        "inputs": ["data:int32|qint32", "?dim:int32", "?start:int32", "?stop:int32"], "outputs": [],
        "source": "both", "doc": "pretty-print a 32-bit tensor",
        "notes": "element type not stated; int32 or qint32 accepted",
    },
    "PPrint_f": {
        "inputs": ["data:float", "?dim:int32", "?start:int32", "?stop:int32"], "outputs": [],
        "source": "both", "doc": "pretty-print a float tensor",
    },

    # ------------------------------------------------------------------
    # Shape, transpose, reshape and layout conversion
    # ------------------------------------------------------------------
    "Flatten": {
        "inputs": ["data:any"], "outputs": ["data:any"],
        "source": "both", "doc": "flatten [b,h,w,d] to [1,1,1,b*h*w*d]",
        "notes": "the early edition says 'No output' and copies QuantizedFlatten's deprecation text; the main "
                 "document's 1 input / 1 output is used",
    },
    "Shape_int32": {
        "inputs": ["data:any"], "outputs": ["shape:int32"],
        "doc": "the shape {b,h,w,d} of the input as a [1,1,1,4] int32 tensor",
    },
    "Rank_int32": {
        "inputs": ["data:any", "rank:int32"], "outputs": ["rank:int32"],
        "doc": "copy the int32 rank scalar (input 1) to the output",
    },
    "Transpose_f": {
        "inputs": ["data:float", "perm:int32"], "outputs": ["data:float"],
        "doc": "reorder the last n axes of a float tensor by a [1,1,1,n] permutation",
        "notes": "data type not stated in the shared text; float by the suffix",
    },
    "Transpose_int32": {
        "inputs": ["data:int32", "perm:int32"], "outputs": ["data:int32"],
        "doc": "reorder the last n axes of an int32 tensor by a [1,1,1,n] permutation",
        "notes": "data type not stated in the shared text; int32 by the suffix",
    },
    "Transpose_8": {
        "inputs": ["data:quint8", "perm:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "reorder the last k axes of quint8 data; range passes through",
    },
    "Transpose_16": {
        "inputs": ["data:quint8|quint16|qint16", "perm:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8|quint16|qint16", "min:float", "max:float"],
        "doc": "reorder the last n axes of 8/16-bit quantized data; range passes through",
        "notes": "output data has the type of input 0",
    },
    "Reshape": {
        "inputs": ["data:any", "shape:int32"], "outputs": ["data:any"],
        "doc": "same data, new shape given as 1..4 int32 (one may be -1)",
    },
    "QuantizedReshape": {
        "inputs": ["data:quint8|qint32", "shape:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8|qint32", "min:float", "max:float"],
        "source": "ops", "doc": "change the shape of quantized data",
        "notes": "the text calls input 1 a 'shape tensor' but its values are read (1..4 ints, one may be -1), "
                 "so it is int32 as for Reshape",
    },
    "Convert_from_d32": {
        "inputs": ["data:quint8_d32"], "outputs": ["data:quint8"],
        "source": "both", "doc": "convert a d32-layout quint8 tensor to the flat layout",
        "notes": "the main document swaps the Convert_to_d32 / Convert_from_d32 descriptions (the early edition "
                 "has only this heading, with the to-d32 text); by name this op takes d32 and gives flat. The "
                 "swapped text lists 4 optional padding inputs here, which a flat output cannot use: none accepted",
    },
    "Convert_to_d32": {
        "inputs": ["data:quint8", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:quint8_d32"],
        "doc": "convert a flat quint8 tensor to the d32 layout, with optional padding amounts",
        "notes": "the document swaps the Convert_to_d32 / Convert_from_d32 descriptions; by name this op takes a "
                 "flat quint8 tensor and produces d32. Its (swapped) text also says 'Inputs: 1:' for the single "
                 "output. Padding defaults: depth-before 0 (0..31), width-left 4 (0..7), width-right min 0 (0..7, "
                 "rounded so the total width is a multiple of 4, minus 4 if over 7), top/bottom 4",
    },
    "QuantizedFlatten": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "flatten to [1,1,1,n] (deprecated, as reshape)",
        "notes": "both texts add 'No output' after listing the 3 outputs (copy error); 3 outputs used",
    },

    # ------------------------------------------------------------------
    # Convolutions
    # ------------------------------------------------------------------
    "QuantizedConv2d_8x8to32": {
        "inputs": ["data:quint8", "filter:quint8", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "stride:shape"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "source": "both", "doc": "quantized 2-D convolution to qint32",
        "notes": "needs SAME or VALID padding; the early edition lists outputs 1,2 as max,min: min then max is used",
    },
    "QuantizedConv2d_16x16to32": {
        "inputs": ["data:quint8|quint16", "filter:quint8|quint16", "in_min:float", "in_max:float",
                   "filter_min:float", "filter_max:float", "stride:shape"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "quantized 2-D convolution of 8/16-bit data to qint32",
        "notes": "needs SAME or VALID padding",
    },
    "QuantizedTransposeConv2d_8x8p32to8": {
        "inputs": ["data:quint8", "filter:quint8", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "pad:int32", "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float",
                   "out_min:float", "out_max:float", "?channel_scale:float", "?groups:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quantized transposed 2-D convolution with qint32 bias, requantized to quint8",
        "notes": "filter [O,H,W,I] ([O/groups,H,W,I] when groups > 1); pad is [1,1,2,2] {top,bottom,left,right}; "
                 "out min/max -inf/+inf for no clipping; channel scales in (1/32, 1]; no dilation",
    },
    "QuantizedTransposeConv2d_8x8p8to8": {
        "inputs": ["data:quint8", "filter:quint8", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "pad:int32", "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float",
                   "out_min:float", "out_max:float", "?channel_scale:float", "?groups:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quantized transposed 2-D convolution with quint8 bias, requantized to quint8",
        "notes": "heading shared with the 16x16p32to16 variant ('13/15 inputs' read as 13..15); channel scales in "
                 "(0, 1] here vs (1/32, 1] in the p32 text; filter [O,H,W,I]; pad [1,1,2,2]; no dilation",
    },
    "QuantizedTransposeConv2d_16x16p32to16": {
        "inputs": ["data:quint16", "filter:quint16", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "pad:int32", "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "quantized transposed 2-D convolution of 16-bit data with qint32 bias, to quint16",
        "notes": "shares the 8x8p8to8 heading ('13/15 inputs'), but the text says the 16-bit variant does not "
                 "support inputs 13 (channel scales) and 14 (groups), so it takes exactly 13; bias typed '(int32)' "
                 "in the text, qint32 here since it has a min/max",
    },
    "QuantizedGroupedConv2d_8x8p32to8": {
        "inputs": ["data:quint8", "filter:quint8", "bias:qint32", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "bias_min:float", "bias_max:float", "stride:shape", "groups:int32",
                   "out_min:float", "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quantized grouped 2-D convolution with qint32 bias, requantized to quint8",
        "notes": "input order differs from the supernodes (bias is input 2); needs SAME or VALID padding; "
                 "channel scales in (1/32, 1], shape [1,1,1,out channels]",
    },
    "QuantizedDilatedConv2d_8x8p32to8": {
        "inputs": ["data:quint8", "filter:quint8", "bias:qint32", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "bias_min:float", "bias_max:float", "stride:shape", "dilation:int32",
                   "out_min:float", "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quantized dilated 2-D convolution with bias, requantized to quint8",
        "notes": "the text types the bias '(quint8)' but the op is p32: qint32 used; dilation is [1,1,1,2] "
                 "{h,w} given as uint32 (int32 here); stride must be 1x1x1x1; needs SAME or VALID padding",
    },

    # ------------------------------------------------------------------
    # Matrix multiply, bias add
    # ------------------------------------------------------------------
    "QuantizedMatMul_8x8to32": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "source": "both", "doc": "quantized matrix multiplication to qint32",
        "notes": "the document lists outputs 1,2 as max,min; hexagon_nn returns min then max like every other op; "
                 "A and B are 2-D matrices in the W and D dimensions",
    },
    "QuantizedBiasAdd_8p8to32": {
        "inputs": ["data:quint8", "bias:quint8", "in_min:float", "in_max:float", "bias_min:float", "bias_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "source": "both", "doc": "add a quint8 bias to quint8 data, qint32 result",
        "notes": "the document lists outputs 1,2 as max,min; min then max is used",
    },
    "QuantizedBiasAdd_32p32to32": {
        "inputs": ["data:qint32", "bias:qint32", "in_min:float", "in_max:float", "bias_min:float", "bias_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "add a qint32 bias to qint32 data, qint32 result",
        "notes": "the document lists outputs 1,2 as max,min; min then max is used",
    },

    # ------------------------------------------------------------------
    # Activations and requantization
    # ------------------------------------------------------------------
    "QuantizedRelu_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "max(x, 0) on quint8",
        "notes": "output typed 'qunit8' (typo for quint8) in the main document",
    },
    "QuantizedReluX_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "x:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "min(max(x, 0), X) on quint8",
    },
    "QuantizeDownAndShrinkRange_32to8": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "requantize qint32 to quint8 over the data's own range",
    },
    "QuantizeDownAndShrinkRange_32to16": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float"], "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "requantize qint32 to qint16 over the data's own (symmetric) range",
        "notes": "output range is at least 1/64k of the input range (codes never scaled by > 1.0)",
    },
    "RequantizationRange_32": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float"], "outputs": ["min:float", "max:float"],
        "doc": "range of a qint32 tensor as floats",
        "notes": "output min is always <= 0 and max >= 0",
    },
    "Requantize_32to8": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float", "out_min:float", "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "requantize qint32 to quint8 over a given range",
        "notes": "input 4 is written '4  Specified output max' (missing colon)",
    },
    "Requantize_8to8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "out_min:float", "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "requantize quint8 to a new quint8 range",
    },
    "Requantize_32to16": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float", "out_min:float", "out_max:float"],
        "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "requantize qint32 to qint16 over a given range, made symmetric",
    },

    # ------------------------------------------------------------------
    # Pooling
    # ------------------------------------------------------------------
    "QuantizedMaxPool_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "max pooling on quint8",
    },
    "QuantizedAvgPool_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "average pooling on quint8",
    },
    "QuantizedL2Pool_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "L2 pooling on quint8",
    },
    "QuantizedMaxPool_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "max pooling on d32 quint8",
    },
    "QuantizedAvgPool_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "average pooling on d32 quint8",
    },
    "QuantizedL2Pool_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "window:shape", "stride:shape"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "L2 pooling on d32 quint8",
    },

    # ------------------------------------------------------------------
    # Supernodes (convolve + bias + requantize)
    # ------------------------------------------------------------------
    "Supernode_8x8p8to8": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "convolve, add quint8 bias, requantize to quint8",
        "notes": "'12/13 inputs': channel scales optional, each in (0, 1]; out min/max -inf/+inf mean auto; "
                 "weights flat [fh,fw,din,dout]",
    },
    "Supernode_8x8p8to8_d32": {
        "inputs": ["data:quint8_d32", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "convolve d32 data, add quint8 bias, requantize to d32 quint8",
        "notes": "weights stay flat; '12/13 inputs' as for Supernode_8x8p8to8",
    },
    "Supernode_8x8p32to8": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "convolve, add qint32 bias, requantize to quint8",
        "notes": "'12/13 inputs': channel scales optional, each in (0, 1]; out min/max -inf/+inf mean auto",
    },
    "Supernode_8x8p32to8_d32": {
        "inputs": ["data:quint8_d32", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "convolve d32 data, add qint32 bias, requantize to d32 quint8",
        "notes": "weights stay flat; '12/13 inputs' as for Supernode_8x8p32to8",
    },
    "InputSupernode_8x8p8to8_outd32": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "convolve flat graph-input data (depth 1..4), add quint8 bias, requantize to d32 quint8",
        "notes": "'12/13 inputs' (op_supernode_new.c NN_IOCOUNT_RANGE(12,13)): the device never reads the 13th "
                 "(shortin_supernode_check), nor does the engine",
    },
    "InputSupernode_8x8p32to8_outd32": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "convolve flat graph-input data (depth 1..4), add qint32 bias, requantize to d32 quint8",
        "notes": "'12/13 inputs' (op_supernode_new.c NN_IOCOUNT_RANGE(12,13)): the device never reads the 13th "
                 "(shortin_supernode_check), nor does the engine",
    },
    "DepthwiseSupernode_8x8p8to8": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "depthwise convolve, add quint8 bias, requantize to quint8",
        "notes": "weights [fh,fw,din,dmul]; dout = din*dmul; "
                 "'12/13 inputs' (hexagon_nn 2.14.1 op_dwise_snode_8bit.c / op_supernode.c "
                 "NN_IOCOUNT_RANGE(12,13)): channel scales optional, one per output channel in [1/2048, 1] "
                 "(supernode_utils.h load_channel_scales), a single 1.0 meaning none; prepare.c "
                 "make_supernodes gives it when it fuses a QuantizedChannelScale_32xf",
    },
    "DepthwiseSupernode_8x8p8to8_d32": {
        "inputs": ["data:quint8_d32", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "depthwise convolve d32 data, add quint8 bias, requantize to d32 quint8",
        "notes": "weights stay flat; '12/13 inputs' as for DepthwiseSupernode_8x8p8to8",
    },
    "DepthwiseSupernode_8x8p32to8": {
        "inputs": ["data:quint8", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "depthwise convolve, add qint32 bias, requantize to quint8",
        "notes": "weights [fh,fw,din,dmul]; dout = din*dmul; "
                 "'12/13 inputs' (hexagon_nn 2.14.1 op_dwise_snode_8bit.c / op_supernode.c "
                 "NN_IOCOUNT_RANGE(12,13)): channel scales optional, one per output channel in [1/2048, 1] "
                 "(supernode_utils.h load_channel_scales), a single 1.0 meaning none; prepare.c "
                 "make_supernodes gives it when it fuses a QuantizedChannelScale_32xf",
    },
    "DepthwiseSupernode_8x8p32to8_d32": {
        "inputs": ["data:quint8_d32", "weights:quint8", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "depthwise convolve d32 data, add qint32 bias, requantize to d32 quint8",
        "notes": "weights stay flat; '12/13 inputs' as for DepthwiseSupernode_8x8p32to8",
    },

    # ------------------------------------------------------------------
    # Batch norm (scale + bias per channel)
    # ------------------------------------------------------------------
    "QuantizedBatchNorm_8x8p8to8": {
        "inputs": ["data:quint8", "scale:quint8", "in_min:float", "in_max:float", "scale_min:float",
                   "scale_max:float", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "out = in * scale[d] + bias[d], quint8 bias, requantized to quint8",
        "notes": "the text calls input 1 'Weights'; scale and bias are [1,1,1,d] or [1,1,1,1]; "
                 "out min/max -inf/+inf mean auto",
    },
    "QuantizedBatchNorm_8x8p8to8_d32": {
        "inputs": ["data:quint8_d32", "scale:quint8", "in_min:float", "in_max:float", "scale_min:float",
                   "scale_max:float", "bias:quint8", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "out = in * scale[d] + bias[d] on d32 data, quint8 bias",
        "notes": "scale stays flat; the text calls inputs 4,5 'weights min/max'",
    },
    "QuantizedBatchNorm_8x8p32to8": {
        "inputs": ["data:quint8", "scale:quint8", "in_min:float", "in_max:float", "scale_min:float",
                   "scale_max:float", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "out = in * scale[d] + bias[d], qint32 bias, requantized to quint8",
    },
    "QuantizedBatchNorm_8x8p32to8_d32": {
        "inputs": ["data:quint8_d32", "scale:quint8", "in_min:float", "in_max:float", "scale_min:float",
                   "scale_max:float", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "out = in * scale[d] + bias[d] on d32 data, qint32 bias",
    },

    # ------------------------------------------------------------------
    # Resize
    # ------------------------------------------------------------------
    "QuantizedResizeBilinear_8": {
        "inputs": ["data:quint8", "size:int32", "in_min:float", "in_max:float", "?align_corners:int32|float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "bilinear resize of quint8 data in h and w to size {h_out, w_out}",
        "notes": "the text types align_corners as a float scalar (elsewhere an int); a 0/non-zero flag, either "
                 "type accepted, default 0",
    },
    "QuantizedResizeBilinear_8_d32": {
        "inputs": ["data:quint8_d32", "size:int32", "in_min:float", "in_max:float", "?align_corners:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "bilinear resize of d32 quint8 data in h and w",
        "notes": "heading says '4 inputs' but lists an optional input 4 (align_corners, default 0; type not "
                 "stated, int32 assumed): 4..5",
    },
    "ResizeBilinear_f": {
        "inputs": ["data:float", "size:int32", "?align_corners:int32"], "outputs": ["data:float"],
        "doc": "bilinear resize of float data in h and w",
        "notes": "heading says 2 inputs and 3 outputs but lists an optional input 2 and a single output: "
                 "2..3 inputs, 1 output; align_corners type not stated, int32 assumed",
    },

    # ------------------------------------------------------------------
    # Concat and split
    # ------------------------------------------------------------------
    "Concat_f": {
        "inputs": ["dim:int32", "data:float"], "n_inputs": (2, None), "outputs": ["data:float"],
        "source": "both", "doc": "concatenate float tensors along a dimension",
        "notes": "N+1 inputs: input 0 the dimension (0=b,1=h,2=w,3=d), inputs 1..N the data tensors",
    },
    "ConcatV2_f": {
        "inputs": ["data:float", "dim:int32"], "n_inputs": (2, None), "outputs": ["data:float"],
        "source": "both", "doc": "concatenate float tensors; the dimension input is last",
        "notes": "N+1 inputs: inputs 0..N-1 the data tensors, input N (last) the dimension; the slot list shows "
                 "one data slot then the dim",
    },
    "ConcatV2_int32": {
        "inputs": ["data:int32", "dim:int32"], "n_inputs": (2, None), "outputs": ["data:int32"],
        "doc": "concatenate int32 tensors; the dimension input is last",
        "notes": "N+1 inputs as ConcatV2_f; the text says 'same as Concat_V2_f' meaning ConcatV2_f",
    },
    "QuantizedConcat_8": {
        "inputs": ["dim:int32", "data:quint8", "in_min:float", "in_max:float"], "n_inputs": (4, None),
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "concatenate quint8 tensors, requantizing to the merged range",
        "notes": "3n+1 inputs: input 0 the dimension, inputs 1..n the data, n+1..2n the mins, 2n+1..3n the maxes; "
                 "only depth (3) is supported",
    },
    "QuantizedConcat_8_d32": {
        "inputs": ["dim:int32", "data:quint8_d32", "in_min:float", "in_max:float"], "n_inputs": (4, None),
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "both", "doc": "concatenate d32 quint8 tensors, requantizing to the merged range",
        "notes": "3n+1 inputs: dim, n data, n mins, n maxes; any dimension",
    },
    "Split_f": {
        "inputs": ["dim:int32", "data:float"], "outputs": ["data:float"], "n_outputs": (1, None),
        "doc": "split a float tensor into N equal parts along a dimension",
        "notes": "N outputs, one per part; N is the node's output count",
    },
    "Split_int32": {
        "inputs": ["dim:int32", "data:int32"], "outputs": ["data:int32"], "n_outputs": (1, None),
        "doc": "split an int32 tensor into N equal parts along a dimension",
        "notes": "N outputs, one per part",
    },
    "QuantizedSplit_8": {
        "inputs": ["dim:int32", "data:quint8", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"], "n_outputs": (3, None),
        "doc": "split quint8 data into n equal parts along a dimension; range passes through",
        "notes": "n+2 outputs: outputs 0..n-1 the parts, n the min, n+1 the max (copied from the input); the slot "
                 "list shows one data slot",
    },

    # ------------------------------------------------------------------
    # Quantized elementwise multiply / add / subtract
    # ------------------------------------------------------------------
    "QuantizedMul_8x8to32": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "elementwise product of two quint8 tensors, qint32 result",
        "notes": "output typed 'quint32' in the text: qint32 meant",
    },
    "QuantizedMul_8x8to8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "elementwise product of two quint8 tensors, quint8 result (flat layout)",
        "notes": "heading has no colon; inputs typed 'qint8' in the text: quint8 meant; all broadcast modes",
    },
    "QuantizedMul_8x8to8_d32": {
        "inputs": ["a:quint8_d32", "b:quint8_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "both", "doc": "elementwise product of two d32 quint8 tensors",
        "notes": "heading has no colon; inputs typed 'qint8' in the text: d32 quint8 meant; B broadcasts to A "
                 "(w/d broadcast only when B has b=1, h=1)",
    },
    "QuantizedAdd_8p8to8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise sum of two quint8 tensors, quint8 result",
    },
    "QuantizedAdd_8p8to8_d32": {
        "inputs": ["a:quint8_d32", "b:quint8_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "elementwise sum of two d32 quint8 tensors",
        "notes": "heading says '8 inputs' but 6 and 7 are optional: 6..8; inputs typed 'qint8': d32 quint8 meant",
    },
    "QuantizedSub_8p8to8_d32": {
        "inputs": ["a:quint8_d32", "b:quint8_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "elementwise difference of two d32 quint8 tensors",
        "notes": "heading says '8 inputs' but 6 and 7 are optional: 6..8; inputs typed 'qint8': d32 quint8 "
                 "meant; A-to-B broadcast done as rsub(B, A). The main document has no flat QuantizedSub_8p8to8",
    },
    "QuantizedAdd_16": {
        "inputs": ["a:qint16", "b:qint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "elementwise sum of qint16 tensors (symmetric ranges)",
        "notes": "output range must be given; it is widened (with a warning) when below 1/8192 of the largest "
                 "input range",
    },
    "QuantizedSub_16": {
        "inputs": ["a:qint16", "b:qint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "elementwise difference of qint16 tensors (symmetric ranges)",
        "notes": "output range must be given",
    },
    "QuantizedMul_16": {
        "inputs": ["a:qint16", "b:qint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "elementwise product of qint16 tensors (symmetric ranges)",
        "notes": "output range must be given; widened when below 1/32768 of the product of the input ranges",
    },
    "QuantizedAdd_u16": {
        "inputs": ["a:quint16", "b:quint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "elementwise sum of quint16 tensors (asymmetric ranges)",
        "notes": "output range must be given",
    },
    "QuantizedSub_u16": {
        "inputs": ["a:quint16", "b:quint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "elementwise difference of quint16 tensors (asymmetric ranges)",
        "notes": "output range must be given",
    },
    "QuantizedMul_u16": {
        "inputs": ["a:quint16", "b:quint16", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "elementwise product of quint16 tensors (asymmetric ranges)",
        "notes": "output range must be given",
    },

    # ------------------------------------------------------------------
    # 8 <-> 16 bit conversion
    # ------------------------------------------------------------------
    "Convert_8_16": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "convert quint8 losslessly to qint16 with a symmetric range",
    },
    "Convert_8_u16": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "convert quint8 losslessly to quint16 (codes x257)",
    },
    "Convert_16_8": {
        "inputs": ["data:qint16", "in_min:float", "in_max:float", "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "requantize qint16 to quint8, optionally to a requested range",
        "notes": "'3 or 5 inputs': the requested min and max come together (4 inputs is not valid); "
                 "without them the input range is requested",
    },
    "Convert_u16_8": {
        "inputs": ["data:quint16", "in_min:float", "in_max:float", "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "requantize quint16 to quint8, optionally to a requested range",
        "notes": "input typed 'quint6' in the shared text: quint16 meant; '3 or 5 inputs' (4 is not valid)",
    },

    # ------------------------------------------------------------------
    # Quantize / dequantize
    # ------------------------------------------------------------------
    "AutoQuantize": {
        "inputs": ["data:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "find the range of float data and quantize it to quint8",
        "notes": "the early edition's heading has no colon and numbers both min and max outputs '1'",
    },
    "AutoQuantize_d32": {
        "inputs": ["data:float", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "both", "doc": "find the range of float data and quantize it to d32 quint8",
        "notes": "optional padding inputs as in Convert_to_d32; both texts number the min and max outputs '1'",
    },
    "Quantize": {
        "inputs": ["data:float", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "quantize float data to quint8 over a given range",
    },
    "Dequantize": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:float"],
        "source": "both", "doc": "dequantize quint8 data to float",
        "notes": "the early edition labels the inputs 'Output data/min/max' (copy error)",
    },
    "Quantize_16": {
        "inputs": ["data:float", "in_min:float", "in_max:float"], "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "quantize float data to qint16 with a symmetric range",
    },
    "Quantize_int32": {
        "inputs": ["data:float", "in_min:float", "in_max:float"], "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "quantize float data to qint32",
    },
    "QuantizedDiv_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quantized division a / b, b of shape [1,1,1,d]",
        "notes": "inputs 6,7 ('static min/max') optionally fix the output range",
    },
    "QuantizeForTest_d32": {
        "inputs": ["data:float", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float", "ref:float"], "n_outputs": (3, 4),
        "doc": "AutoQuantize_d32 without HVX, plus an optional float copy of the quantized values",
        "notes": "'4 (or 3) outputs': output 3 (float, corrected to match the quantized data) is optional; "
                 "output 0 typed '(quint8)' but it is d32 like AutoQuantize_d32",
    },
    "QuantizeForTest_16b_d32": {
        "inputs": ["data:float", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:qint16", "min:float", "max:float", "ref:float"], "n_outputs": (3, 4),
        "doc": "quantize float data to 16-bit d32 for tests, plus an optional float copy",
        "notes": "the text is a copy of QuantizeForTest_d32 ('same as AutoQuantize_d32') with output 0 (qint16); "
                 "the 16-bit d32 layout is not modelled by quint8_d32, so output 0 is typed qint16; "
                 "output 3 optional",
    },

    # ------------------------------------------------------------------
    # int32 / float elementwise
    # ------------------------------------------------------------------
    "Range_int32": {
        "inputs": ["start:int32", "limit:int32", "delta:int32"], "outputs": ["data:int32"],
        "doc": "int32 sequence start, start+delta, ... up to (not including) limit",
    },
    "Mul_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a*b (broadcast)"},
    "BitwiseAnd_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a&b"},
    "BitwiseOr_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a|b"},
    "BitwiseXor_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a^b"},
    "BitwiseNot_int32": {"inputs": ["a:int32"], "outputs": ["data:int32"], "doc": "elementwise ~a"},
    "Add_f": {"inputs": ["a:float", "b:float"], "outputs": ["data:float"], "doc": "elementwise a+b (broadcast)"},
    "Sub_f": {"inputs": ["a:float", "b:float"], "outputs": ["data:float"], "doc": "elementwise a-b (broadcast)"},
    "Mul_f": {"inputs": ["a:float", "b:float"], "outputs": ["data:float"], "doc": "elementwise a*b (broadcast)"},
    "Minimum_f": {
        "inputs": ["a:float", "b:float"], "outputs": ["data:float"], "doc": "elementwise min(a, b) (broadcast)",
        "notes": "the shared text also lists max(a,b), which is Maximum_f's own heading",
    },
    "Maximum_f": {
        "inputs": ["a:float", "b:float"], "outputs": ["data:float"], "doc": "elementwise max(a, b) (broadcast)",
    },
    "QuantizedMinimum": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise min(a, b) of quint8 tensors",
        "notes": "heading says '6 inputs' but lists optional 6,7 (output range): 6..8; data typed uint8_t, "
                 "quint8 meant",
    },
    "QuantizedMaximum": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise max(a, b) of quint8 tensors",
        "notes": "heading says '6 inputs' but lists optional 6,7 (output range): 6..8; data typed uint8_t, "
                 "quint8 meant",
    },

    # ------------------------------------------------------------------
    # Reductions
    # ------------------------------------------------------------------
    "Sum_f": {
        "inputs": ["data:float", "?dims:int32", "?rank:int32"], "outputs": ["data:float"],
        "doc": "sum-reduce a float tensor along the listed dims (all when absent)",
        "notes": "with NN_PAD_VALID the reduced dims are squeezed to the end; rank (1..4, default 4) sets how "
                 "dim indices are read; data type by suffix",
    },
    "Prod_f": {
        "inputs": ["data:float", "?dims:int32", "?rank:int32"], "outputs": ["data:float"],
        "doc": "product-reduce a float tensor along the listed dims",
    },
    "Prod_int32": {
        "inputs": ["data:int32", "?dims:int32", "?rank:int32"], "outputs": ["data:int32"],
        "doc": "product-reduce an int32 tensor along the listed dims",
    },
    "Min_f": {
        "inputs": ["data:float", "?dims:int32", "?rank:int32"], "outputs": ["data:float"],
        "source": "both", "doc": "min-reduce a float tensor along the listed dims",
        "notes": "the early edition (shared with Max_f) has 1 input and always reduces to a scalar",
    },
    "Max_f": {
        "inputs": ["data:float", "?dims:int32", "?rank:int32"], "outputs": ["data:float"],
        "source": "both", "doc": "max-reduce a float tensor along the listed dims",
        "notes": "the early edition (shared with Min_f) has 1 input and always reduces to a scalar",
    },

    # ------------------------------------------------------------------
    # Softmax, LRN, tanh, sigmoid
    # ------------------------------------------------------------------
    "Softmax_f": {
        "inputs": ["data:float"], "outputs": ["data:float"],
        "source": "both", "doc": "softmax of float data (1-D)",
        "notes": "the output is numbered '1:' (index 0 meant)",
    },
    "Softmax_uint8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "?beta:float"], "outputs": ["data:float"],
        "doc": "softmax of quint8 data, float result",
        "notes": "the single output is numbered '1:' and typed float, as written",
    },
    "LRN_f": {
        "inputs": ["data:float", "window:shape", "bias:float", "alpha:float", "beta:float"], "outputs": ["data:float"],
        "source": "both", "doc": "local response normalization on float data",
        "notes": "formula differs: main document divides alpha by the window size n, the early edition does not; "
                 "the main text says n is given as an int32 in the window's data, contradicting a shape-only "
                 "window",
    },
    "Tanh_f": {"inputs": ["data:float"], "outputs": ["data:float"], "source": "both", "doc": "tanh(x) on float"},
    "QuantizedTanh_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "tanh on quint8; output range fixed [-1, 0.992188]",
    },
    "QuantizedTanh_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "tanh on d32 quint8; output range fixed [-1, 0.992188]",
        "notes": "output described as 'd3 format' (typo for d32)",
    },
    "Sigmoid_f": {
        "inputs": ["data:float"], "outputs": ["data:float"],
        "source": "both", "doc": "logistic function (1 + tanh(x/2)) / 2 on float",
        "notes": "the early edition writes (1.0 + tanh(x))/2, missing the /2 inside tanh",
    },
    "QuantizedSigmoid_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "logistic function on quint8; output range fixed [0, 1]",
    },
    "QuantizedSigmoid_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "doc": "logistic function on d32 quint8; output range fixed [0, 1]",
        "notes": "output described as 'd3 format' (typo for d32)",
    },

    # ------------------------------------------------------------------
    # Negation, absolute value, relu, clamp, AddN
    # ------------------------------------------------------------------
    "Neg_f": {"inputs": ["data:float"], "outputs": ["data:float"], "doc": "-x on float"},
    "Neg_int32": {"inputs": ["data:int32"], "outputs": ["data:int32"], "doc": "-x on int32"},
    "Abs_f": {"inputs": ["data:float"], "outputs": ["data:float"], "doc": "|x| on float"},
    "Abs_int32": {"inputs": ["data:int32"], "outputs": ["data:int32"], "doc": "|x| on int32"},
    "QuantizedNeg_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "-x on quint8",
    },
    "Relu_f": {
        "inputs": ["data:float"], "outputs": ["data:float"], "doc": "max(0, x) on float",
        "notes": "the text reads 'Performs following function: -x, and max(0,x)' (garbled); max(0,x) meant",
    },
    "ReluX_f": {
        "inputs": ["data:float", "limit:float"], "outputs": ["data:float"], "doc": "min(max(0, x), limit) on float",
    },
    "Clamp_f": {
        "inputs": ["data:float", "min_clamp:float", "max_clamp:float"], "outputs": ["data:float"],
        "doc": "min(max(x, min_clamp), max_clamp) on float",
    },
    "AddN_f": {
        "inputs": ["data:float"], "n_inputs": (1, None), "outputs": ["data:float"],
        "doc": "sum of N same-shape float tensors (no broadcast)",
        "notes": "N >= 1 inputs, all float and the same shape",
    },
    "MaxPool_f": {
        "inputs": ["data:float", "window:shape", "stride:shape"], "outputs": ["data:float"],
        "doc": "max pooling on float",
    },
    "AvgPool_f": {
        "inputs": ["data:float", "window:shape", "stride:shape"], "outputs": ["data:float"],
        "doc": "average pooling on float",
    },
    "L2Pool_f": {
        "inputs": ["data:float", "window:shape", "stride:shape"], "outputs": ["data:float"],
        "doc": "L2 pooling on float",
    },

    # ------------------------------------------------------------------
    # Heatmap keypoints, pack, pad
    # ------------------------------------------------------------------
    "HeatmapMaxKP_f": {
        "inputs": ["heatmaps:float", "rects:float", "is_nchw:int32"], "outputs": ["peaks:float", "xy:float"],
        "doc": "per heatmap, the peak value and its subpixel x,y in the rectangle",
        "notes": "output types not stated: float assumed; heatmap h and w must be >= 2",
    },
    "QuantizedHeatmapMaxKP_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "rects:quint16", "is_nchw:int32"],
        "outputs": ["peaks:quint8", "min:float", "max:float", "xy:quint16"],
        "doc": "per quint8 heatmap, the peak value and its subpixel x,y",
        "notes": "rectangles and x,y typed 'uint16' in the text; quantized with zero 0 and step 0.125, so quint16 "
                 "here (with no min/max inputs)",
    },
    "Pack_f": {
        "inputs": ["data:float"], "n_inputs": (1, None), "outputs": ["data:float"],
        "doc": "stack n same-shape float tensors along a new dimension",
        "notes": "1..n inputs; the rightmost 1 dim of the shape becomes n; data type by suffix",
    },
    "Pack_int32": {
        "inputs": ["data:int32"], "n_inputs": (1, None), "outputs": ["data:int32"],
        "doc": "stack n same-shape int32 tensors along a new dimension",
        "notes": "1..n inputs",
    },
    "Pad_f": {
        "inputs": ["data:float", "pads:int32"], "outputs": ["data:float"],
        "doc": "zero-pad a float tensor; pads int32 [1,1,n,2] before/after per dim",
        "notes": "data type not stated: float by suffix",
    },
    "QuantizedPad_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "pads:int32", "?pad_value:float",
                   "?in_range_flag:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "pad quint8 data with a value; range passes through",
        "notes": "'4...6 inputs'; input 5 'Supplied value (int32 tensor)' is vague (read as hexagon_nn's code "
                 "does: non-zero requires the pad value to lie inside [min, max]); the text says 0.0 is used 'if only 5 inputs', meaning when no pad value is given; "
                 "pad value -inf/+inf becomes code 0/255",
    },
    "QuantizedPad_V2_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "pads:int32", "pad_value:quint8"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "pad quint8 data with a quint8 pad code (required); range passes through",
    },
    "QuantizedPad_u16": {
        "inputs": ["data:quint16", "in_min:float", "in_max:float", "pads:int32", "?pad_value:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "doc": "pad quint16 data with a value (default 0.0); range passes through",
    },
    "QuantizedPad_16": {
        "inputs": ["data:qint16", "in_min:float", "in_max:float", "pads:int32", "?pad_value:float"],
        "outputs": ["data:qint16", "min:float", "max:float"],
        "doc": "pad qint16 data with a value (default 0.0); range passes through",
    },
    "MirrorPad_f": {
        "inputs": ["data:float", "pads:int32"], "outputs": ["data:float"],
        "doc": "mirror-pad a float tensor (NN_PAD_MIRROR_REFLECT or _SYMMETRIC)",
    },
    "MirrorPad_8": {
        "inputs": ["data:quint8", "pads:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "mirror-pad quint8 data; range passes through",
        "notes": "unlike QuantizedPad_8, the padding is input 1 and min/max come after it",
    },

    # ------------------------------------------------------------------
    # Gather, table lookup, slicing
    # ------------------------------------------------------------------
    "Gather_f": {
        "inputs": ["index:int32", "table:float", "?index_dim:int32", "?index_rank:int32"], "outputs": ["data:float"],
        "source": "both", "doc": "generalized table lookup in a float table",
        "notes": "out-of-range index behaviour set by padding (NA fastest, SAME error, VALID clip); the "
                 "'Examples:' line in this section is not an op",
    },
    "Gather_int32": {
        "inputs": ["index:int32", "table:int32", "?index_dim:int32", "?index_rank:int32"], "outputs": ["data:int32"],
        "source": "both", "doc": "generalized table lookup in an int32 table",
    },
    "Gather_8": {
        "inputs": ["index:int32", "table:quint8", "table_min:float", "table_max:float", "?index_dim:int32",
                   "?index_rank:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "both", "doc": "generalized table lookup in a quint8 table; range copied from the table",
    },
    "Table_f": {
        "inputs": ["index:int32", "table:float", "?structure:int32", "?partition:int32"], "outputs": ["data:float"],
        "doc": "partitioned table lookup in a float table (as Gather with 2 inputs)",
        "notes": "partition strategy 0 = mod, 1 = div",
    },
    "Table_int32": {
        "inputs": ["index:int32", "table:int32", "?structure:int32", "?partition:int32"], "outputs": ["data:int32"],
        "doc": "partitioned table lookup in an int32 table",
    },
    "Table_8": {
        "inputs": ["index:int32", "table:quint8", "table_min:float", "table_max:float", "?structure:int32",
                   "?partition:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "partitioned table lookup in a quint8 table; range copied from the table",
    },
    "Slice_f": {
        "inputs": ["data:float", "start:int32", "size:int32"], "outputs": ["data:float"],
        "doc": "slice a float tensor by start and size (-1 = to the end)",
    },
    "Slice_int32": {
        "inputs": ["data:int32", "start:int32", "size:int32"], "outputs": ["data:int32"],
        "doc": "slice an int32 tensor by start and size",
    },
    "Slice_8": {
        "inputs": ["data:quint8|uint8", "start:int32", "size:int32"], "outputs": ["data:quint8|uint8"],
        "doc": "slice an 8-bit tensor by start and size (no range inputs)",
        "notes": "data type not stated; any 8-bit data",
    },
    "QuantizedSlice_8": {
        "inputs": ["data:quint8", "start:int32", "size:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "slice quint8 data by start and size; range passes through",
    },
    "StridedSlice_f": {
        "inputs": ["data:float", "begin:int32", "end:int32", "step:int32", "?begin_mask:int32", "?end_mask:int32",
                   "?shrink_mask:int32"],
        "outputs": ["data:float"],
        "doc": "strided slice of a float tensor with begin/end/shrink masks",
        "notes": "'4 or 7 inputs': the 3 masks are all present or all absent (default 0); mask bits 0..3 = B,H,W,D",
    },
    "StridedSlice_int32": {
        "inputs": ["data:int32", "begin:int32", "end:int32", "step:int32", "?begin_mask:int32", "?end_mask:int32",
                   "?shrink_mask:int32"],
        "outputs": ["data:int32"],
        "doc": "strided slice of an int32 tensor",
        "notes": "'4 or 7 inputs': the masks come together",
    },
    "StridedSlice_uint8": {
        "inputs": ["data:uint8|quint8", "begin:int32", "end:int32", "step:int32", "?begin_mask:int32",
                   "?end_mask:int32", "?shrink_mask:int32"],
        "outputs": ["data:uint8|quint8"],
        "doc": "strided slice of a uint8 tensor",
        "notes": "'4 or 7 inputs': the masks come together",
    },
    "QuantizedStridedSlice_8": {
        "inputs": ["data:quint8", "begin:int32", "end:int32", "step:int32", "begin_mask:int32", "end_mask:int32",
                   "shrink_mask:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "strided slice of quint8 data; range passes through",
        "notes": "9 inputs, all required (min/max follow the masks), although the copied text says the masks may "
                 "be absent",
    },

    # ------------------------------------------------------------------
    # Space / batch / depth rearrangement
    # ------------------------------------------------------------------
    "SpaceToBatchND_f": {
        "inputs": ["data:float", "block:int32", "pads:int32"], "outputs": ["data:float"],
        "doc": "zero-pad h,w and move blocks of space into the batch dimension",
        "notes": "input 2 is the padding [top,bottom] or [[top,bottom],[left,right]] although the text calls "
                 "the entries 'crop'",
    },
    "BatchToSpaceND_f": {
        "inputs": ["data:float", "block:int32", "crops:int32"], "outputs": ["data:float"],
        "doc": "move batch blocks back into h,w, then crop",
    },
    "SpaceToBatchND_8": {
        "inputs": ["data:quint8", "block:int32", "pads:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "SpaceToBatchND on quint8 (pad with the zero code); range passes through",
    },
    "BatchToSpaceND_8": {
        "inputs": ["data:quint8", "block:int32", "crops:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "BatchToSpaceND on quint8; range passes through",
        "notes": "input 2 is labelled 'Padding' but holds the crops",
    },
    "SpaceToDepth_f": {
        "inputs": ["data:float", "block:int32"], "outputs": ["data:float"],
        "doc": "move blocksizeH x blocksizeW spatial blocks into depth",
        "notes": "data type not stated: float by suffix",
    },
    "DepthToSpace_f": {
        "inputs": ["data:float", "block:int32", "?crops:int32"], "outputs": ["data:float"],
        "doc": "move depth into blocksizeH x blocksizeW spatial blocks, optionally crop",
    },
    "SpaceToDepth_8": {
        "inputs": ["data:quint8", "block:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "SpaceToDepth on quint8; range passes through",
    },
    "SpaceToDepth_16": {
        "inputs": ["data:quint8|quint16|qint16", "block:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8|quint16|qint16", "min:float", "max:float"],
        "doc": "SpaceToDepth on 8/16-bit quantized data; range passes through",
        "notes": "heading says '2 inputs' but 4 are listed (min and max are inputs 2,3): 4 used",
    },
    "DepthToSpace_8": {
        "inputs": ["data:quint8", "block:int32", "in_min:float", "in_max:float", "?crops:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "DepthToSpace on quint8, optional crop; range passes through",
        "notes": "its 'Equiv to' steps describe SpaceToDepth (copy error); input 4 is called an 'int32 scalar' "
                 "but is the [top,bottom,left,right] crop array",
    },
    "DepthToSpace_16": {
        "inputs": ["data:quint8|quint16|qint16", "block:int32", "in_min:float", "in_max:float", "?crops:int32"],
        "outputs": ["data:quint8|quint16|qint16", "min:float", "max:float"],
        "doc": "DepthToSpace on 8/16-bit quantized data; range passes through",
    },
    "FillPadding_8_d32": {
        "inputs": ["data:quint8_d32", "?spatial_fill:int32", "?depth_fill:int32"], "outputs": ["data:quint8_d32"],
        "source": "both", "doc": "fill the padding bytes of a d32 tensor (test aid)",
        "notes": "fill byte 0..255 or -1 for random; spatial default 0xFF, depth default = spatial",
    },

    # ------------------------------------------------------------------
    # Variables
    # ------------------------------------------------------------------
    "Variable": {
        "inputs": ["init:any"], "n_inputs": (0, None), "outputs": ["data:any"], "n_outputs": (1, None),
        "source": "both", "doc": "a variable: outputs reference its current values",
        "notes": "N outputs; N optional inputs (when present, input i initializes output i at prepare time)",
    },
    "Assign": {
        "inputs": ["variable:any", "value:any"], "n_inputs": (2, None), "outputs": ["data:any"], "n_outputs": (0, None),
        "source": "both", "doc": "write values into variables",
        "notes": "2N inputs in pairs: input 2i is a Variable output (written by this op), input 2i+1 the value; "
                 "0..N outputs, output i a copy of input 2i+1 (muted when its elementsize is 0); the early edition "
                 "numbers the pair '2N, 2N+1'",
    },

    # ------------------------------------------------------------------
    # Image colour conversion and transforms
    # ------------------------------------------------------------------
    "RgbaToRgb_8": {
        "inputs": ["data:quint8", "mode:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "RGBA to RGB (mode 1 reverses the first 3 channels); range passes through",
    },
    "Argb32ToRgb_8": {
        "inputs": ["data:quint8", "mode:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "ARGB [b,h,w,4] to RGB [b,h,w,3] (mode 1 reverses the colour order); range passes through",
        "notes": "the text says mode 1 reverses 'the last 4 channels' (there are 3 colour channels)",
    },
    "Nv21ToRgb_8": {
        "inputs": ["data:uint8", "mode:int32"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "NV21 image to RGB (mode 0) or BGR (mode 1); output range [0, 255]",
    },
    "ImageTransform_f": {
        "inputs": ["image:float", "transform:float"], "outputs": ["data:float"],
        "doc": "apply projective transforms to float images (bilinear, zeros outside)",
    },
    "QuantizedSum_8to32": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "axes:int32"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "sum quint8 data over the given axes, qint32 result",
        "notes": "heading carries text ('(Reducing Sum)'); axes given as uint32_t, read as int32",
    },
    "QuantizedMean_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "axes:int32", "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "mean of quint8 data over the given axes",
        "notes": "heading carries text ('(Reducing Mean)'); axes given as uint32_t, read as int32",
    },
    "TopK_f": {
        "inputs": ["data:float", "k:int32"], "outputs": ["values:float", "indices:int32"],
        "doc": "the k largest values along depth (descending) and their indices",
        "notes": "the text also lists inputs 2,3 and outputs 2,3 'for _8 only': those belong to TopK_8",
    },
    "TopK_8": {
        "inputs": ["data:quint8", "k:int32", "in_min:float", "in_max:float"],
        "outputs": ["values:quint8", "indices:int32", "min:float", "max:float"],
        "doc": "the k largest quint8 values along depth and their indices; range passes through",
        "notes": "min/max are outputs 2,3 after the indices; the TopK_8 text types the indices 'quint8' while "
                 "the TopK_f text says int32 for both: int32 used (an index need not fit in 8 bits)",
    },

    # ------------------------------------------------------------------
    # Casts
    # ------------------------------------------------------------------
    "CastFloat32ToInt32": {"inputs": ["data:float"], "outputs": ["data:int32"], "doc": "cast float to int32"},
    "CastFloat32ToUInt8": {"inputs": ["data:float"], "outputs": ["data:uint8"], "doc": "cast float to uint8"},
    "CastInt32ToFloat32": {"inputs": ["data:int32"], "outputs": ["data:float"], "doc": "cast int32 to float"},
    "CastInt32ToUInt8": {"inputs": ["data:int32"], "outputs": ["data:uint8"], "doc": "cast int32 to uint8"},
    "CastUInt8ToFloat32": {"inputs": ["data:uint8"], "outputs": ["data:float"], "doc": "cast uint8 to float"},
    "CastUInt8ToInt32": {"inputs": ["data:uint8"], "outputs": ["data:int32"], "doc": "cast uint8 to int32"},

    # ------------------------------------------------------------------
    # Axis shuffle, argmax/argmin, nearest resize, tile, moments, select
    # ------------------------------------------------------------------
    "AxisShuffle_8": {
        "inputs": ["data:quint8", "axis:int32", "groups:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "group-transpose along an axis ([.., a*b, ..] -> [.., b*a, ..]); range passes through",
    },
    "AxisShuffle_16": {
        "inputs": ["data:quint16|qint16", "axis:int32", "groups:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint16|qint16", "min:float", "max:float"],
        "doc": "AxisShuffle on 16-bit quantized data",
        "notes": "data typed uint16_t; u16 asymmetric or i16 symmetric, type propagated to the output",
    },
    "AxisShuffle_f": {
        "inputs": ["data:float", "axis:int32", "groups:int32"], "outputs": ["data:float"],
        "doc": "AxisShuffle on float data",
    },
    "AxisShuffle_int32": {
        "inputs": ["data:int32", "axis:int32", "groups:int32"], "outputs": ["data:int32"],
        "doc": "AxisShuffle on int32 data",
    },
    "ArgMax_8toInt32": {
        "inputs": ["data:quint8", "axis:int32", "in_min:float", "in_max:float"], "outputs": ["data:int32"],
        "doc": "indices of the maxima of quint8 data along an axis",
    },
    "ArgMax_ftoInt32": {
        "inputs": ["data:float", "axis:int32"], "outputs": ["data:int32"],
        "doc": "indices of the maxima of float data along an axis",
    },
    "ResizeNearestNeighbor_8": {
        "inputs": ["data:quint8", "size:int32", "in_min:float", "in_max:float", "?align_corners:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "nearest-neighbour resize of quint8 data to {h_out, w_out}",
    },
    "QuantizedTile_8": {
        "inputs": ["data:quint8", "multiples:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "replicate quint8 data along each dimension; range passes through",
    },
    "Moments_8to32": {
        "inputs": ["data:quint8", "axes:int32", "in_min:float", "in_max:float"],
        "outputs": ["mean:quint8", "variance:qint32", "mean_min:float", "mean_max:float", "var_min:float",
                    "var_max:float"],
        "doc": "mean (quint8) and variance (qint32) of quint8 data along the axes",
        "notes": "outputs: mean, variance, then mean min/max, then variance min/max",
    },
    "ArgMin_8": {
        "inputs": ["data:quint8", "axis:int32", "in_min:float", "in_max:float"], "outputs": ["data:int32"],
        "doc": "indices of the minima of quint8 data along an axis",
    },
    "Select_f": {
        "inputs": ["cond:float", "x:float", "y:float"], "outputs": ["data:float"],
        "doc": "x where the condition is true, else y (same shapes)",
        "notes": "element types not stated: float assumed for all (condition true when non-zero)",
    },
    "Select_8": {
        "inputs": ["cond:quint8", "x:quint8", "x_min:float", "x_max:float", "y:quint8", "y_min:float", "y_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "quint8 x where the condition is true, else y",
        "notes": "each of x and y is followed by its own min/max",
    },
    "QuantizedPRelu_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "alpha:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "PReLU on quint8 with float alphas",
    },
    "QuantizedPRelu_8_V2": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "alpha:quint8", "alpha_min:float",
                   "alpha_max:float", "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "PReLU on quint8 with quantized alphas",
    },
    "QuantizedRoiAlignV2_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "rois:quint16", "batch_index:int32",
                   "pooled_h:int32", "pooled_w:int32", "scale_h:float", "scale_w:float", "sampling_h:int32",
                   "sampling_w:int32", "out_min:float", "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "RoI align (bilinear average pool) on a quint8 feature map",
        "notes": "rois [1,1,num_rois,4] quint16 with no min/max input; inputs 11,12 are the expected output range",
    },

    # ------------------------------------------------------------------
    # Quantized comparisons, rounding
    # ------------------------------------------------------------------
    "QuantizedEqual_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a == b on quint8, 0/1 result (broadcast)",
    },
    "QuantizedNotEqual_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a != b on quint8, 0/1 result (broadcast)",
    },
    "QuantizedLess_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a < b on quint8, 0/1 result (broadcast)",
    },
    "QuantizedLessEqual_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a <= b on quint8, 0/1 result (broadcast)",
    },
    "QuantizedGreater_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a > b on quint8, 0/1 result (broadcast)",
    },
    "QuantizedGreaterEqual_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:uint8"], "doc": "elementwise a >= b on quint8, 0/1 result (broadcast)",
    },
    "Ceil_f": {"inputs": ["data:float"], "outputs": ["data:float"], "doc": "elementwise ceil on float"},
    "Floor_f": {"inputs": ["data:float"], "outputs": ["data:float"], "doc": "elementwise floor on float"},
    "Round_f": {"inputs": ["data:float"], "outputs": ["data:float"], "doc": "elementwise round half to even on float"},

    # ------------------------------------------------------------------
    # Detection: RoI pooling, boxes, proposals, NMS
    # ------------------------------------------------------------------
    "QuantizedRoiPool_8_v2": {
        "inputs": ["data:quint8", "rois:quint16", "batch_split:int32", "out_h:float", "out_w:float",
                   "scale_h:float", "scale_w:float", "layout:int32", "in_min:float", "in_max:float",
                   "roi_scale_offset:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "max-pool quint8 feature maps over RoIs",
        "notes": "output height/width are typed float in the text (kept); layout is unused",
    },
    "AxisAlignedBBoxTransform_f": {
        "inputs": ["boxes:float", "deltas:float", "batch_splits:int32", "image_info:float"], "outputs": ["boxes:float"],
        "doc": "adjust float box coordinates by deltas, clipped to the image",
        "notes": "batch splits typed 'int': int32 assumed",
    },
    "AxisAlignedBBoxTransform_q8q16": {
        "inputs": ["boxes:quint16", "deltas:quint8", "batch_splits:int32", "image_info:quint16", "deltas_min:float",
                   "deltas_max:float", "info_min:float", "info_max:float"],
        "outputs": ["boxes:quint16"],
        "doc": "adjust quint16 boxes by quint8 deltas, clipped to the image",
        "notes": "the boxes have no min/max input and the output none; image info has",
    },
    "QuantizedHashtableLookup_8": {
        "inputs": ["lookups:int32", "keys:int32", "values:quint8", "values_min:float", "values_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float", "hits:quint8", "hits_min:float", "hits_max:float"],
        "doc": "gather value slices whose key matches each lookup, with a hit mask",
    },
    "Proposal_q8q16": {
        "inputs": ["scores:quint8", "scores_min:float", "scores_max:float", "deltas:quint8", "deltas_min:float",
                   "deltas_max:float", "anchors:quint16", "anchors_min:float", "anchors_max:float",
                   "image_size:quint16", "image_size_min:float", "image_size_max:float", "stride_h:float",
                   "stride_w:float", "max_proposals:int32", "max_rois:int32", "threshold:float",
                   "min_box_size:float"],
        "outputs": ["scores:quint8", "scores_min:float", "scores_max:float", "rois:quint16", "rois_min:float",
                    "rois_max:float", "num_boxes:int32"],
        "doc": "generate region proposals from anchors and deltas, with NMS",
    },
    "BoxWithNmsLimit_f": {
        "inputs": ["scores:float", "boxes:float", "batch_splits:float", "score_threshold:float",
                   "nms_threshold:float", "max_detections:int32", "soft_nms:int32", "soft_nms_method:int32",
                   "soft_nms_sigma:float", "soft_nms_min_score:float", "rotated:int32"],
        "outputs": ["scores:float", "boxes:float", "classes:float", "batch_splits:float", "keeps:int32",
                    "keeps_size:int32"],
        "n_outputs": (4, 6),
        "doc": "per-class (soft) non-max suppression of float boxes",
        "notes": "outputs 4,5 (keeps, keeps size) are optional: 4..6 outputs; batch splits and classes are float",
    },
    "BoxWithNmsLimit_q8q16": {
        "inputs": ["scores:quint8", "boxes:quint16", "batch_splits:int32", "score_threshold:float",
                   "max_detections:int32", "soft_nms:int32", "nms_threshold:float", "sigma:float",
                   "soft_nms_score_threshold:float", "scores_min:float", "scores_max:float", "boxes_min:float",
                   "boxes_max:float"],
        "outputs": ["scores:quint8", "boxes:quint16", "classes:int32", "batch_splits:int32", "scores_min:float",
                    "scores_max:float", "boxes_min:float", "boxes_max:float"],
        "doc": "per-class (soft) non-max suppression of quantized boxes",
        "notes": "inputs 3 and 8 are both called 'Score threshold'; input 8 taken as the soft-NMS minimum score; "
                 "input order differs from BoxWithNmsLimit_f; min/max come after all data inputs and outputs",
    },
    "L2Normalize_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "?axis:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "x / sqrt(sum(x*x)) along an axis (default depth); output range [-1, 1]",
        "notes": "data typed uint8_t (it has a range: quint8)",
    },
    "LSHProjection": {
        "inputs": ["hash:float", "data:any", "weights:float", "type:int32"], "outputs": ["data:int32"],
        "doc": "locality-sensitive hashing projection of the input items",
        "notes": "input 1 is any data (bytes, halves, words) read as a char array; type 1/3 sparse, 2 dense",
    },
    "ArgMax_8": {
        "inputs": ["data:quint8", "axis:int32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "indices (8-bit) of the maxima along an axis; dim[axis] < 256",
        "notes": "data typed uint8_t; the index output carries a min/max so it is typed quint8",
    },
    "QuantizedExtractGlimpse_8": {
        "inputs": ["data:quint8", "offsets:float", "in_min:float", "in_max:float", "width:int32", "height:int32",
                   "centered:int32", "normalized:int32", "uniform_noise:int32"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "extract glimpse windows at offsets (noise outside the input)",
    },
    "Convert_int32_f": {"inputs": ["data:int32"], "outputs": ["data:float"], "doc": "convert int32 to float"},
    "QuantizedChannelScale_32xf": {
        "inputs": ["data:qint32", "scale:float", "in_min:float", "in_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "scale each channel of qint32 data by a float [1,1,1,d]",
    },
    "QuantizedInstanceNorm_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "instance normalization (per-channel mean/variance) of quint8 data",
    },
    "Sub_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a-b (broadcast)"},
    "Add_int32": {"inputs": ["a:int32", "b:int32"], "outputs": ["data:int32"], "doc": "elementwise a+b (broadcast)"},
    "Dequantize_qint32_f": {
        "inputs": ["data:qint32", "in_min:float", "in_max:float"], "outputs": ["data:float"],
        "doc": "dequantize qint32 to float (zero offset)",
        "notes": "the text says 'quint32' meaning qint32",
    },
    "ExpandDims_int32": {
        "inputs": ["data:int32"], "outputs": ["data:int32"],
        "doc": "reshape int32 data to the node's output shape",
        "notes": "no shape input: the shape comes from the node's output definition",
    },
    "ExpandDims_f": {
        "inputs": ["data:float"], "outputs": ["data:float"],
        "doc": "reshape float data to the node's output shape",
        "notes": "no shape input: the shape comes from the node's output definition",
    },
    "QuantizedAdd_8p8to32": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "elementwise sum of two quint8 tensors, qint32 result (broadcast)",
    },
    "QuantizedSub_8p8to32": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "elementwise difference of two quint8 tensors, qint32 result (broadcast)",
    },
    "QuantizedSoftmax_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "?beta:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "softmax of quint8 data (beta default 1.0); output range [0, 1]",
    },
    "QuantizedLRN_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "window:shape", "bias:float", "alpha:float",
                   "beta:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "local response normalization on quint8 data",
    },
    "QuantizedDepthwiseConv2d_8x8to32": {
        "inputs": ["data:quint8", "filter:quint8", "in_min:float", "in_max:float", "filter_min:float",
                   "filter_max:float", "stride:shape"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "doc": "quantized depthwise 2-D convolution to qint32",
        "notes": "filter [fh,fw,din,dmul]; output depth din*dmul",
    },
    "QuantizedClamp_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "clamp_min:float", "clamp_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "clamp quint8 data to [clamp_min, clamp_max]",
    },
    "QuantizedInstanceNormBG_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float", "epsilon:float", "gamma:quint8", "gamma_min:float",
                   "gamma_max:float", "beta:quint8", "beta_min:float", "beta_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "instance normalization of quint8 data with gamma and beta",
    },
    "MultiClassNms_8": {
        "inputs": ["boxes:float", "scores:quint8", "scores_min:float", "scores_max:float", "score_threshold:float",
                   "iou_threshold:float", "max_per_class:int32", "max_total:int32"],
        "outputs": ["boxes:float", "scores:quint8", "scores_min:float", "scores_max:float", "classes:float"],
        "doc": "multi-class non-max suppression (MobileNet SSD)",
    },
    "QuantizedMin_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise min(a, b) of quint8 tensors (broadcast)",
    },
    "QuantizedMax_8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise max(a, b) of quint8 tensors (broadcast)",
    },
    "QuantizedSqrt_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise square root of quint8 data (input min must be >= 0)",
    },
    "Box_Decoder_f": {
        "inputs": ["deltas:float", "anchors:float", "scales:float"], "outputs": ["boxes:float"],
        "doc": "decode box dimensions from anchors, deltas and scale factors",
    },
    "QuantizedRecip_8": {
        "inputs": ["data:quint8", "in_min:float", "in_max:float"], "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "elementwise reciprocal of quint8 data",
        "notes": "inputs 1 and 2 are both numbered '1:' (input max is 2)",
    },
    "SsdDetectionOutput": {
        "inputs": ["loc:quint8", "loc_min:float", "loc_max:float", "conf:quint8", "conf_min:float", "conf_max:float",
                   "num_classes:int32", "share_location:int32", "background_label:int32", "nms_threshold:float",
                   "nms_top_k:int32", "nms_eta:float", "code_type:int32", "prior:float", "keep_top_k:int32",
                   "variance_encoded:int32", "conf_threshold:float"],
        "outputs": ["batch_index:int32", "classes:int32", "conf:quint8", "conf_min:float", "conf_max:float",
                    "xmin:float", "ymin:float", "xmax:float", "ymax:float"],
        "doc": "SSD detection output: decode, NMS and keep the top k boxes",
        "notes": "input 13 'prior data' is called a float scalar but is the prior box data; code type 0 corner, "
                 "1 center-size, 2 corner-size; unused result slots are zero",
    },
    "QuantizedChannelShuffle_8": {
        "inputs": ["groups:int32", "data:quint8", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "doc": "channel shuffle of quint8 data in num_groups groups",
        "notes": "the number of groups is input 0, before the data",
    },

    # ------------------------------------------------------------------
    # Names only in hexagon_nn_ops_early.txt (older spellings)
    # ------------------------------------------------------------------
    "QuantizedAdd_8x8to8": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint8", "min:float", "max:float"],
        "source": "early", "doc": "elementwise sum of two quint8 tensors (flat)",
        "notes": "early name of QuantizedAdd_8p8to8, here with all 8 inputs required; inputs typed 'qint8': "
                 "quint8 meant",
    },
    "QuantizedAdd_8x8to8_d32": {
        "inputs": ["a:quint8_d32", "b:quint8_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "early", "doc": "elementwise sum of two d32 quint8 tensors",
        "notes": "early name of QuantizedAdd_8p8to8_d32; heading has no colon; '8 inputs' with 6,7 optional: 6..8",
    },
    "QuantizedSub_8x8to8_d32": {
        "inputs": ["a:quint8_d32", "b:quint8_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "early", "doc": "elementwise difference of two d32 quint8 tensors",
        "notes": "early name of QuantizedSub_8p8to8_d32; heading has no colon; '8 inputs' with 6,7 optional: 6..8",
    },
    "QuantizeForTestd32": {
        "inputs": ["data:float", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float", "ref:float"], "n_outputs": (3, 4),
        "source": "early", "doc": "AutoQuantize_d32 without HVX, plus an optional float copy",
        "notes": "early spelling of QuantizeForTest_d32; output 3 optional",
    },

    # ------------------------------------------------------------------
    # Ops only hexagon_nn 2.14.1's op table names (source "nnlib"): prepare.c creates them
    # (convert_to_depth32), so a prepared graph holds them. Counts are the C's NN_IOCOUNT.
    # ------------------------------------------------------------------
    "QuantizedPadForConv_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "weights:shape", "stride:shape"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib",
        "doc": "zero-pad d32 quint8 data in h, w so a VALID convolution with this filter/stride acts padded",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_pad_d32.c nn_ops_for_QuantizedPadForConv_8_d32, NN_IOCOUNT(5) in, 3 out); "
                 "prepare.c (prepare_utils.c handle_oversize_d32_supernode) puts it before a d32 supernode "
                 "with an oversize filter and makes that VALID. Padding from the node's NN_PAD_* "
                 "(nn_pad_compute_outsize_and_pad), fill = quantized 0.0; min/max copied from the input",
    },
    "QuantizedSoftmax_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "?beta:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "softmax of d32 quint8 data along depth (beta default 1.0); output range [0, 1]",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_softmax_d32.c "
                 "nn_ops_for_QuantizedSoftmax_8_d32, NN_IOCOUNT_RANGE(3,4) in, 3 out); prepare.c "
                 "depth32_replacement_op converts QuantizedSoftmax_8 when its input is already d32 or the "
                 "output is h >= 4, w >= 8 (or 4), d > 2",
    },
    "Requantize_8to8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "out_min:float", "out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "requantize d32 quint8 to a new quint8 range",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_requantize.c "
                 "nn_ops_for_Requantize_8to8_d32, NN_IOCOUNT(5) in, 3 out); prepare.c depth32_replacement_op "
                 "converts Requantize_8to8 whose input is a Convert_from_d32",
    },
    "QuantizedPRelu_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "alpha:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "PReLU on d32 quint8 with float alphas",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_prelu_d32.c "
                 "nn_ops_for_QuantizedPRelu_8_d32, NN_IOCOUNT(4) in, 3 out); prepare.c depth32_replacement_op "
                 "converts every QuantizedPRelu_8",
    },
    "QuantizedPRelu_8_V2_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "alpha:quint8", "alpha_min:float",
                   "alpha_max:float", "?out_min:float", "?out_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "PReLU on d32 quint8 with quantized alphas",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_prelu_v2_d32.c "
                 "nn_ops_for_QuantizedPRelu_8_V2_d32, NN_IOCOUNT_RANGE(6,8) in, 3 out; the flat "
                 "QuantizedPRelu_8_V2 there has no execute function); prepare.c depth32_replacement_op "
                 "converts every QuantizedPRelu_8_V2",
    },
    "DepthToSpace_8_d32": {
        "inputs": ["data:quint8_d32", "block:int32", "in_min:float", "in_max:float", "?crops:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "DepthToSpace on d32 quint8, optional crops and output depth; range passes through",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_depthspace_d32.c "
                 "nn_ops_for_DepthToSpace_8_d32, NN_IOCOUNT_RANGE(4,5) in, 3 out); crops [top,bottom,left,right] "
                 "with an optional 5th entry, the output depth kept (0: all; at most 31 fewer); block width 1-4 "
                 "or 8, output depth a multiple of 32 or 16 with block width 2; prepare.c depth32_replacement_op "
                 "converts DepthToSpace_8 (check_spaceop_ok_for_d32), which create_transpose_conv_nodes makes",
    },
    "QuantizedNeg_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "-x on d32 quint8 (each code 255 - x); output range (-in_max, -in_min)",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_add_d32.c "
                 "nn_ops_for_QuantizedNeg_8_d32, neg_d32_execute, NN_IOCOUNT(3) in, 3 out); prepare.c "
                 "depth32_replacement_op converts QuantizedNeg_8 whose input is a Convert_from_d32",
    },
    "QuantizedSplit_8_d32": {
        "inputs": ["dim:int32|quint8_d32", "data:quint8_d32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"], "n_outputs": (3, None),
        "source": "nnlib", "doc": "split d32 quint8 data into n equal parts along depth",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_chanshuffle_d32.c "
                 "nn_ops_for_QuantizedSplit_8_d32, split_d32_execute, NN_IOCOUNT(4) in, NN_IOCOUNT_GE(4) out: "
                 "at least 2 parts where a node is made); n+2 outputs: the parts, then min = fminf(0, in_min) "
                 "and max = in_max; dim must be 3 (or -1), or input 0 wired where input 1 is; prepare.c "
                 "do_convert_concat_depth32 converts a QuantizedSplit_8 on depth",
    },
    "QuantizedInstanceNorm_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "instance normalization (per-channel mean/variance) of d32 quint8 data",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_instancenorm_hvx.c "
                 "nn_ops_for_QuantizedInstanceNorm_8_d32, NN_IOCOUNT(3) in, 3 out); its own qf16 arithmetic, not "
                 "the flat op's (the output scale 255 / (max - min) truncated to an integer, the padding's 0x80 "
                 "in max / min); prepare.c depth32_replacement_op converts every QuantizedInstanceNorm_8",
    },
    "QuantizedPad_8_d32": {
        "inputs": ["data:quint8_d32", "in_min:float", "in_max:float", "pads:int32", "?pad_value:float",
                   "?in_range_flag:int32"],
        "outputs": ["data:quint8_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "pad d32 quint8 data in batches, height and width with a value; range passes through",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (ops/src/op_pad_d32.c "
                 "nn_ops_for_QuantizedPad_8_d32, pad_d32_check / pad_d32_execute, NN_IOCOUNT_RANGE(4,6) in, 3 out); "
                 "no depth padding; the fill code saturate_u8(roundf_i32((value - min) * 255 / (max - min))), never "
                 "refused (QuantizedPad_8 refuses codes outside -2..257), +-inf 255 / 0; prepare.c "
                 "depth32_replacement_op converts a QuantizedPad_8 whose input is a Convert_from_d32 and whose "
                 "Const paddings leave depth alone",
    },
    "Convert_to_d32_16b": {
        "inputs": ["data:quint16|qint16", "?depth_before:int32", "?width_left:int32", "?min_width_right:int32",
                   "?top_bottom:int32"],
        "outputs": ["data:quint16_d32"],
        "source": "nnlib", "doc": "convert a flat 16-bit tensor to the 16-bit d32 layout, with optional padding",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_convert_d32.c nn_ops_for_Convert_to_d32_16b, NN_IOCOUNT_RANGE(1,5) in, 1 out); the "
                 "8-bit layout with 2-byte elements (32 lanes of 64 bytes per pixel); input 1 is ignored (depth "
                 "before always 0), the depth padding is written as 0; prepare.c need_convert_to_d32 makes it for "
                 "a 16-bit input of a converted op",
    },
    "Convert_from_d32_16b": {
        "inputs": ["data:quint16_d32"], "outputs": ["data:quint16|qint16"],
        "source": "nnlib", "doc": "convert a 16-bit d32 tensor to the flat layout",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_convert_d32.c nn_ops_for_Convert_from_d32_16b, NN_IOCOUNT(1) in, 1 out); prepare.c "
                 "create_convert_from_d32 puts it after a converted 16-bit op",
    },
    "QuantizedAdd_u16_d32": {
        "inputs": ["a:quint16_d32", "b:quint16_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "elementwise sum of 16-bit d32 quint16 tensors (asymmetric ranges)",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_addsubmul16_d32.c nn_ops_for_QuantizedAdd_u16_d32, NN_IOCOUNT(8) in, 3 out); prepare.c "
                 "depth32_replacement_op converts every QuantizedAdd_u16 (both inputs)",
    },
    "QuantizedSub_u16_d32": {
        "inputs": ["a:quint16_d32", "b:quint16_d32", "a_min:float", "a_max:float", "b_min:float", "b_max:float",
                   "out_min:float", "out_max:float"],
        "outputs": ["data:quint16_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "elementwise difference of 16-bit d32 quint16 tensors (asymmetric ranges)",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_addsubmul16_d32.c nn_ops_for_QuantizedSub_u16_d32, NN_IOCOUNT(8) in, 3 out); prepare.c "
                 "depth32_replacement_op converts every QuantizedSub_u16 (both inputs)",
    },
    "QuantizedPad_u16_d32": {
        "inputs": ["data:quint16_d32", "in_min:float", "in_max:float", "pads:int32", "?pad_value:float",
                   "?in_range_flag:int32"],
        "outputs": ["data:quint16_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "pad 16-bit d32 quint16 data in batches, height and width with a value; range passes "
                                  "through",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, ops/src/op_pad_d32.c "
                 "nn_ops_for_QuantizedPad_u16_d32, NN_IOCOUNT_RANGE(4,6) in, 3 out); no depth padding; the fill code "
                 "saturate_u16(roundf_i32((value - min) * 65536 / (max - min))), +-inf 65535 / 0; prepare.c "
                 "depth32_replacement_op converts a QuantizedPad_u16 whose input is a Convert_from_d32_16b and whose "
                 "Const paddings leave depth alone",
    },
    "Supernode_16x16p32to16": {
        "inputs": ["data:quint16", "weights:quint16", "in_min:float", "in_max:float", "w_min:float", "w_max:float",
                   "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float", "?channel_scale:float"],
        "outputs": ["data:quint16", "min:float", "max:float"],
        "source": "nnlib", "doc": "convolve quint16 data with quint16 weights, add qint32 bias, requantize to quint16",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, ops/src/op_supernode.c "
                 "nn_ops_for_Supernode_16x16p32to16, no NN_IOCOUNT: 12 in as prepare.c's ReplaceConv16_SuperNode "
                 "builds it, 13 with channel scales; 3 out); prepare.c make_supernodes fuses QuantizedConv2d_16x16to32 "
                 "-> [QuantizedChannelScale_32xf] -> QuantizedBiasAdd_32p32to32 -> Requantize_32tou16 (the chain "
                 "create_transpose_conv_nodes makes of a QuantizedTransposeConv2d_16x16p32to16); out min/max "
                 "-inf/+inf mean auto",
    },
    "QuantizedMatMul_8x8to32_ref": {
        "inputs": ["a:quint8", "b:quint8", "a_min:float", "a_max:float", "b_min:float", "b_max:float"],
        "outputs": ["data:qint32", "min:float", "max:float"],
        "source": "nnlib", "doc": "quantized matrix multiplication to qint32, B read at every execute",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def DEF_OP_WREF, "
                 "ops/src/op_matmul.c nn_ops_for_QuantizedMatMul_8x8to32_ref, NN_IOCOUNT(6) in, 3 out): "
                 "QuantizedMatMul_8x8to32's arithmetic (matmul_ref), but execute (matmul_execute_ref) reads B "
                 "where QuantizedMatMul_8x8to32's assembly execute multiplies by the copy of B matmul_check_ref "
                 "packed at prepare; the importers emit it for a B computed at run time, which prepare.c "
                 "(matmult_extrachecks: B a Const) never fuses",
    },
    "Supernode_u16x16p32to16_d32": {
        "inputs": ["data:quint16_d32", "weights:quint16", "in_min:float", "in_max:float", "w_min:float",
                   "w_max:float", "stride:shape", "bias:qint32", "bias_min:float", "bias_max:float", "out_min:float",
                   "out_max:float"],
        "outputs": ["data:quint16_d32", "min:float", "max:float"],
        "source": "nnlib", "doc": "convolve 16-bit d32 quint16 data, add qint32 bias, requantize to 16-bit d32 quint16",
        "notes": "not in the op documents: from hexagon_nn 2.14.1's op table (interface/ops.def, "
                 "ops/src/op_supernode_16b.c nn_ops_for_Supernode_u16x16p32to16_d32, NN_IOCOUNT(12) in, 3 out); "
                 "prepare.c depth32_replacement_op converts every Supernode_16x16p32to16 (D32REPL_16)",
    },
}
