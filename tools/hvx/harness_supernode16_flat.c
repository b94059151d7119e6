/* hexnn-import harness (ours) for the flat Supernode_16x16p32to16 as nnlib registers it (op_supernode.c
 * nn_ops_for_Supernode_16x16p32to16: .check = supernode_check_ref, .execute = supernode_execute_ref), the whole
 * vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c stands in for the OS layer.
 * One node per case (12 inputs: plain quint16 data, quint16 weights [fh, fw, din, dout], their ranges, stride,
 * qint32 bias, its range, the output min / max; or 13, the 13th float channel scales [1,1,1,dout], which the
 * op's ops table lets through: no NN_IOCOUNT), its output shaped as a prepared graph's output definition gives
 * it: check() once, then execute() nruns times on the same input (the range a run settles on persists in the
 * node, as in a graph). Every buffer starts zeroed.
 * stdin: int32 ncases; per case int32 b, h, w, din, fh, fw, dout, sh, sw, padding (NN_PAD_*), nruns, n_inputs;
 * float in_min, in_max, f_min, f_max, b_min, b_max, out_min, out_max; the input codes (b*h*w*din uint16), the
 * weight codes (fh*fw*din*dout uint16), the bias (dout int32), with 13 inputs the channel scales (dout float).
 * stdout: per case int32 check status; per run int32 status, float out_min, out_max, int32 b, oh, ow, depth, then
 * the b*oh*ow*depth uint16 codes the op wrote (none when the status is not 0). The op sets its output's
 * data_size to the element count (op_supernode.c: out_size = out_elements), half the bytes it writes: the
 * harness reads the elements by shape. */
#include "hvxrt.h"

#define HX_SCRATCH_BYTES (8u << 20)

static void hx_flat(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = (uint32_t)b * h * w * d * tensor_type_size(type);
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void *hx_read(size_t n) {
	void *p = memalign(128, n + 128);
	memset(p, 0, n + 128);
	if (n && rt_read_all(0, p, n)) rt_fail("supernode16_flat: short data", 2);
	return p;
}

static void one_case(void) {
	int32_t hd[12]; float fl[8];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("supernode16_flat: short header", 2);
	int b = hd[0], h = hd[1], w = hd[2], din = hd[3], fh = hd[4], fw = hd[5], dout = hd[6], nruns = hd[10], n_in = hd[11];
	uint16_t *x = hx_read(2u * b * h * w * din);
	uint16_t *filt = hx_read(2u * fh * fw * din * dout);
	int32_t *bias = hx_read(4u * dout);
	float *cs = n_in == 13 ? hx_read(4u * dout) : NULL;
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, 0, HX_SCRATCH_BYTES);
	struct tensor t[13], o[3];
	hx_flat(&t[0], b, h, w, din, x, NN_TYPE_QUINT16);
	hx_flat(&t[1], fh, fw, din, dout, filt, NN_TYPE_QUINT16);
	for (int i = 0; i < 4; i++) hx_flat(&t[2 + i], 1, 1, 1, 1, &fl[i], NN_TYPE_FLOAT);
	int32_t stride_dummy = 0;
	hx_flat(&t[6], 1, hd[7], hd[8], 1, &stride_dummy, NN_TYPE_INT32);
	t[6].data_size = t[6].max_size = 4;
	hx_flat(&t[7], 1, 1, 1, dout, bias, NN_TYPE_INT32);
	for (int i = 0; i < 4; i++) hx_flat(&t[8 + i], 1, 1, 1, 1, &fl[4 + i], NN_TYPE_FLOAT);
	if (cs) hx_flat(&t[12], 1, 1, 1, dout, cs, NN_TYPE_FLOAT);
	int oh = nn_pad_compute_outsize(h, fh, hd[7], hd[9]), ow = nn_pad_compute_outsize(w, fw, hd[8], hd[9]);
	uint32_t osize = 2u * b * oh * ow * dout;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize + 256); o[0].max_size = osize; memset(o[0].data, 0, osize + 256);
	hx_flat(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT);
	hx_flat(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[13]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 13; i++) ins[i] = &t[i];
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].max_sizes[0] = b; odefs[0].max_sizes[1] = oh; odefs[0].max_sizes[2] = ow;
	odefs[0].max_sizes[3] = dout; odefs[0].elementsize = 2;
	o[0].shape.batches = b; o[0].shape.height = oh; o[0].shape.width = ow; o[0].shape.depth = dout;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_Supernode_16x16p32to16; node.node_type = OP_Supernode_16x16p32to16;
	node.padding = hd[9]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = n_in; node.n_outputs = 3;
	int32_t chk = node.ops->check(&node, &nn) != 0;
	rt_write_all(1, &chk, 4);
	for (int r = 0; r < nruns; r++) {
		int32_t st = chk ? 2 : node.ops->execute(&node, &nn) != 0;
		int32_t sh[4] = {0, 0, 0, 0};
		if (!st) { sh[0] = o[0].shape.batches; sh[1] = o[0].shape.height; sh[2] = o[0].shape.width; sh[3] = o[0].shape.depth; }
		float res[2] = {omin, omax};
		rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
		if (!st) rt_write_all(1, o[0].data, 2u * sh[0] * sh[1] * sh[2] * sh[3]);
	}
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("supernode16_flat: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
