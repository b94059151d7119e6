/* hexnn-import harness (ours) for ResizeNearestNeighbor_8 as nnlib registers it (op_resizenear.c, execute only:
 * resizenear_8_execute, its float scales and per-row work items, asm vmemcpy_asm per pixel), the whole vendor file
 * compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread. Buffers
 * start filled with a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 b, h, w, d, new height, new width, n_in (4 / 5), align_corners; float in_min,
 * in_max; the codes (b*h*w*d).
 * stdout: per case harness_flat.h's record. */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 16)

static void one_case(void) {
	int32_t hd[8]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("resizenear", ": short header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o[3];
	float omin = 0.0f, omax = 0.0f;
	hx_flat_in("resizenear", &t[0], hd, NN_TYPE_QUINT8, 1);
	hx_flat_scalar(&t[1], &hd[4], NN_TYPE_INT32);
	t[1].shape.depth = 2; t[1].data_size = t[1].max_size = 8;
	hx_flat_scalar(&t[2], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[3], &fl[1], NN_TYPE_FLOAT);
	hx_flat_scalar(&t[4], &hd[7], NN_TYPE_INT32);
	hx_flat_out(&o[0], (uint32_t)hd[0] * hd[4] * hd[5] * hd[3] + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_ResizeNearestNeighbor_8; node.node_type = OP_ResizeNearestNeighbor_8;
	node.inputs = ins; node.outputs = outs; node.n_inputs = hd[6]; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("resizenear", one_case); }
