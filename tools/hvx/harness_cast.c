/* hexnn-import harness (ours) for op_cast.c's casts as nnlib registers them (execute only: scalar C casts below
 * NUM_THREADS * 128 elements, HVX work items in 128-element chunks above, the scalar tail), the whole vendor file
 * compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread. Buffers
 * start filled with a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 CastInt32ToFloat32, 1 CastUInt8ToFloat32, 2 CastFloat32ToInt32,
 * 3 CastUInt8ToInt32, 4 CastInt32ToUInt8, 5 CastFloat32ToUInt8), b, h, w, d; the data (4-byte or 1-byte elements).
 * stdout: per case harness_flat.h's record. */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 16)

static const struct nn_node_ops *hx_ops[6] = {&nn_ops_for_CastInt32ToFloat32, &nn_ops_for_CastUInt8ToFloat32,
	&nn_ops_for_CastFloat32ToInt32, &nn_ops_for_CastUInt8ToInt32, &nn_ops_for_CastInt32ToUInt8,
	&nn_ops_for_CastFloat32ToUInt8};
static const int hx_types[6] = {OP_CastInt32ToFloat32, OP_CastUInt8ToFloat32, OP_CastFloat32ToInt32,
	OP_CastUInt8ToInt32, OP_CastInt32ToUInt8, OP_CastFloat32ToUInt8};
static const uint32_t hx_in_type[6] = {NN_TYPE_INT32, NN_TYPE_QUINT8, NN_TYPE_FLOAT, NN_TYPE_QUINT8, NN_TYPE_INT32,
	NN_TYPE_FLOAT};
static const uint32_t hx_in_size[6] = {4, 1, 4, 1, 4, 4};

static void one_case(void) {
	int32_t hd[5];
	if (rt_read_all(0, hd, sizeof hd)) hx_fail("cast", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 5) hx_fail("cast", ": bad op", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t, o;
	hx_flat_in("cast", &t, hd + 1, hx_in_type[op], hx_in_size[op]);
	uint32_t n = (uint32_t)hd[1] * hd[2] * hd[3] * hd[4];
	hx_flat_out(&o, 4 * n + 128);
	const struct tensor *ins[1] = {&t};
	struct tensor *outs[1] = {&o};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)hx_ops[op]; node.node_type = hx_types[op];
	node.inputs = ins; node.outputs = outs; node.n_inputs = 1; node.n_outputs = 1;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, 0.0f, 0.0f, &o);
}

int main(void) { return hx_run_cases("cast", one_case); }
