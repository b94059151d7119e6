/* hexnn-import harness (ours) for QuantizedPad_8_d32 as nnlib registers it (op_pad_d32.c: .check = pad_d32_check,
 * .execute = pad_d32_execute), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the memcpy manager's work in this thread. The d32 input has the default padding
 * (harness_d32.h, padding bytes 0); the output tensor has osize bytes and is shaped as the op makes it.
 * One node per case: check() once, then execute() nruns times; a later run changes the range and pad value (the
 * node keeps its strategy and redoes only its scaling).
 * stdin: int32 ncases; per case int32 b, h, w, d, n_inputs (4-6), rows (the pads tensor's width n), nruns, osize,
 * pads_depth (the pads tensor's depth, 2), flag (input 5); int32 pads[2 * rows]; per run float in_min, in_max,
 * pad value; the codes (b*h*w*d).
 * stdout: per run int32 status (2: check failed), float out_min, out_max, int32 shape[4], then the codes read from
 * the d32 output (none when the status is not 0).
 * harness_pad_u16_d32.c defines HX_CODE and the names below for QuantizedPad_u16_d32 and includes this file. */
#ifndef HX_CODE
#include "harness_d32.h"
#define HX_CODE uint8_t                  /* one code */
#define HX_D32_IN hx_d32_in              /* harness_d32.h's input layout and result record */
#define HX_WRITE_D32 hx_write_d32_result
#define HX_PAD_OPS nn_ops_for_QuantizedPad_8_d32
#define HX_PAD_TYPE OP_QuantizedPad_8_d32
#define HX_NAME "pad_d32"
#endif

#define HX_SCRATCH_BYTES (1u << 20)
#define HX_MAX_RUNS 2

/* the graph's destructor of a node with an opaque block (newnode.c): the harness frees nothing */
int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

/* libc memcmp (the freestanding runtime has none; pad32_check_strategy compares the input tensor and pads with it) */
int memcmp(const void *a, const void *b, size_t n) {
	const unsigned char *p = a, *q = b;
	for (size_t i = 0; i < n; i++) if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
	return 0;
}

static void hx_plain(struct tensor *t, void *data, uint32_t type, int width, int depth) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = 1; t->shape.width = width; t->shape.depth = depth;
	t->data = data; t->data_size = t->max_size = 4u * width * depth;
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void one_case(void) {
	int32_t hd[10];
	if (rt_read_all(0, hd, sizeof hd)) rt_fail("pad_d32: short header", 2);
	int n_in = hd[4], rows = hd[5], nruns = hd[6], pdepth = hd[8];
	if (n_in < 4 || n_in > 6 || rows < 1 || rows > 8 || nruns < 1 || nruns > HX_MAX_RUNS || pdepth < 1 || pdepth > 2)
		rt_fail("pad_d32: bad header", 2);
	int32_t *pads = memalign(128, 4 * 2 * rows + 128), flag = hd[9];
	float fl[3 * HX_MAX_RUNS];
	if (rt_read_all(0, pads, 4 * 2 * rows) || rt_read_all(0, fl, 12 * nruns)) rt_fail("pad_d32: short pads", 2);
	size_t n = (size_t)hd[0] * hd[1] * hd[2] * hd[3];
	HX_CODE *x = memalign(128, sizeof(HX_CODE) * n + 128);
	if (rt_read_all(0, x, sizeof(HX_CODE) * n)) rt_fail(HX_NAME ": short data", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	float rng[3];
	struct tensor t[6], o[3];
	HX_D32_IN(&t[0], hd[0], hd[1], hd[2], hd[3], x);
	hx_plain(&t[1], &rng[0], NN_TYPE_FLOAT, 1, 1); hx_plain(&t[2], &rng[1], NN_TYPE_FLOAT, 1, 1);
	hx_plain(&t[3], pads, NN_TYPE_INT32, rows, pdepth);
	t[3].data_size = t[3].max_size = 4u * 2 * rows;   /* all the values sent, whatever the declared depth */
	hx_plain(&t[4], &rng[2], NN_TYPE_FLOAT, 1, 1); hx_plain(&t[5], &flag, NN_TYPE_INT32, 1, 1);
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, (uint32_t)hd[7]); o[0].max_size = (uint32_t)hd[7];
	hx_plain(&o[1], &omin, NN_TYPE_FLOAT, 1, 1); hx_plain(&o[2], &omax, NN_TYPE_FLOAT, 1, 1);
	const struct tensor *ins[6] = {&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = sizeof(HX_CODE);
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &HX_PAD_OPS; node.node_type = HX_PAD_TYPE;
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = n_in; node.n_outputs = 3;
	int32_t chk = node.ops->check(&node, &nn) != 0;
	for (int r = 0; r < nruns; r++) {
		rng[0] = fl[3 * r]; rng[1] = fl[3 * r + 1]; rng[2] = fl[3 * r + 2];
		omin = omax = 0.0f;
		int32_t st = chk ? 2 : node.ops->execute(&node, &nn) != 0;
		HX_WRITE_D32(st, omin, omax, &o[0]);
	}
}

int main(void) { return hx_run_cases(HX_NAME, one_case); }
