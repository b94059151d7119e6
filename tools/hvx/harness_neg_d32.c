/* hexnn-import harness (ours) for QuantizedNeg_8_d32 as nnlib registers it (op_add_d32.c: no check,
 * .execute = neg_d32_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. The d32 input has the default padding (harness_d32.h,
 * padding bytes 0); the output tensor is shaped as node_alloc_common gives it from the output definition.
 * stdin / stdout: harness_unary_d32.h. */
#include "harness_unary_d32.h"

static void one_case(void) {
	hx_unary_d32_case("neg_d32: short input", &nn_ops_for_QuantizedNeg_8_d32, OP_QuantizedNeg_8_d32, 0);
}

int main(void) { return hx_run_cases("neg_d32", one_case); }
