/* hexnn-import harness (ours, no vendor arithmetic) for any flat (plain layout) node of a vendor op file compiled
 * whole and unedited with nnlib's own nn_graph.h: the generated unit defines HX_NODE_OPS (the registered
 * nn_node_ops of its ops, in the order the case module numbers them) and HX_NODE_TYPES (their OP_ ids) before
 * including this file. Per case: the node's check() when it has one, then execute() `runs` times, as the graph
 * calls them; graph_os_standin.c runs work items in this thread. Inputs end with a tail of a fixed byte, outputs
 * start filled with it (harness_flat.h), so a byte read or left unset is the same on every run.
 * stdin: int32 ncases; per case int32 op, padding, n_in, n_out, runs, per output its capacity in bytes and the shape
 * b, h, w, d its definition gives (node_alloc_common's; zeros where the op sets it), then per input int32 type,
 * elsize, b, h, w, d and its b*h*w*d*elsize bytes.
 * stdout: per case and run int32 status (0 ok, 1 check() failed, 2 execute() failed), then per output int32
 * shape[4], data_size and its data_size bytes (zeros and nothing when status is not 0). */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (8u << 20)
#define HX_MAX_IO 12

int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void hx_write_outputs(int32_t st, struct tensor *o, int n_out) {
	rt_write_all(1, &st, 4);
	for (int i = 0; i < n_out; i++) {
		int32_t rec[5] = {0, 0, 0, 0, 0};
		if (!st) {
			rec[0] = o[i].shape.batches; rec[1] = o[i].shape.height; rec[2] = o[i].shape.width;
			rec[3] = o[i].shape.depth; rec[4] = (int32_t)o[i].data_size;
		}
		rt_write_all(1, rec, sizeof rec);
		if (!st) rt_write_all(1, o[i].data, o[i].data_size);
	}
}

static void one_case(void) {
	static struct nn_node_ops *const ops[] = HX_NODE_OPS;
	static const int types[] = HX_NODE_TYPES;
	int32_t hd[5], cap[HX_MAX_IO][5];
	if (rt_read_all(0, hd, sizeof hd)) hx_fail("node", ": short header", 2);
	int op = hd[0], n_in = hd[2], n_out = hd[3], runs = hd[4];
	if (op < 0 || op >= (int)(sizeof ops / sizeof ops[0]) || n_in < 1 || n_in > HX_MAX_IO || n_out < 1
	    || n_out > HX_MAX_IO || runs < 1) hx_fail("node", ": bad header", 2);
	if (rt_read_all(0, cap, 20 * n_out)) hx_fail("node", ": short header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t[HX_MAX_IO], o[HX_MAX_IO];
	const struct tensor *ins[HX_MAX_IO];
	struct tensor *outs[HX_MAX_IO];
	for (int i = 0; i < n_in; i++) {
		int32_t th[6];
		if (rt_read_all(0, th, sizeof th)) hx_fail("node", ": short input header", 2);
		hx_flat_in("node", &t[i], th + 2, (uint32_t)th[0], (uint32_t)th[1]);
		ins[i] = &t[i];
	}
	for (int i = 0; i < n_out; i++) {
		hx_flat_out(&o[i], (uint32_t)cap[i][0]); outs[i] = &o[i];
		o[i].shape.batches = cap[i][1]; o[i].shape.height = cap[i][2]; o[i].shape.width = cap[i][3];
		o[i].shape.depth = cap[i][4];
	}
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = ops[op]; node.node_type = types[op]; node.padding = hd[1];
	node.inputs = ins; node.outputs = outs; node.n_inputs = n_in; node.n_outputs = n_out;
	int32_t st = (node.ops->check && node.ops->check(&node, &nn) != 0) ? 1 : 0;
	for (int r = 0; r < runs; r++) {
		int32_t s = st ? st : (node.ops->execute(&node, &nn) != 0 ? 2 : 0);
		hx_write_outputs(s, o, n_out);
		for (int i = 0; i < n_out; i++) memset(o[i].data, HX_TAIL_BYTE, o[i].max_size);
	}
}

int main(void) { return hx_run_cases("node", one_case); }
