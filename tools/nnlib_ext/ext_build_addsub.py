# addsub rows (exec'd inside the harness's build.py): QuantizedMaximum_8 / QuantizedMinimum_8
# (ops/src/op_minimum_maximum.c, verbatim except the two HVX helpers, modelled in glue/addsub_minmax.c),
# nnlib's broadcast-opt preparation (src/broadcast.c nn_check_prepare_hvx_opt) and QuantizedSub_8p8to8's check.
_MM = "ops/src/op_minimum_maximum.c"
_G = open(H / "glue/addsub_minmax.c").read().split("/*SPLIT*/")
gen("addsub_minmax",
    [("src/broadcast.c", 48, 48), ("src/broadcast.c", "nn_check_prepare_hvx_opt"), (_MM, 62, 123),
     (_MM, "qminmax_thread_process"), (_MM, "minmax_execute"), (_MM, "maximum_q8_execute"),
     (_MM, "minimum_q8_execute"), ("ops/src/op_add.c", "qsub_reject")],
    pre=_G[0], post=_G[1] + "".join(
        f"int hx_addsub_{s}(int ni, struct hx_td *i, int no, struct hx_td *o) {{ return hx_addsub_run({fn}, ni, i, no, o, 0); }}\n"
        for s, fn in [("maximum", "maximum_q8_execute"), ("minimum", "minimum_q8_execute"), ("sub_check", "qsub_reject")]))

# QuantizedAdd_8p8to8 with operands of different shapes: op_add.c qadd_888_hvx / do_quantized_add_888 / expand
# (verbatim), quant_add_spec_asm (asm) modelled in glue/addsub_qadd_bcast.c.
_Q = open(H / "glue/addsub_qadd_bcast.c").read().split("/*SPLIT*/")
gen("addsub_qadd_bcast",
    [("ops/src/op_add.c", 56, 63), ("ops/src/op_add.c", "do_quantized_add_888"), ("ops/src/op_add.c", "expand"),
     ("ops/src/op_add.c", "qadd_888_hvx"), ("ops/src/op_add.c", "qadd_888_check")],
    pre='#include <nn_broadcast.h>\n#define MAX_THREADS 2\n' + _Q[0], post=_Q[1])
