# nonlin rows (project extension, exec'd inside the harness build.py): op_tanh_d32.c's scalar table
# arithmetic (set_scaling_parms + operate_ref_function + its coefficient tables), extracted verbatim at
# build time, with the hand-written run state of glue/nonlin_tanh_d32.c.
_g = (H / "glue/nonlin_tanh_d32.c").read_text().split("/*SPLIT*/")
_src = "ops/src/op_tanh_d32.c"
_t = PRE + "#include <string.h>\n"
_t += lines(_src, 91, 97)                       # struct tanh_scaling_parms
_t += lines(_src, 441, 460)                     # tanh_lut, sigmoid_lut
_t += func(_src, "set_scaling_parms") + _g[0] + func(_src, "operate_ref_function") + _g[1]
(GEN / "ext_nonlin_tanh_d32.c").write_text(_t)
