/* hexnn-import harness (ours) for ArgMax_8toInt32, ArgMax_8 and ArgMin_8 as nnlib registers them (op_argmax.c:
 * check then execute for ArgMax_8toInt32, execute only for ArgMax_8; op_argmin.c: execute only), the whole vendor
 * files compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread. The input buffer ends with a tail of a
 * fixed byte (harness_flat.h), so the HVX row kernels' reads past the data are the same on every run.
 * stdin: int32 ncases; per case int32 op (0 ArgMax_8toInt32, 1 ArgMax_8, 2 ArgMin_8), b, h, w, d, axis; the codes (b*h*w*d).
 * stdout: per case harness_flat.h's record (int32 data for ops 0 and 2, quint8 codes and [0, 255] for op 1). */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (4u << 20)

static void one_case(void) {
	int32_t hd[6];
	if (rt_read_all(0, hd, sizeof hd)) hx_fail("argmax", ": short header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[4], o[3];
	int32_t axis = hd[5];
	float in_min = -1.0f, in_max = 1.0f, omin = 0.0f, omax = 0.0f;
	hx_flat_in("argmax", &t[0], hd + 1, NN_TYPE_QUINT8, 1);
	hx_flat_scalar(&t[1], &axis, NN_TYPE_INT32);
	hx_flat_scalar(&t[2], &in_min, NN_TYPE_FLOAT); hx_flat_scalar(&t[3], &in_max, NN_TYPE_FLOAT);
	hx_flat_out(&o[0], t[0].data_size * 4 + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[4] = {&t[0], &t[1], &t[2], &t[3]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	static const struct nn_node_ops *ops[3] = {&nn_ops_for_ArgMax_8toInt32, &nn_ops_for_ArgMax_8, &nn_ops_for_ArgMin_8};
	static const int types[3] = {OP_ArgMax_8toInt32, OP_ArgMax_8, OP_ArgMin_8};
	if (hd[0] < 0 || hd[0] > 2) hx_fail("argmax", ": bad op", 2);
	node.ops = (struct nn_node_ops *)ops[hd[0]]; node.node_type = types[hd[0]];
	node.inputs = ins; node.outputs = outs; node.n_inputs = 4; node.n_outputs = hd[0] == 1 ? 3 : 1;
	int32_t st = (node.ops->check && node.ops->check(&node, &nn) != 0) ? 2 : node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("argmax", one_case); }
