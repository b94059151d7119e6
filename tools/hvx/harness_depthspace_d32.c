/* hexnn-import harness (ours) for DepthToSpace_8_d32 as nnlib registers it (op_depthspace_d32.c: .check =
 * depthspace_d32_check, .execute = depthspace_d32_execute), the whole vendor file compiled unedited with nnlib's own
 * nn_graph.h; graph_os_standin.c runs the work items in this thread. The d32 input has the default padding
 * (harness_d32.h, padding bytes 0); the output tensor has osize bytes and is shaped as the op makes it.
 * stdin: int32 ncases; per case int32 b, h, w, d, bsH, bsW, nbs (the block tensor's depth, 1 or 2), ncrop (0: no
 * crop input, else 4 or 5 entries), osize; int32 crop[5]; float in_min, in_max; the codes (b*h*w*d).
 * stdout: per case int32 status (2: check failed), float out_min, out_max, int32 shape[4], then the codes read from
 * the d32 output (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (4u << 20)

/* the graph's destructor of a node with an opaque block (newnode.c): the harness frees nothing */
int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void hx_plain(struct tensor *t, int depth, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = 1; t->shape.depth = depth;
	t->data = data; t->data_size = t->max_size = 4u * depth;
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void one_case(void) {
	int32_t hd[9], crop[5]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, crop, sizeof crop) || rt_read_all(0, fl, sizeof fl))
		rt_fail("depthspace_d32: short header", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail("depthspace_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	int32_t bs[2] = {hd[4], hd[5]};
	struct tensor t[5], o[3];
	hx_d32_in(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	hx_plain(&t[1], hd[6], bs, NN_TYPE_INT32);
	hx_plain(&t[2], 1, &fl[0], NN_TYPE_FLOAT); hx_plain(&t[3], 1, &fl[1], NN_TYPE_FLOAT);
	hx_plain(&t[4], hd[7] ? hd[7] : 4, crop, NN_TYPE_INT32);
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, (uint32_t)hd[8]); o[0].max_size = (uint32_t)hd[8];
	hx_plain(&o[1], 1, &omin, NN_TYPE_FLOAT); hx_plain(&o[2], 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_DepthToSpace_8_d32; node.node_type = OP_DepthToSpace_8_d32;
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = hd[7] ? 5 : 4; node.n_outputs = 3;
	int32_t st = node.ops->check(&node, &nn) != 0 ? 2 : node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("depthspace_d32", one_case); }
