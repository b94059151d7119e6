/* hexnn-import harness (ours) for QuantizedConcat_8_d32 as nnlib registers it (op_concat_d32.c: .check =
 * concat_check, .execute = concat_execute_hvx), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. Each d32 input is padded as hx_d32_in lays it out but with
 * its own depth padding before the data (0..31 channels: the copies' rotated / realigned paths); padding bytes 0x5a.
 * stdin: int32 ncases; per case int32 n_in, dim; per input int32 b, h, w, d, before; float in_min, in_max; then
 * every input's codes (b*h*w*d each, plain NHWC).
 * stdout: per case one hx_write_d32_result record (status, out_min, out_max, shape, codes). */
#include "harness_d32.h"

#define HX_MAX_IN 8

static void hx_plain(struct tensor *t, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* hx_d32_in with ``before`` channels of depth padding ahead of the data. */
static void hx_d32_in_before(struct tensor *t, const int32_t *s, const uint8_t *codes) {
	int b = s[0], h = s[1], w = s[2], d = s[3], before = s[4];
	int wl = 4, wr = (-(w + wl)) & 3, ht = 4, da = (-(d + before)) & 31;
	uint32_t size = (uint32_t)b * (h + 2 * ht) * (w + wl + wr) * (d + before + da);
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, 0x5a, size + 256);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[0] = before; t->format.depth_pad[1] = da;
	t->format.width_pad[0] = wl; t->format.width_pad[1] = wr;
	t->format.height_pad[0] = ht; t->format.height_pad[1] = ht;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT8;
	for (int n = 0; n < b; n++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) for (int c = 0; c < d; c++)
		*tensor_location_d32(t, n, y, x, c) = codes[(((size_t)n * h + y) * w + x) * d + c];
}

static void one_case(void) {
	int32_t hd[2], sh[HX_MAX_IN][5];
	float rg[HX_MAX_IN][2];
	if (rt_read_all(0, hd, sizeof hd)) rt_fail("concat_d32: short header", 2);
	int n_in = hd[0];
	if (n_in < 1 || n_in > HX_MAX_IN) rt_fail("concat_d32: bad input count", 2);
	for (int i = 0; i < n_in; i++)
		if (rt_read_all(0, sh[i], sizeof sh[i]) || rt_read_all(0, rg[i], sizeof rg[i]))
			rt_fail("concat_d32: short input header", 2);
	struct tensor t[1 + 3 * HX_MAX_IN];
	const struct tensor *ins[1 + 3 * HX_MAX_IN];
	int32_t dim = hd[1];
	hx_plain(&t[0], &dim, NN_TYPE_INT32);
	uint32_t total = 0;
	for (int i = 0; i < n_in; i++) {
		size_t n = (size_t)sh[i][0] * sh[i][1] * sh[i][2] * sh[i][3];
		uint8_t *x = memalign(128, n + 128);
		if (rt_read_all(0, x, n)) rt_fail("concat_d32: short data", 2);
		hx_d32_in_before(&t[1 + i], sh[i], x);
		hx_plain(&t[1 + n_in + i], &rg[i][0], NN_TYPE_FLOAT);
		hx_plain(&t[1 + 2 * n_in + i], &rg[i][1], NN_TYPE_FLOAT);
		total += t[1 + i].data_size;
	}
	for (int i = 0; i < 1 + 3 * n_in; i++) ins[i] = &t[i];
	struct tensor o[3];
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	uint32_t osize = 2 * total + 65536;
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	hx_plain(&o[1], &omin, NN_TYPE_FLOAT); hx_plain(&o[2], &omax, NN_TYPE_FLOAT);
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedConcat_8_d32; node.node_type = OP_QuantizedConcat_8_d32;
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = 1 + 3 * n_in; node.n_outputs = 3;
	int32_t st = node.ops->check(&node, &nn) != 0;
	if (!st) st = node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("concat_d32", one_case); }
