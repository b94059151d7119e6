/* hexnn-import harness (ours) for Convert_to_d32_16b / Convert_from_d32_16b as nnlib registers them
 * (op_convert_d32.c: .execute = convert_to_d32_16b / convert_from_d32_16b, no check()), built with nnlib's own
 * nn_graph.h; graph_os_standin.c runs the memcpy manager's work in this thread. Per case: a flat 16-bit tensor ->
 * Convert_to_d32_16b with 1-5 inputs (the options as int32 scalars) -> Convert_from_d32_16b of that output.
 * stdin: int32 ncases; per case int32 b, h, w, d, n_inputs (1-5), the four options (inputs 1-4), int32 type (0 QUINT16,
 * 1 QINT16); the uint16 codes (b*h*w*d).
 * stdout: per case int32 to-status; int32 the d32 output's shape[4], height_pad[2], width_pad[2], depth_pad[2], type;
 * its data as stored (uint16, the whole padded tensor: data_size bytes, int32 first); int32 from-status, int32
 * type; the flat result (b*h*w*d uint16). */
#include "harness_u16_d32.h"

#define HX_SCRATCH_BYTES (1u << 20)

static void hx_int(struct tensor *t, int32_t *v) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = v; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = NN_TYPE_INT32;
}

static void one_case(void) {
	int32_t hd[10];
	if (rt_read_all(0, hd, sizeof hd)) rt_fail("convert_u16_d32: short header", 2);
	int n_in = hd[4];
	if (n_in < 1 || n_in > 5) rt_fail("convert_u16_d32: bad header", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint16_t *x = memalign(128, 2 * n + 128);
	if (rt_read_all(0, x, 2 * n)) rt_fail("convert_u16_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[5], o, back;
	memset(&t[0], 0, sizeof t[0]);
	t[0].shape.batches = hd[0]; t[0].shape.height = hd[1]; t[0].shape.width = hd[2]; t[0].shape.depth = hd[3];
	t[0].data = x; t[0].data_size = t[0].max_size = 2 * n; t[0].format.layout = NN_LAYOUT_PLAIN;
	t[0].format.type = hd[9] ? NN_TYPE_QINT16 : NN_TYPE_QUINT16;
	for (int i = 1; i < 5; i++) hx_int(&t[i], &hd[4 + i]);
	uint32_t osize = 2u * hd[0] * (hd[1] + 2 * 8) * (hd[2] + 16) * ((hd[3] + 31) & ~31) + 1024;
	memset(&o, 0, sizeof o); o.data = memalign(128, osize); o.max_size = osize; memset(o.data, 0, osize);
	memset(&back, 0, sizeof back); back.data = memalign(128, 2 * n + 128); back.max_size = 2 * n + 128;
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[1] = {&o};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.inputs = ins; node.outputs = outs; node.n_inputs = n_in; node.n_outputs = 1;
	node.node_type = OP_Convert_to_d32_16b;
	int32_t st = convert_to_d32_16b(&node, &nn) != 0;
	rt_write_all(1, &st, 4);
	int32_t f[11] = {o.shape.batches, o.shape.height, o.shape.width, o.shape.depth,
	                 o.format.height_pad[0], o.format.height_pad[1], o.format.width_pad[0], o.format.width_pad[1],
	                 o.format.depth_pad[0], o.format.depth_pad[1], o.format.type};
	if (st) memset(f, 0, sizeof f);
	rt_write_all(1, f, sizeof f);
	int32_t size = st ? 0 : (int32_t)o.data_size;
	rt_write_all(1, &size, 4); rt_write_all(1, o.data, size);
	const struct tensor *bins[1] = {&o};
	struct tensor *bouts[1] = {&back};
	node.inputs = bins; node.outputs = bouts; node.n_inputs = 1; node.node_type = OP_Convert_from_d32_16b;
	int32_t st2 = st ? 2 : convert_from_d32_16b(&node, &nn) != 0;
	int32_t bt = st2 ? 0 : (int32_t)back.format.type;
	rt_write_all(1, &st2, 4); rt_write_all(1, &bt, 4);
	rt_write_all(1, back.data, st2 ? 0 : 2 * n);
}

int main(void) { return hx_run_cases("convert_u16_d32", one_case); }
