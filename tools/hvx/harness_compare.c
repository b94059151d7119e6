/* hexnn-import harness (ours) for the quantized comparisons as nnlib registers them (op_compare_8.c
 * nn_ops_for_QuantizedEqual_8 ... _GreaterEqual_8: compare_execute - the HVX compare_hvx_* on equal ranges,
 * op_quantize.c's hvx_do_dequantize and float compares otherwise, src/broadcast.c for the broadcasts the HVX path
 * does not take), the vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work
 * items in this thread. Every buffer starts zeroed.
 * stdin: int32 ncases; per case int32 op (0 EQUAL, 1 NOT_EQUAL, 2 LESS, 3 LESS_EQUAL, 4 GREATER, 5 GREATER_EQUAL),
 * int32 a_shape[4], b_shape[4]; float a_min, a_max, b_min, b_max; the a codes, the b codes.
 * stdout: per case int32 status, float 0, 0, int32 shape[4] (zeros unless the status is 0), then the codes. */
#include "harness_flat.h"

static struct nn_node_ops *const HX_OPS[6] = {
	&nn_ops_for_QuantizedEqual_8, &nn_ops_for_QuantizedNotEqual_8, &nn_ops_for_QuantizedLess_8,
	&nn_ops_for_QuantizedLessEqual_8, &nn_ops_for_QuantizedGreater_8, &nn_ops_for_QuantizedGreaterEqual_8};

static void one_case(void) {
	int32_t hd[9]; float fl[4];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("compare: short header", 2);
	const int32_t *sa = &hd[1], *sb = &hd[5];
	uint32_t na = (uint32_t)sa[0] * sa[1] * sa[2] * sa[3], nb = (uint32_t)sb[0] * sb[1] * sb[2] * sb[3];
	uint8_t *a = hx_read_zero_tail("compare", na), *b = hx_read_zero_tail("compare", nb);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, 1u << 20); nn.scratch_size = 1u << 20; memset(nn.scratch, 0, 1u << 20);
	struct tensor t[6], o;
	static const int32_t one[4] = {1, 1, 1, 1};
	hx_plain(&t[0], sa, a, 1, NN_TYPE_QUINT8);
	hx_plain(&t[1], sb, b, 1, NN_TYPE_QUINT8);
	for (int i = 0; i < 4; i++) hx_plain(&t[2 + i], one, &fl[i], 4, NN_TYPE_FLOAT);
	uint32_t nout = 1;
	for (int k = 0; k < 4; k++) nout *= (uint32_t)(sa[k] > sb[k] ? sa[k] : sb[k]);
	memset(&o, 0, sizeof o);
	o.data = memalign(128, nout + 256); o.max_size = nout + 256; memset(o.data, 0, nout + 256);
	const struct tensor *ins[6]; struct tensor *outs[1] = {&o};
	for (int i = 0; i < 6; i++) ins[i] = &t[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = HX_OPS[hd[0]]; node.inputs = ins; node.outputs = outs; node.n_inputs = 6; node.n_outputs = 1;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	int32_t sh[4] = {0, 0, 0, 0};
	if (!st) { sh[0] = o.shape.batches; sh[1] = o.shape.height; sh[2] = o.shape.width; sh[3] = o.shape.depth; }
	float res[2] = {0.0f, 0.0f};
	rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
	if (!st) rt_write_all(1, o.data, (uint32_t)sh[0] * sh[1] * sh[2] * sh[3]);
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("compare: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
