/* hexnn-import harness (ours) for QuantizedPRelu_8_V2_d32 as nnlib registers it (op_prelu_v2_d32.c: .execute =
 * prelu_opt_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs
 * the work items in this thread. The node's opaque state starts empty, so execute prepares the alphas itself
 * (process_alphas), as after a check() that found no Const alphas; prelu_check_opt's graph lookup is not reached.
 * The d32 input has the default padding (harness_d32.h); the alphas are a flat [1,1,1,d] quint8 tensor.
 * stdin: int32 ncases; per case int32 b, h, w, d, n_range (0: 6 inputs, 1: out_min given, 2: both given);
 * float in_min, in_max, alpha_min, alpha_max, out_min, out_max; the codes (b*h*w*d); the alphas (d).
 * stdout: per case one hx_write_d32_result record. */
#include "harness_d32.h"

/* prelu_check_opt's lookup of the alphas' producer (src/graph_build.c): never called here. */
struct nn_node *find_node_must_be_Const_from_ref(struct nn_graph *nn, const struct input *ref) {
	(void)nn; (void)ref; rt_fail("prelu_v2_d32: find_node_must_be_Const_from_ref reached", 7);
}

static void hx_plain(struct tensor *t, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void one_case(void) {
	int32_t hd[5]; float fl[6];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("prelu_v2_d32: short header", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128), *al = memalign(128, hd[3] + 256);
	memset(al, 0, hd[3] + 256);
	if (rt_read_all(0, x, n) || rt_read_all(0, al, hd[3])) rt_fail("prelu_v2_d32: short data", 2);
	struct tensor t[8];
	hx_d32_in(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	for (int i = 0; i < 6; i++) hx_plain(&t[i < 2 ? i + 1 : i + 2], &fl[i], NN_TYPE_FLOAT);
	memset(&t[3], 0, sizeof t[3]);
	t[3].shape.batches = t[3].shape.height = t[3].shape.width = 1; t[3].shape.depth = hd[3];
	t[3].data = al; t[3].data_size = t[3].max_size = hd[3];
	t[3].format.layout = NN_LAYOUT_PLAIN; t[3].format.type = NN_TYPE_QUINT8;
	const struct tensor *ins[8];
	for (int i = 0; i < 8; i++) ins[i] = &t[i];
	uint32_t osize = t[0].data_size + 4096;
	struct tensor o[3]; float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	hx_plain(&o[1], &omin, NN_TYPE_FLOAT); hx_plain(&o[2], &omax, NN_TYPE_FLOAT);
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, 1 << 16); nn.scratch_size = 1 << 16;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedPRelu_8_V2_d32; node.node_type = OP_QuantizedPRelu_8_V2_d32;
	node.inputs = ins; node.outputs = outs; node.n_inputs = 6 + hd[4]; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("prelu_v2_d32", one_case); }
