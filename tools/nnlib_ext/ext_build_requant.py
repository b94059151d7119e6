# Harness rows of the `requant` area (exec'd inside the oracle's build.py before linking; its namespace:
# gen, func, lines, PRE, NODE, OPC, H, GEN). Only references to nnlib functions by file and name, plus the
# project's own glue (tools/nnlib_ext/glue/requant_*.c: hand-written models of HVX-only code).
import pathlib as _pl

_RG = (_pl.Path(H) / "glue" / "requant_dequant_model.c").read_text()
_CASTS = (_pl.Path(H) / "glue" / "requant_casts.c").read_text()

# ---- Dequantize (op_quantize.c dequantize_execute + dequantize_hvx_work_func verbatim; the HVX
#      hvx_do_dequantize is the hand-written model in glue/requant_dequant_model.c) ----
gen("requant_dequant", [("ops/src/op_quantize.c", 1156, 1167), ("ops/src/op_quantize.c", "dequantize_execute"),
                        ("ops/src/op_quantize.c", "dequantize_hvx_work_func")],
    pre="#define NUM_THREADS 2\n" + _CASTS + _RG, exports=[("requant_dequantize", "dequantize_execute")])

# ---- Dequantize_qint32_f (op_quantize.c dequantize_i32_execute: portable C) ----
gen("requant_dequant_i32", [("ops/src/op_quantize.c", "dequantize_i32_execute")],
    exports=[("requant_dequantize_i32", "dequantize_i32_execute")])

# ---- Quantize (op_quantize.c quantize_execute_ref) and AutoQuantize (autoquantize_execute), with the device's
#      saturating float -> int conversion in roundf_i32 (glue/requant_casts.c) ----
gen("requant_quantize", [("ops/src/op_quantize.c", "quantize_execute_ref"), ("ops/src/op_quantize.c", "autoquantize_execute")],
    pre=_CASTS, exports=[("requant_quantize_ref", "quantize_execute_ref"), ("requant_autoquantize_ref", "autoquantize_execute")])
