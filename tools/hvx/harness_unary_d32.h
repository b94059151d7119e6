/* hexnn-import harness framing (ours) for a one-input d32 op called as nnlib's graph calls a node: the d32 input
 * with the default padding (harness_d32.h, padding bytes 0), its range as two scalar tensors, the output tensor
 * shaped as node_alloc_common gives it from the output definition; graph_os_standin.c runs the work items in this
 * thread.
 * stdin: int32 ncases; per case int32 b, h, w, d; float in_min, in_max; the codes (b*h*w*d).
 * stdout: per case int32 status (2: check() refused), float out_min, out_max, int32 shape[4], then the codes read
 * from the d32 output (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (1u << 20)

static void hx_scalar(struct tensor *t, float *v) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = v; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = NN_TYPE_FLOAT;
}

/* One case of op ``ops`` (node type ``type``): its check() first when ``with_check`` (a refusal is status 2). */
static void hx_unary_d32_case(const char *name, const struct nn_node_ops *ops, int type, int with_check) {
	int32_t hd[4]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail(name, 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail(name, 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[3], o[3];
	hx_d32_in(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	hx_scalar(&t[1], &fl[0]); hx_scalar(&t[2], &fl[1]);
	uint32_t osize = (uint32_t)hd[0] * (hd[1] + 8) * (hd[2] + 8) * ((hd[3] + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	o[0].shape.batches = hd[0]; o[0].shape.height = hd[1]; o[0].shape.width = hd[2]; o[0].shape.depth = hd[3];
	hx_scalar(&o[1], &omin); hx_scalar(&o[2], &omax);
	const struct tensor *ins[3] = {&t[0], &t[1], &t[2]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	for (int i = 0; i < 4; i++) odefs[0].max_sizes[i] = hd[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)ops; node.node_type = type;
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = 3; node.n_outputs = 3;
	int32_t st = with_check && node.ops->check(&node, &nn) != 0 ? 2 : node.ops->execute(&node, &nn) != 0;
	hx_write_d32_result(st, omin, omax, &o[0]);
}
