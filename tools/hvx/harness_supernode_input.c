/* hexnn-import harness (ours) for InputSupernode_8x8p32to8_outd32 / InputSupernode_8x8p8to8_outd32 as nnlib registers
 * them (op_supernode_new.c nn_ops_for_InputSupernode_8x8p32to8_outd32: .check = shortin_supernode_check, .execute =
 * shortin_supernode_execute_call), the whole vendor file compiled unedited with nnlib's own nn_graph.h and the
 * assembly it calls; graph_os_standin.c runs the work items in this thread. harness_supernode.c's records and case
 * layout (its header comment), with the input plain (depth 1-4, the graph's input) and the output d32: one node per
 * case, check() once, then execute() nruns times on the same input (the range a run settles on persists).
 * Every buffer the harness hands the device starts zeroed. stdout: per case int32 check status, -1; per run int32
 * status, float out_min, out_max, int32 b, oh, ow, depth, then the codes read from the d32 output. */
#include "hvxrt.h"

#define HX_OPS32 nn_ops_for_InputSupernode_8x8p32to8_outd32
#define HX_OPS8 nn_ops_for_InputSupernode_8x8p8to8_outd32
#define HX_TYPE32 OP_InputSupernode_8x8p32to8_outd32
#define HX_TYPE8 OP_InputSupernode_8x8p8to8_outd32
#define HX_SCRATCH_BYTES (8u << 20)
#define HX_VTCM_BYTES (256u * 1024u)

static void hx_flat(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = (uint32_t)b * h * w * d * tensor_type_size(type);
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void *hx_read(size_t n) {
	void *p = memalign(128, n + 128);
	memset(p, 0, n + 128);
	if (n && rt_read_all(0, p, n)) rt_fail("supernode_input: short data", 2);
	return p;
}

static void one_case(void) {
	int32_t hd[14]; float fl[8];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("supernode_input: short header", 2);
	int b = hd[0], h = hd[1], w = hd[2], din = hd[3], fh = hd[4], fw = hd[5], dout = hd[6];
	int bias32 = hd[10], n_in = hd[11], nruns = hd[13];
	int odepth = dout;
	uint8_t *x = hx_read((size_t)b * h * w * din);
	uint8_t *filt = hx_read((size_t)fh * fw * din * dout);
	void *bias = hx_read(bias32 ? 4u * odepth : (size_t)((odepth + 3) & ~3));
	float *cs = n_in == 13 ? hx_read(4u * odepth) : NULL;
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, 0, HX_SCRATCH_BYTES);
	if (hd[12]) {
		nn.vtcm_ptr = memalign(HX_VTCM_BYTES, HX_VTCM_BYTES); nn.vtcm_size = HX_VTCM_BYTES;
		memset(nn.vtcm_ptr, 0, HX_VTCM_BYTES);
	}
	struct tensor t[13], o[3];
	hx_flat(&t[0], b, h, w, din, x, NN_TYPE_QUINT8);
	hx_flat(&t[1], fh, fw, din, dout, filt, NN_TYPE_QUINT8);
	for (int i = 0; i < 4; i++) hx_flat(&t[2 + i], 1, 1, 1, 1, &fl[i], NN_TYPE_FLOAT);
	int32_t stride_dummy = 0;
	hx_flat(&t[6], 1, hd[7], hd[8], 1, &stride_dummy, NN_TYPE_INT32);
	t[6].data_size = t[6].max_size = 4;
	hx_flat(&t[7], 1, 1, 1, odepth, bias, bias32 ? NN_TYPE_INT32 : NN_TYPE_QUINT8);
	for (int i = 0; i < 4; i++) hx_flat(&t[8 + i], 1, 1, 1, 1, &fl[4 + i], NN_TYPE_FLOAT);
	if (cs) hx_flat(&t[12], 1, 1, 1, odepth, cs, NN_TYPE_FLOAT);
	int oh_max = nn_pad_compute_outsize(h, fh, hd[7], hd[9]), ow_max = nn_pad_compute_outsize(w, fw, hd[8], hd[9]);
	uint32_t osize = (uint32_t)b * (oh_max + 8) * (ow_max + 8) * ((odepth + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize; memset(o[0].data, 0, osize);
	hx_flat(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT);
	hx_flat(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[13]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 13; i++) ins[i] = &t[i];
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].max_sizes[0] = b; odefs[0].max_sizes[1] = oh_max; odefs[0].max_sizes[2] = ow_max;
	odefs[0].max_sizes[3] = odepth; odefs[0].elementsize = 1;
	/* the output tensor's shape as node_alloc_common (src/newnode.c) gives it from the output definition */
	o[0].shape.batches = b; o[0].shape.height = oh_max; o[0].shape.width = ow_max; o[0].shape.depth = odepth;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = bias32 ? &HX_OPS32 : &HX_OPS8;
	node.node_type = bias32 ? HX_TYPE32 : HX_TYPE8;
	node.padding = hd[9]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = n_in; node.n_outputs = 3;
	int32_t head[2];
	head[0] = node.ops->check(&node, &nn) != 0;
	head[1] = -1;
	rt_write_all(1, head, sizeof head);
	for (int r = 0; r < nruns; r++) {
		int32_t st = head[0] ? 2 : node.ops->execute(&node, &nn) != 0;
		struct tensor *ot = &o[0];
		int32_t sh[4] = {0, 0, 0, 0};
		if (!st) { sh[0] = ot->shape.batches; sh[1] = ot->shape.height; sh[2] = ot->shape.width; sh[3] = ot->shape.depth; }
		float res[2] = {omin, omax};
		rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
		for (int n = 0; n < sh[0]; n++) for (int y = 0; y < sh[1]; y++) for (int xx = 0; xx < sh[2]; xx++) {
			uint8_t row[4096];
			for (int c = 0; c < sh[3]; c++) row[c] = *tensor_location_d32(ot, n, y, xx, c);
			rt_write_all(1, row, sh[3]);
		}
	}
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("supernode_input: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
