# Harness rows for the Supernode output stage (exec'd inside the harness's build.py: gen, func, lines, H).
# Verbatim nnlib pieces: include/supernode_utils.h (the node-info struct, the output-range setup, the
# float32 constants, the bias buffer, the retry check); glue/supernode_glue.c is the project's own model
# of the check/execute sequence and of the HVX per-element arithmetic.
_sn_glue = open(H / "glue/supernode_glue.c").read().split("/*SPLIT*/")
_SU = "include/supernode_utils.h"
gen("supernode_outstage",
    [(_SU, 127, 258), (_SU, 578, 592)] + [(_SU, f) for f in (
        "supernode_execute_workitem_check_for_retry", "fill_info_minmax_basics",
        "fill_bias_buf", "check_channelscale_present", "load_channel_scales", "find_k_kinv",
        "setup_initial_output_range")],
    pre=_sn_glue[0], post=_sn_glue[1])
