# Harness rows of the `extra` area (exec'd inside the oracle's build.py before linking; its namespace:
# gen, func, lines, PRE, NODE, OPC, H, GEN). Only references to nnlib functions by file and name, plus the
# project's own glue (tools/nnlib_ext/glue/extra_*.c: small helpers and hand-written models of HVX-only code).
import pathlib as _pl

_G = _pl.Path(H) / "glue"
_glue = lambda name: (_G / name).read_text()

# ---- QuantizedLRN_8 (op_lrn.c: the _ref execute is also the flat op's execute) ----
gen("extra_lrn", [("ops/src/op_lrn.c", "fourd_index"), ("ops/src/op_lrn.c", "compute_ref_lrn_at"),
                  ("ops/src/op_lrn.c", "lrn_8_execute_ref"), ("ops/src/op_lrn.c", "lrn_check")],
    post="static int extra_lrn_run(struct nn_node *s, struct nn_graph *nn)\n"
         "{ int r = lrn_check(s, nn); return r ? r : lrn_8_execute_ref(s, nn); }  /* glue: check, then execute */\n",
    exports=[("extra_lrn", "extra_lrn_run")])

# ---- QuantizedL2Pool_8 (op_l2pool.c; sqrt_fx from include/op_sqrth_8.h, x86 branch) ----
gen("extra_l2pool", [("ops/src/op_l2pool.c", "l2pool_execute_ref")], pre='#include "op_sqrth_8.h"\n',
    exports=[("extra_l2pool", "l2pool_execute_ref")])

# ---- QuantizedPRelu_8_ref (op_prelu.c prelu_execute, the portable fixed-point path) ----
gen("extra_prelu", [("ops/src/op_prelu.c", "prelu_execute")], exports=[("extra_prelu_ref", "prelu_execute")])

# ---- QuantizedPad_8 (op_pad.c pad_q_execute + pad_generic_execute; HVX edge/batch fill modelled) ----
gen("extra_pad", [("ops/src/op_pad.c", 62, 90), ("ops/src/op_pad.c", "pad_generic_execute"),
                  ("ops/src/op_pad.c", "pad_q_execute")],
    pre='#include "nn_pad.h"\n#define MAX_THREAD 2\n#define NUM_BYT_PERVECTOR 128\n#define USE_HVX_FLAG (1)\n'
        + _glue("extra_pad_models.c"),
    post=_glue("extra_pad_models_post.c"), exports=[("extra_pad", "pad_q_execute")])

# ---- QuantizedResizeBilinear_8 (op_resizebilinear.c: portable general path + copy; the HVX 2x/4x/
#      align-corners fast paths are stubs that fail, the compare loop only draws shapes that avoid them) ----
gen("extra_resize", [("ops/src/op_resizebilinear.c", 58, 107), ("ops/src/op_resizebilinear.c", "resizebilinear_general"),
                     ("ops/src/op_resizebilinear.c", "resizebilinear_work"),
                     ("ops/src/op_resizebilinear.c", "resizebilinear_qu8_execute")],
    pre='#define NUM_THREADS 2\n#include "float_mathops.h"\n' + _glue("extra_resize_models.c"),
    exports=[("extra_resize", "resizebilinear_qu8_execute")])
