/* hexnn-import harness (ours) for QuantizedInstanceNorm_8_d32 as nnlib registers it (op_instancenorm_hvx.c:
 * .check = instancenorm_hvx_check, .execute = instancenorm_execute_wrapper), the whole vendor file compiled
 * unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the vector call in this thread. The d32 input has
 * the default padding (harness_d32.h, padding bytes 0; the op zaps its right and odd bottom padding itself); the
 * output tensor is shaped as node_alloc_common gives it from the output definition.
 * stdin / stdout: harness_unary_d32.h. */
#include "harness_unary_d32.h"

/* the graph's destructor of a node with an opaque block (newnode.c): the harness frees nothing */
int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void one_case(void) {
	hx_unary_d32_case("instancenorm_d32: short input", &nn_ops_for_QuantizedInstanceNorm_8_d32, OP_QuantizedInstanceNorm_8_d32, 1);
}

int main(void) { return hx_run_cases("instancenorm_d32", one_case); }
