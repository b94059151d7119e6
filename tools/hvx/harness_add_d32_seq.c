/* hexnn-import harness (ours): harness_add_d32.c's node for QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32 with
 * the input ranges read again before each run after the first (a node whose ranges change between runs: a set-up
 * that fails, then runs on the scaling left in the node). */
#define HX_RANGES_PER_RUN 1
#include "harness_add_d32.c"
