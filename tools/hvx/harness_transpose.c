/* hexnn-import harness (ours) for the transposes as nnlib registers them (op_transpose.c: Transpose_8 / _16 / _f /
 * _int32; op_axisshuffle.c: AxisShuffle_8; check then execute, each src/gentranspose.c's strategy table with its
 * HVX kernels), the whole vendor files compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the
 * work items in this thread. The input buffer ends with a tail of a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 Transpose_8, 1 Transpose_16, 2 Transpose_f, 3 Transpose_int32,
 * 4 AxisShuffle_8), b, h, w, d, n (the control's length; AxisShuffle: 2), ctl[4] (the control, or axis and
 * groups); float in_min, in_max; the data (b*h*w*d elements of 1, 2, 4, 4, 1 bytes).
 * stdout: per case harness_flat.h's record, then int32 runs: the same node run a second time (its cached strategy)
 * as a second record. */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (8u << 20)

static const struct nn_node_ops *hx_ops[5] = {&nn_ops_for_Transpose_8, &nn_ops_for_Transpose_16,
	&nn_ops_for_Transpose_f, &nn_ops_for_Transpose_int32, &nn_ops_for_AxisShuffle_8};
static const int hx_types[5] = {OP_Transpose_8, OP_Transpose_16, OP_Transpose_f, OP_Transpose_int32, OP_AxisShuffle_8};
static const uint32_t hx_el[5] = {1, 2, 4, 4, 1};
static const uint32_t hx_nt[5] = {NN_TYPE_QUINT8, NN_TYPE_QUINT16, NN_TYPE_FLOAT, NN_TYPE_INT32, NN_TYPE_QUINT8};

/* The node destructor the ops name (never called: the harness builds and drops its nodes itself). */
int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void one_case(void) {
	int32_t hd[10]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("transpose", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 4 || hd[5] < 0 || hd[5] > 4) hx_fail("transpose", ": bad op or control length", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o[3];
	float omin = 0.0f, omax = 0.0f;
	hx_flat_in("transpose", &t[0], hd + 1, hx_nt[op], hx_el[op]);
	int nin;
	if (op == 4) {
		hx_flat_scalar(&t[1], &hd[6], NN_TYPE_INT32); hx_flat_scalar(&t[2], &hd[7], NN_TYPE_INT32);
		hx_flat_scalar(&t[3], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[4], &fl[1], NN_TYPE_FLOAT);
		nin = 5;
	} else {
		hx_flat_scalar(&t[1], &hd[6], NN_TYPE_INT32);
		t[1].shape.depth = hd[5]; t[1].data_size = 4 * hd[5];
		hx_flat_scalar(&t[2], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[3], &fl[1], NN_TYPE_FLOAT);
		nin = op < 2 ? 4 : 2;
	}
	hx_flat_out(&o[0], t[0].data_size + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)hx_ops[op]; node.node_type = hx_types[op];
	node.inputs = ins; node.outputs = outs; node.n_inputs = nin; node.n_outputs = (op < 2 || op == 4) ? 3 : 1;
	int32_t st = node.ops->check(&node, &nn) != 0 ? 2 : node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
	if (!st) {	/* the second run, on the strategy the first one cached */
		memset(o[0].data, HX_TAIL_BYTE, o[0].max_size);
		st = node.ops->execute(&node, &nn) != 0;
	}
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("transpose", one_case); }
