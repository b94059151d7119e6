# Harness rows of the `arith` area (exec'd inside the oracle's build.py before linking; its namespace:
# gen, func, lines, PRE, NODE, OPC, H, GEN). Only references to nnlib functions by file and name (build-time
# extraction), plus the project's own glue (tools/nnlib_ext/glue/arith_*.c) where nnlib has only HVX code.
import pathlib as _pl

_AG = _pl.Path(H) / "glue"
_aglue = lambda name: (_AG / name).read_text()

# ---- QuantizedAdd_8p8to32 / QuantizedSub_8p8to32 (op_addsubmul_8to32.c addsub_832_execute, _ref funcs;
#      the HVX function table is never selected: node_type = the _ref op) ----
_A832 = "ops/src/op_addsubmul_8to32.c"
gen("arith_addsub832", [(_A832, 67, 70)] + [(_A832, f) for f in ["addsub_832_stride_11", "addsub_832_vec_and_scalar",
                        "addsub_832_stride_10", "addsub_832_rev_stride_01"]] +
    [(_A832, 286, 293), (_A832, "addsub_832_execute")],
    pre='#include <nn_broadcast.h>\n/* glue: the HVX table is never selected (node_type = the _ref op) */\n'
        'static const struct elementwise_funcs AddSub_i832_hvx_funcs;\n',
    post=OPC("QuantizedAdd_8p8to32_ref", "QuantizedSub_8p8to32_ref"),
    exports=[("arith_addsub_832_ref", "addsub_832_execute")])

# ---- QuantizedMul_8x8to8 (op_mul.c mul_8x8to8_execute: the scalar-operand paths and the portable
#      16-bit-intermediate path through nn_elementwise_with_broadcast) ----
_MUL = "ops/src/op_mul.c"
gen("arith_mul8", [(_MUL, 200, 204)] + [(_MUL, f) for f in ["qmul_8x8to8_stride_11", "qmul_8x8to8_vec_by_scalar",
                   "qmul_8x8to8_stride_10", "qmul_8x8to8_rev_stride_01"]] + [(_MUL, 292, 301), (_MUL, "mul_8x8to8_execute")],
    pre='#include <nn_broadcast.h>\n' + _aglue("arith_shim.h"), exports=[("arith_mul_8x8to8", "mul_8x8to8_execute")])

# ---- int32 elementwise ops (op_add_f.c, op_sub_f.c, op_mul.c, op_bitwise.c: portable C through
#      nn_elementwise_with_broadcast; BitwiseNot's not_int32_execute reads tensor format fields the harness shim
#      lacks and is not compiled: it is ~x per element), Range_int32 (op_range.c) ----
gen("arith_int32", [("ops/src/op_add_f.c", 45, 45), ("ops/src/op_add_f.c", 67, 85), ("ops/src/op_sub_f.c", 45, 45), ("ops/src/op_sub_f.c", 67, 87),
                    ("ops/src/op_mul.c", 63, 83),
                    ("ops/src/op_bitwise.c", 44, 133), ("ops/src/op_range.c", "range_execute")],
    pre='#include <nn_broadcast.h>\n#include <stdbool.h>\n',
    exports=[("arith_add_int32", "add_int32_execute"), ("arith_sub_int32", "sub_int32_execute"),
             ("arith_mul_int32", "mul_int32_execute"), ("arith_and_int32", "and_int32_execute"),
             ("arith_ior_int32", "ior_int32_execute"), ("arith_xor_int32", "xor_int32_execute"),
             ("arith_range_int32", "range_execute")])

# ---- Neg_int32, Abs_int32, QuantizedNeg_8 (op_neg.c unary_op_execute, verbatim; its HVX run functions are
#      compiled against the scalar intrinsic models of glue/arith_hvx.h) ----
gen("arith_neg", [("ops/src/op_neg.c", 49, 185)], pre=_aglue("arith_shim.h") + _aglue("arith_hvx.h"),
    post=OPC("Neg_int32", "Abs_int32", "QuantizedNeg_8"), exports=[("arith_unary", "unary_op_execute")])

# ---- QuantizedSqrt_8 (op_sqrt.c sqrt_execute + sqrt_execute_hvx with the vlut32 model of glue/arith_hvx.h) ----
gen("arith_sqrt", [("ops/src/op_sqrt.c", 52, 153)], pre=_aglue("arith_shim.h") + _aglue("arith_hvx.h"),
    exports=[("arith_sqrt", "sqrt_execute")])

# ---- QuantizedInstanceNorm_8 (op_instancenorm.c execute_qinstancenorm_ref, the flat op's execute) ----
gen("arith_instancenorm", [("ops/src/op_instancenorm.c", 74, 78), ("ops/src/op_instancenorm.c", "execute_qinstancenorm_ref")],
    exports=[("arith_instancenorm", "execute_qinstancenorm_ref")])
