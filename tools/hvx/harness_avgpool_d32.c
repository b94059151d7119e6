/* hexnn-import harness (ours) for QuantizedAvgPool_8_d32 as nnlib registers it (op_avgpool_d32.c: .check =
 * avgpool_check, .execute = avgpool_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. The d32 input has the default padding (harness_d32.h);
 * its spatial padding holds 0 and its depth-padding lanes the byte dfill; the output tensor is as node_alloc_common
 * gives it from the output definition.
 * stdin: int32 ncases; per case int32 b, h, w, d, window h, w, stride h, w, padding (NN_PAD_*), dfill; float in_min,
 * in_max; the codes (b*h*w*d).
 * stdout: per case int32 status, float out_min, out_max, int32 shape[4], then the codes read from the d32 output
 * (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (8u << 20)

static void hx_plain(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* the depth-padding lanes (past the depth, in the last slice) of every stored pixel, rows and columns of the
 * spatial padding included, set to fill */
static void hx_fill_depth_pad(struct tensor *t, uint8_t fill) {
	int d = t->shape.depth, da = t->format.depth_pad[1];
	if (!da) return;
	int hp = t->shape.height + t->format.height_pad[0] + t->format.height_pad[1];
	int wp = t->shape.width + t->format.width_pad[0] + t->format.width_pad[1];
	int nd32 = (d + da) / 32;
	uint8_t *p = t->data;
	for (int n = 0; n < t->shape.batches; n++) for (int y = 0; y < hp; y++) for (int x = 0; x < wp; x++) {
		uint8_t *px = p + ((((size_t)n * hp + y) * nd32 + nd32 - 1) * wp + x) * 32;
		for (int c = 32 - da; c < 32; c++) px[c] = fill;
	}
}

static void one_case(void) {
	int32_t hd[10]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("avgpool_d32: short header", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail("avgpool_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o[3];
	int32_t dummy[2] = {0, 0};
	hx_d32_in(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	hx_fill_depth_pad(&t[0], (uint8_t)hd[9]);
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
	hx_plain(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT);
	hx_plain(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	for (int i = 0; i < 4; i++) odefs[0].max_sizes[i] = osh[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedAvgPool_8_d32; node.node_type = OP_QuantizedAvgPool_8_d32;
	node.padding = hd[8]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = 5; node.n_outputs = 3;
	int32_t st = osh[1] < 1 || osh[2] < 1 ? 3 : node.ops->check(&node, &nn) != 0 ? 2
	             : node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("avgpool_d32", one_case); }
