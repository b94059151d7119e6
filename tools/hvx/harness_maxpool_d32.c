/* hexnn-import harness (ours) for QuantizedMaxPool_8_d32 as nnlib registers it (op_maxpool_d32.c: no check,
 * .execute = maxpool_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c
 * runs the work items in this thread. The d32 input has left padding L (0-7; the right padding the least making the
 * width total a multiple of 4), top / bottom 4, no depth padding before; its whole padded buffer, padding bytes
 * included (as a producer leaves them), comes from stdin. The output tensor is shaped as node_alloc_common gives it
 * from the output definition.
 * stdin: int32 ncases; per case int32 b, h, w, d, window h, w, stride h, w, padding (NN_PAD_*), L; float in_min,
 * in_max; the padded buffer (b * (h+8) * ((d+31)/32) * (L+w+right) * 32 bytes, nnlib's d32 order).
 * stdout: per case int32 status, float out_min, out_max, int32 shape[4], then the codes read from the d32 output
 * (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (8u << 20)

static void hx_plain(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* The d32 input with left padding wl, its padded buffer read from stdin. */
static void hx_d32_in_left(struct tensor *t, int b, int h, int w, int d, int wl) {
	int wr = (-(w + wl)) & 3, ht = 4, da = (-d) & 31;
	uint32_t size = (uint32_t)b * (h + 2 * ht) * (w + wl + wr) * (d + da);
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, 0, size + 256);
	if (rt_read_all(0, t->data, size)) rt_fail("maxpool_d32: short data", 2);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[1] = da; t->format.width_pad[0] = wl; t->format.width_pad[1] = wr;
	t->format.height_pad[0] = ht; t->format.height_pad[1] = ht;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT8;
}

static void one_case(void) {
	int32_t hd[10]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("maxpool_d32: short header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o[3];
	int32_t dummy[2] = {0, 0};
	hx_d32_in_left(&t[0], hd[0], hd[1], hd[2], hd[3], hd[9]);
	hx_plain(&t[1], 1, 1, 1, 1, &fl[0], NN_TYPE_FLOAT);
	hx_plain(&t[2], 1, 1, 1, 1, &fl[1], NN_TYPE_FLOAT);
	hx_plain(&t[3], 1, hd[4], hd[5], 1, &dummy[0], NN_TYPE_INT32);
	hx_plain(&t[4], 1, hd[6], hd[7], 1, &dummy[1], NN_TYPE_INT32);
	int32_t osh[4] = {hd[0], nn_pad_compute_outsize(hd[1], hd[4], hd[6], hd[8]),
	                  nn_pad_compute_outsize(hd[2], hd[5], hd[7], hd[8]), hd[3]};
	uint32_t osize = (uint32_t)osh[0] * (osh[1] + 8) * (osh[2] + 8) * ((osh[3] + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	o[0].shape.batches = osh[0]; o[0].shape.height = osh[1]; o[0].shape.width = osh[2]; o[0].shape.depth = osh[3];
	hx_plain(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT);
	hx_plain(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	for (int i = 0; i < 4; i++) odefs[0].max_sizes[i] = osh[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedMaxPool_8_d32; node.node_type = OP_QuantizedMaxPool_8_d32;
	node.padding = hd[8]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = 5; node.n_outputs = 3;
	int32_t st = osh[1] < 1 || osh[2] < 1 ? 3 : node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("maxpool_d32", one_case); }
