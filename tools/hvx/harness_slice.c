/* hexnn-import harness (ours) for QuantizedSlice_8, Slice_int32 and Slice_f as nnlib registers them (op_slice.c,
 * execute only: slice_run / slice_run_f, slice_prepare's plan cached in the node, work items copying rows with the
 * asm vmemcpy_asm / vmemcpy_2d_general_asm), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. Buffers start filled with a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 QuantizedSlice_8, 1 Slice_int32, 2 Slice_f), b, h, w, d, n (spec
 * length 1-4), start[4], size[4]; float in_min, in_max; the data (1- or 4-byte elements).
 * stdout: per case harness_flat.h's record, twice (the second run on the cached plan). */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 16)

int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void one_case(void) {
	int32_t hd[14]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("slice", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 2 || hd[5] < 1 || hd[5] > 4) hx_fail("slice", ": bad header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o[3];
	float omin = 0.0f, omax = 0.0f;
	static const uint32_t types[3] = {NN_TYPE_QUINT8, NN_TYPE_INT32, NN_TYPE_FLOAT};
	hx_flat_in("slice", &t[0], hd + 1, types[op], op ? 4 : 1);
	hx_flat_scalar(&t[1], &hd[6], NN_TYPE_INT32); t[1].shape.depth = hd[5]; t[1].data_size = 4 * hd[5];
	hx_flat_scalar(&t[2], &hd[10], NN_TYPE_INT32); t[2].shape.depth = hd[5]; t[2].data_size = 4 * hd[5];
	hx_flat_scalar(&t[3], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[4], &fl[1], NN_TYPE_FLOAT);
	hx_flat_out(&o[0], t[0].data_size + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	static const struct nn_node_ops *ops[3] = {&nn_ops_for_QuantizedSlice_8, &nn_ops_for_Slice_int32, &nn_ops_for_Slice_f};
	static const int otypes[3] = {OP_QuantizedSlice_8, OP_Slice_int32, OP_Slice_f};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)ops[op]; node.node_type = otypes[op];
	node.inputs = ins; node.outputs = outs; node.n_inputs = op ? 3 : 5; node.n_outputs = op ? 1 : 3;
	for (int r = 0; r < 2; r++) {
		int32_t st = node.ops->execute(&node, &nn) != 0;
		hx_write_flat_result(st, omin, omax, &o[0]);
		memset(o[0].data, HX_TAIL_BYTE, o[0].max_size);
	}
}

int main(void) { return hx_run_cases("slice", one_case); }
