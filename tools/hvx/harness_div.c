/* hexnn-import harness (ours) for QuantizedDiv_8 as nnlib registers it (op_div.c nn_ops_for_QuantizedDiv_8: .check =
 * div_check, .execute = div_execute: div_scalar_execute / div_scalar_static_minmax_execute with HVX flip_values /
 * map_values, div_depthwise_execute), the vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. Input buffers are 128-aligned with a zeroed tail of 256
 * bytes (the HVX loops read and write whole vectors); the output buffer has the same slack.
 * stdin: int32 ncases; per case int32 a_shape[4], b_depth, n_inputs (6 or 8); float a_min, a_max, b_min, b_max,
 * static_min, static_max; A's codes; B's codes.
 * stdout: per case int32 status (1: check or execute failed), float out_min, out_max, int32 shape[4] (zeros unless
 * the status is 0), codes. */
#include "harness_flat.h"

static void one_case(void) {
	int32_t hdr[6]; float fl[6];
	if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, fl, sizeof fl)) rt_fail("div: short header", 2);
	const int32_t *sh = hdr, bsh[4] = {1, 1, 1, hdr[4]};
	int32_t nin = hdr[5];
	uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3];
	uint8_t *a = hx_read_zero_tail("div", n), *b = hx_read_zero_tail("div", (uint32_t)hdr[4]);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, 1u << 16); nn.scratch_size = 1u << 16; memset(nn.scratch, 0, 1u << 16);
	static const int32_t one[4] = {1, 1, 1, 1};
	struct tensor t[8], o[3];
	hx_plain(&t[0], sh, a, 1, NN_TYPE_QUINT8);
	hx_plain(&t[1], bsh, b, 1, NN_TYPE_QUINT8);
	for (int i = 0; i < 6; i++) hx_plain(&t[2 + i], one, &fl[i], 4, NN_TYPE_FLOAT);
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, n + 256); o[0].max_size = n + 256; memset(o[0].data, 0, n + 256);
	hx_plain(&o[1], one, &omin, 4, NN_TYPE_FLOAT);
	hx_plain(&o[2], one, &omax, 4, NN_TYPE_FLOAT);
	const struct tensor *ins[8]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 8; i++) ins[i] = &t[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedDiv_8; node.inputs = ins; node.outputs = outs; node.n_inputs = nin; node.n_outputs = 3;
	int32_t st = node.ops->check(&node, &nn) != 0 || node.ops->execute(&node, &nn) != 0;
	int32_t osh[4] = {0, 0, 0, 0};
	if (!st) { osh[0] = o[0].shape.batches; osh[1] = o[0].shape.height; osh[2] = o[0].shape.width; osh[3] = o[0].shape.depth; }
	float res[2] = {omin, omax};
	rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, osh, sizeof osh);
	if (!st) rt_write_all(1, o[0].data, (uint32_t)osh[0] * osh[1] * osh[2] * osh[3]);
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("div: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
