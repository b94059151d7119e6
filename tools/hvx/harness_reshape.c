/* hexnn-import harness (ours) for QuantizedReshape and Reshape as nnlib registers them (op_reshape.c, execute only:
 * reshape_execute, the new shape's rules, the memcpy manager's HVX copy), the whole vendor file compiled unedited
 * with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread. Buffers start filled with a
 * fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 QuantizedReshape, 1 Reshape of int32 data), b, h, w, d, rank (the new
 * shape's length, 0-5), shape[5]; float in_min, in_max; the data (1- or 4-byte elements).
 * stdout: per case harness_flat.h's record. */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 16)

static void one_case(void) {
	int32_t hd[11]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("reshape", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 1 || hd[5] < 0 || hd[5] > 5) hx_fail("reshape", ": bad header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[4], o[3];
	float omin = 0.0f, omax = 0.0f;
	hx_flat_in("reshape", &t[0], hd + 1, op ? NN_TYPE_INT32 : NN_TYPE_QUINT8, op ? 4 : 1);
	hx_flat_scalar(&t[1], &hd[6], NN_TYPE_INT32);
	t[1].shape.depth = hd[5]; t[1].data_size = t[1].max_size = 4 * hd[5];
	hx_flat_scalar(&t[2], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[3], &fl[1], NN_TYPE_FLOAT);
	hx_flat_out(&o[0], t[0].data_size + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[4] = {&t[0], &t[1], &t[2], &t[3]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = op ? &nn_ops_for_Reshape : &nn_ops_for_QuantizedReshape;
	node.node_type = op ? OP_Reshape : OP_QuantizedReshape;
	node.inputs = ins; node.outputs = outs; node.n_inputs = op ? 2 : 4; node.n_outputs = op ? 1 : 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("reshape", one_case); }
