/* hexnn-import harness (ours) for QuantizedPadForConv_8_d32 as nnlib registers it (op_pad_d32.c: .check =
 * pad_d32_check, .execute = pad_d32_execute, is_padforconv), the whole vendor file compiled unedited with nnlib's own
 * nn_graph.h; graph_os_standin.c runs the memcpy manager's work in this thread. The d32 input has the default
 * padding (harness_d32.h, padding bytes 0); the weights tensor is only a shape (filt_height, filt_width = dims 0, 1),
 * the stride tensor's dims 1, 2 are the strides. One node per case: check() once, then execute() nruns times on
 * other ranges (the node keeps its strategy and redoes only its scaling).
 * stdin: int32 ncases; per case int32 b, h, w, d, filt h, filt w, stride h, w, padding (NN_PAD_*), osize, nruns;
 * per run float in_min, in_max; the codes (b*h*w*d).
 * stdout: per run int32 status (2: check failed), float out_min, out_max, int32 shape[4], then the codes read from
 * the d32 output (none when the status is not 0). */
#include "harness_d32.h"

#define HX_SCRATCH_BYTES (1u << 20)
#define HX_MAX_RUNS 2

/* the graph's destructor of a node with an opaque block (newnode.c): the harness frees nothing */
int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

/* libc memcmp (the freestanding runtime has none; pad32_check_strategy compares the input tensor with it) */
int memcmp(const void *a, const void *b, size_t n) {
	const unsigned char *p = a, *q = b;
	for (size_t i = 0; i < n; i++) if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
	return 0;
}

static void hx_shape(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void one_case(void) {
	int32_t hd[11];
	if (rt_read_all(0, hd, sizeof hd)) rt_fail("padforconv_d32: short header", 2);
	int nruns = hd[10];
	if (nruns < 1 || nruns > HX_MAX_RUNS) rt_fail("padforconv_d32: bad header", 2);
	float fl[2 * HX_MAX_RUNS];
	if (rt_read_all(0, fl, 8 * nruns)) rt_fail("padforconv_d32: short ranges", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	uint8_t *x = memalign(128, n + 128);
	if (rt_read_all(0, x, n)) rt_fail("padforconv_d32: short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	float rng[2];
	int32_t dummy[2] = {0, 0};
	struct tensor t[5], o[3];
	hx_d32_in(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	hx_shape(&t[1], 1, 1, 1, 1, &rng[0], NN_TYPE_FLOAT); hx_shape(&t[2], 1, 1, 1, 1, &rng[1], NN_TYPE_FLOAT);
	hx_shape(&t[3], hd[4], hd[5], hd[3], 1, &dummy[0], NN_TYPE_QUINT8);
	hx_shape(&t[4], 1, hd[6], hd[7], 1, &dummy[1], NN_TYPE_INT32);
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, (uint32_t)hd[9]); o[0].max_size = (uint32_t)hd[9];
	hx_shape(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT); hx_shape(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedPadForConv_8_d32; node.node_type = OP_QuantizedPadForConv_8_d32;
	node.padding = hd[8]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = 5; node.n_outputs = 3;
	int32_t chk = node.ops->check(&node, &nn) != 0;
	for (int r = 0; r < nruns; r++) {
		rng[0] = fl[2 * r]; rng[1] = fl[2 * r + 1];
		omin = omax = 0.0f;
		int32_t st = chk ? 2 : node.ops->execute(&node, &nn) != 0;
		hx_write_d32_result(st, omin, omax, &o[0]);
	}
}

int main(void) { return hx_run_cases("padforconv_d32", one_case); }
