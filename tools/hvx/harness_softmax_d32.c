/* hexnn-import harness (ours) for QuantizedSoftmax_8_d32 as nnlib registers it (op_softmax_d32.c: no check,
 * .execute = softmax_d32_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. The d32 input has nnlib's default padding (4 columns on
 * the left, the width rounded up to 4, 4 rows above and below, the depth rounded up to 32, none before) with every
 * padding byte set to the case's fill; beta is a fourth scalar input when n_inputs is 4.
 * stdin: int32 ncases; per case int32 b, h, w, d, n_inputs (3 or 4), fill; float in_min, in_max, beta; the codes.
 * stdout: per case harness_d32.h's record (int32 status, float out_min, out_max, int32 shape[4], the codes). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (4u << 20)

/* The large-depth flat path (not run by this op) builds its table with libm's expf / expm1f, which the Hexagon
 * toolchain's libm would give; they are not here: these stop the run if ever reached. */
float expf(float x) { (void)x; rt_fail("softmax_d32: expf (Hexagon libm) is not available", 6); }
float expm1f(float x) { (void)x; rt_fail("softmax_d32: expm1f (Hexagon libm) is not available", 6); }

static void hx_scalar(struct tensor *t, float *v) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = v; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = NN_TYPE_FLOAT;
}

/* hx_d32_in's layout, every padding byte fill. */
static void hx_d32_in_fill(struct tensor *t, int b, int h, int w, int d, const uint8_t *codes, int fill) {
	int wl = 4, wr = (-(w + wl)) & 3, ht = 4, da = (-d) & 31;
	uint32_t size = (uint32_t)b * (h + 2 * ht) * (w + wl + wr) * (d + da);
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, fill, size + 256);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[1] = da; t->format.width_pad[0] = wl; t->format.width_pad[1] = wr;
	t->format.height_pad[0] = ht; t->format.height_pad[1] = ht;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT8;
	for (int n = 0; n < b; n++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) for (int c = 0; c < d; c++)
		*tensor_location_d32(t, n, y, x, c) = codes[(((size_t)n * h + y) * w + x) * d + c];
}

static void one_case(void) {
	int32_t hd[6]; float fl[3];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("softmax_d32: short header", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail("softmax_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[4], o[3];
	hx_d32_in_fill(&t[0], hd[0], hd[1], hd[2], hd[3], x, hd[5]);
	for (int i = 0; i < 3; i++) hx_scalar(&t[1 + i], &fl[i]);
	uint32_t osize = (uint32_t)hd[0] * (hd[1] + 8) * (hd[2] + 8) * ((hd[3] + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	hx_scalar(&o[1], &omin); hx_scalar(&o[2], &omax);
	const struct tensor *ins[4] = {&t[0], &t[1], &t[2], &t[3]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedSoftmax_8_d32; node.node_type = OP_QuantizedSoftmax_8_d32;
	node.inputs = ins; node.outputs = outs; node.n_inputs = hd[4]; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("softmax_d32", one_case); }
