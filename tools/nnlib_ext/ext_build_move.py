# Harness rows of the `move` area (exec'd inside the oracle's build.py before linking; its namespace: gen, func,
# lines, PRE, NODE, OPC, H, GEN). The 8-bit data-movement ops, compiled from nnlib's own C by file and function
# name; the project's glue (tools/nnlib_ext/glue/move_*.c) holds only x86 stand-ins for copy helpers and
# hand-written models of HVX-only code (gentranspose's HVX strategies, ArgMax's HVX row kernels).
import pathlib as _pl

_G = _pl.Path(H) / "glue"
_g = lambda name: (_G / name).read_text()
_SHIM = '#include <stddef.h>\n' + _g("move_shim.c")
_TXH = lines("include/nn_gentranspose.h", 120, 236)          # nn_transpose_desc, prototypes, inline analyze/execute
_AXIS = lines("include/nn_axis.h", 44, 44) + func("include/nn_axis.h", "handle_negative_axes")
_GT = "src/gentranspose.c"
# the x86 shim's tensor_format has neither .type nor .raw0/.raw1 (written/read only for 16-bit and
# format propagation, never for quint8): they are mapped onto its .layout member in the TUs that touch them.
_FMT = "#define type layout\n#define raw0 layout\n#define raw1 layout\n"
_run = lambda sym, check, execute: (f"static int {sym}(struct nn_node *s, struct nn_graph *nn)\n"
                                    f"{{ int r = {check}(s, nn); return r ? r : {execute}(s, nn); }}  /* glue: check, then execute */\n")

# ---- src/gentranspose.c: the general transpose used by Transpose_8, SpaceToDepth_8, Space/BatchND (no pads),
#      AxisShuffle_8; transpose_execute_HVXFUNC is modelled (glue/move_transpose_model.c) ----
gen("move_gentranspose",
    [(_GT, 118, 157), (_GT, "swap_rows"), (_GT, "roll_rows"), (_GT, "find_row_with_instride"), (_GT, "nn_transpose_check"),
     (_GT, "is_power2"), (_GT, "nn_transpose_analyze_direct"), (_GT, "transpose_execute_NULL"),
     (_GT, "transpose_execute_MEMCPY"), (_GT, "transpose_execute_3DMEMCPY_GEN"), (_GT, "transpose_execute_SCALAR"),
     (_GT, 729, 770)],
    pre=_SHIM + _TXH, post=_g("move_transpose_model.c"))

# ---- Transpose_8 (op_transpose.c transpose_check + transpose_execute) ----
_T = "ops/src/op_transpose.c"
gen("move_transpose", [(_T, 49, 59), (_T, "transpose_execute"), (_T, "transpose_check")],
    pre=_FMT + _SHIM + _TXH, post=_run("move_transpose_run", "transpose_check", "transpose_execute") + OPC("Transpose_8"),
    exports=[("move_transpose", "move_transpose_run")])

# ---- QuantizedSlice_8 (op_slice.c slice_run -> slice_prepare + slice_thread_work) ----
_S = "ops/src/op_slice.c"
gen("move_slice", [(_S, 70, 97), (_S, "slice_thread_work"), (_S, "slice_prepare"), (_S, "slice_run")],
    pre=_SHIM, exports=[("move_slice", "slice_run")])

# ---- QuantizedStridedSlice_8 (op_stridedslice.c sslice_execute_q8 -> strided_slice_impl) ----
_SS = "ops/src/op_stridedslice.c"
gen("move_sslice", [(_SS, 49, 64), (_SS, "get_out_size"), (_SS, "update_out"), (_SS, "check_index"),
                    (_SS, "strided_slice_impl"), (_SS, "sslice_execute_q8")],
    pre=_SHIM + _TXH, exports=[("move_sslice", "sslice_execute_q8")])

# ---- QuantizedReshape (op_reshape.c reshape_execute), QuantizedFlatten (op_flatten.c qflatten_execute) ----
gen("move_shape", [("ops/src/op_reshape.c", "reshape_execute"), ("ops/src/op_flatten.c", "qflatten_execute")],
    pre=_FMT + _SHIM, exports=[("move_reshape", "reshape_execute"), ("move_flatten", "qflatten_execute")])

# ---- QuantizedSplit_8 (op_split.c qsplit_execute_8 -> split_impl) ----
gen("move_split", [("ops/src/op_split.c", "split_impl"), ("ops/src/op_split.c", "qsplit_execute_8")],
    pre=_SHIM + _AXIS, exports=[("move_split", "qsplit_execute_8")])

# ---- QuantizedTile_8 (op_tile.c tile_execute) ----
gen("move_tile", [("ops/src/op_tile.c", "tile_execute")], pre=_SHIM, exports=[("move_tile", "tile_execute")])

# ---- MirrorPad_8 (op_mirrorpad.c mirrorpad_check + mirrorpad_execute_8) ----
_M = "ops/src/op_mirrorpad.c"
gen("move_mirrorpad", [(_M, 41, 60), (_M, "do_mirrorpad"), (_M, "do_mirrorpad_wrapper"), (_M, "mirrorpad_execute"),
                       (_M, "mirrorpad_execute_8"), (_M, "mirrorpad_check")],
    pre=_SHIM, post=_run("move_mirrorpad_run", "mirrorpad_check", "mirrorpad_execute_8"),
    exports=[("move_mirrorpad", "move_mirrorpad_run")])

