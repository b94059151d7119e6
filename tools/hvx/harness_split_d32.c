/* hexnn-import harness (ours) for QuantizedSplit_8_d32 as nnlib registers it (op_chanshuffle_d32.c: no check,
 * .execute = split_d32_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. The d32 input has the default padding (harness_d32.h,
 * padding bytes 0); each output tensor is shaped as node_alloc_common gives it from its output definition.
 * stdin: int32 ncases; per case int32 b, h, w, d, n_out (parts), wired (1: input 0 is the data tensor itself),
 * dim (the int32 scalar of input 0 otherwise); float in_min, in_max; the codes (b*h*w*d).
 * stdout: per case and part, int32 status, float out_min, out_max, int32 shape[4], then the codes read from that
 * d32 output (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (1u << 20)
#define HX_MAX_PARTS 16

static void hx_plain(struct tensor *t, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void one_case(void) {
	int32_t hd[7]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("split_d32: short header", 2);
	int n_out = hd[4];
	if (n_out < 1 || n_out > HX_MAX_PARTS) rt_fail("split_d32: bad part count", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail("split_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[4], o[HX_MAX_PARTS + 2];
	int32_t dim = hd[6];
	hx_plain(&t[0], &dim, NN_TYPE_INT32);
	hx_d32_in(&t[1], hd[0], hd[1], hd[2], hd[3], x);
	hx_plain(&t[2], &fl[0], NN_TYPE_FLOAT); hx_plain(&t[3], &fl[1], NN_TYPE_FLOAT);
	int dout = hd[3] / n_out > 0 ? hd[3] / n_out : 1;
	uint32_t osize = (uint32_t)hd[0] * (hd[1] + 8) * (hd[2] + 8) * ((dout + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	struct output odefs[HX_MAX_PARTS + 2]; memset(odefs, 0, sizeof odefs);
	struct tensor *outs[HX_MAX_PARTS + 2];
	for (int i = 0; i < n_out; i++) {
		o[i].data = memalign(128, osize); o[i].max_size = osize;
		o[i].shape.batches = hd[0]; o[i].shape.height = hd[1]; o[i].shape.width = hd[2]; o[i].shape.depth = dout;
		odefs[i].rank = 4; odefs[i].elementsize = 1;
		odefs[i].max_sizes[0] = hd[0]; odefs[i].max_sizes[1] = hd[1]; odefs[i].max_sizes[2] = hd[2];
		odefs[i].max_sizes[3] = dout;
		outs[i] = &o[i];
	}
	hx_plain(&o[n_out], &omin, NN_TYPE_FLOAT); hx_plain(&o[n_out + 1], &omax, NN_TYPE_FLOAT);
	outs[n_out] = &o[n_out]; outs[n_out + 1] = &o[n_out + 1];
	const struct tensor *ins[4] = {hd[5] ? &t[1] : &t[0], &t[1], &t[2], &t[3]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedSplit_8_d32; node.node_type = OP_QuantizedSplit_8_d32;
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = 4; node.n_outputs = n_out + 2;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	for (int i = 0; i < n_out; i++) hx_write_d32_result(st, omin, omax, &o[i]);
}

int main(void) { return hx_run_cases("split_d32", one_case); }