# ---- SpaceToBatchND_8 / BatchToSpaceND_8 (op_batchspace.c) ----
_B = "ops/src/op_batchspace.c"
gen("move_batchspace", [(_B, "batchspace_s2b_execute"), (_B, "batchspace_b2s_execute"),
                        (_B, "batchspace_b2s_execute_8"), (_B, "batchspace_s2b_execute_8")],
    pre=_SHIM + _TXH + _g("move_quantize_dev.c"), exports=[("move_s2b", "batchspace_s2b_execute_8"), ("move_b2s", "batchspace_b2s_execute_8")])

# ---- SpaceToDepth_8 / DepthToSpace_8 (op_depthspace.c; node_type selects the variant in depthspace_check) ----
_D = "ops/src/op_depthspace.c"
gen("move_depthspace", [(_D, 46, 61), (_D, 70, 70), (_D, "depthspace_s2d_setup_strategy"), (_D, "depthspace_s2d_execute"),
                        (_D, "depthspace_d2s_execute"), (_D, "get_blksiz_from_tensor"), (_D, "depthspace_check")],
    pre=_FMT + _SHIM + _TXH,
    post=_run("move_s2d_run", "depthspace_check", "depthspace_s2d_execute")
         + _run("move_d2s_run", "depthspace_check", "depthspace_d2s_execute") + OPC("SpaceToDepth_8", "DepthToSpace_8"),
    exports=[("move_s2d", "move_s2d_run"), ("move_d2s", "move_d2s_run")])

# ---- Gather_8 / Table_8 (op_gather.c; gather_q8_check picks the variant; perform_lookup_bigN_* use unaligned
#      HVX vector copies, given here as 128-byte memcpy) ----
_GA = "ops/src/op_gather.c"
gen("move_gather", [(_GA, 205, 260), (_GA, "analyze_gather_op"), (_GA, 388, 388), (_GA, "gather_execute"),
                    (_GA, "gather_worker_thread"), (_GA, 553, 580), (_GA, "analyze_table_op"), (_GA, "table_execute"),
                    (_GA, "perform_lookup_N_limit"), (_GA, "perform_lookup_N_check"), (_GA, "perform_lookup_bigN_limit"),
                    (_GA, "perform_lookup_bigN_check"), (_GA, 921, 978), (_GA, "select_copy_func"), (_GA, 1011, 1066),
                    (_GA, "gather_q8_check")],
    pre=_SHIM + "static inline HVX_Vector q6op_V_vldu_A(HVX_Vector const *p) { HVX_Vector v; memcpy(&v, p, 128); return v; }\n"
        "static inline void q6op_vstu_AV(HVX_Vector *p, HVX_Vector v) { memcpy(p, &v, 128); }  /* glue: unaligned vector copy */\n",
    post=_run("move_gather_run", "gather_q8_check", "gather_execute") + _run("move_table_run", "gather_q8_check", "table_execute")
         + OPC("Gather_8", "Table_8"),
    exports=[("move_gather", "move_gather_run"), ("move_table", "move_table_run")])

# ---- ArgMax_8toInt32 / ArgMax_8 (op_argmax.c; the stride-1 HVX row kernels are modelled) ----
_A = "ops/src/op_argmax.c"
gen("move_argmax", [(_A, 44, 48), (_A, 58, 74), (_A, "maxIdx_8toInt32"), (_A, "maxIdx_8")],
    pre=_SHIM + _AXIS,
    post=_g("move_argmax_model.c") + func(_A, "argmax_thread_work") + func(_A, "argmax_execute_8toInt32")
         + func(_A, "argmax_execute_8"),
    exports=[("move_argmax32", "argmax_execute_8toInt32"), ("move_argmax8", "argmax_execute_8")])

# ---- TopK_8 (op_topk_q.c topk_8_execute) ----
gen("move_topk", [("ops/src/op_topk_q.c", 39, 40), ("ops/src/op_topk_q.c", "topk_8_execute")], pre=_SHIM,
    exports=[("move_topk", "topk_8_execute")])

# ---- ResizeNearestNeighbor_8 (op_resizenear.c, the MT build: worker threads + resizenear_8_execute) ----
_R = "ops/src/op_resizenear.c"
gen("move_resizenear", [(_R, 42, 48), (_R, 51, 66), (_R, "resize8_worker_thread_align_corners"), (_R, "resize8_worker_thread"),
                        (_R, 127, 202)], pre=_SHIM, exports=[("move_resizenear", "resizenear_8_execute")])

# ---- AxisShuffle_8 (op_axisshuffle.c) ----
_X = "ops/src/op_axisshuffle.c"
gen("move_axisshuffle", [(_X, 64, 92), (_X, "axishuffle_check_strategy"), (_X, "axisshuffle_execute"),
                         (_X, "axisshuffle_check")],
    pre=_FMT + _SHIM + _TXH + _AXIS,
    post=_run("move_axisshuffle_run", "axisshuffle_check", "axisshuffle_execute") + OPC("AxisShuffle_8"),
    exports=[("move_axisshuffle", "move_axisshuffle_run")])

# ---- QuantizedChannelShuffle_8 (op_chanshuffle.c channelshuffle_check_qu8 + channelshuffle_execute) ----
_C = "ops/src/op_chanshuffle.c"
gen("move_chanshuffle", [(_C, 99, 103), (_C, "setup_scale_for_input"), (_C, "copy_slice_i32"), (_C, "copy_slice_qu8"),
                         (_C, "channelshuffle_execute"), (_C, "channelshuffle_check_qu8")],
    pre=_SHIM + "#define nn_tensor_out_prepare_normal_fromshape tensor_out_prepare_normal_fromshape\n"
        "int adjust_minmax_for_zero(float *min_p, float *max_p);\n",
    post=_run("move_chanshuffle_run", "channelshuffle_check_qu8", "channelshuffle_execute") + OPC("QuantizedChannelShuffle_8"),
    exports=[("move_chanshuffle", "move_chanshuffle_run")])
