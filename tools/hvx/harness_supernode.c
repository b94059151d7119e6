/* hexnn-import harness (ours) for Supernode_8x8p32to8_d32 / Supernode_8x8p8to8_d32 as nnlib registers them
 * (op_supernode_new.c nn_ops_for_Supernode_8x8p32to8_d32: .check = supernode_check, .execute =
 * supernode_execute_hvx), the whole vendor file compiled unedited with nnlib's own nn_graph.h and the
 * assembly it calls; graph_os_standin.c runs the work items in this thread.
 * One node per case, its output tensor shaped (b, out height, out width, out depth) as a prepared graph's output
 * definition gives it: check() once, then execute() nruns times on the same input (the output range a run
 * finds persists in the node, as in a graph). The d32 input has the default padding (4 rows above / below,
 * 4 columns left, the width to a multiple of 4, depth to 32), its padding bytes 0.
 * VTCM: 256 KiB of ordinary memory (nn_os_vtcm_fake_acquire's size; a v66 cDSP has 256 KiB), or none.
 * Every buffer the harness hands the device starts zeroed (scratch, VTCM, the output tensor's), so a byte the device
 * never writes reads back as 0 on every recording: the depthwise node with a depth multiplier of 2 leaves parts of
 * its output unwritten (op_dwise.py), which a reused buffer showed as an earlier case's bytes.
 * stdin: int32 ncases; per case int32 b, h, w, din, fh, fw, dout, sh, sw, padding (NN_PAD_*), bias32,
 * n_inputs (12 / 13), vtcm (0 / 1), nruns; float in_min, in_max, f_min, f_max, b_min, b_max, out_min, out_max;
 * the input codes (b*h*w*din), the weight codes (fh*fw*din*dout), the bias (dout int32 or dout bytes padded to a
 * multiple of 4), with 13 inputs dout float channel scales.
 * The same harness runs DepthwiseSupernode_8x8p32to8_d32 / _8x8p8to8_d32 (op_dwise_snode_8bit.c) when the unit
 * defines HX_DWISE: the header's dout is then the depth multiplier (weights fh*fw*din*dmul), the bias and the
 * channel scales have din*dmul entries.
 * With HX_FLAT it runs the flat Supernode_8x8p32to8 / _8x8p8to8 (op_supernode.c): input and output plain.
 * stdout: per case int32 check status, use_v66 (-1 for the depthwise node); per run int32 status, float out_min,
 * out_max, int32 b, oh, ow, depth, then b*oh*ow*depth codes read from the d32 output (none when the status is not 0). */
#include "hvxrt.h"

#if defined(HX_FLAT)
#define HX_OPS32 nn_ops_for_Supernode_8x8p32to8
#define HX_OPS8 nn_ops_for_Supernode_8x8p8to8
#define HX_TYPE32 OP_Supernode_8x8p32to8
#define HX_TYPE8 OP_Supernode_8x8p8to8
#elif defined(HX_DWISE)
#define HX_OPS32 nn_ops_for_DepthwiseSupernode_8x8p32to8_d32
#define HX_OPS8 nn_ops_for_DepthwiseSupernode_8x8p8to8_d32
#define HX_TYPE32 OP_DepthwiseSupernode_8x8p32to8_d32
#define HX_TYPE8 OP_DepthwiseSupernode_8x8p8to8_d32
#else
#define HX_OPS32 nn_ops_for_Supernode_8x8p32to8_d32
#define HX_OPS8 nn_ops_for_Supernode_8x8p8to8_d32
#define HX_TYPE32 OP_Supernode_8x8p32to8_d32
#define HX_TYPE8 OP_Supernode_8x8p8to8_d32
#endif
#define HX_SCRATCH_BYTES (8u << 20)
#define HX_VTCM_BYTES (256u * 1024u)

static void hx_d32_in(struct tensor *t, int b, int h, int w, int d, const uint8_t *codes) {
	int wl = 4, wr = (-(w + wl)) & 3, ht = 4, da = (-d) & 31;
	int wt = w + wl + wr, hh = h + 2 * ht, dt = d + da;
	uint32_t size = (uint32_t)b * hh * wt * dt;
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, 0, size + 256);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[0] = 0; t->format.depth_pad[1] = da; t->format.width_pad[0] = wl; t->format.width_pad[1] = wr;
	t->format.height_pad[0] = ht; t->format.height_pad[1] = ht;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT8;
	for (int n = 0; n < b; n++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) for (int c = 0; c < d; c++)
		*tensor_location_d32(t, n, y, x, c) = codes[(((size_t)n * h + y) * w + x) * d + c];
}

static void hx_flat(struct tensor *t, int b, int h, int w, int d, void *data, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->data_size = t->max_size = (uint32_t)b * h * w * d * tensor_type_size(type);
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

static void *hx_read(size_t n) {
	void *p = memalign(128, n + 128);
	memset(p, 0, n + 128);
	if (n && rt_read_all(0, p, n)) rt_fail("supernode: short data", 2);
	return p;
}

static void one_case(void) {
	int32_t hd[14]; float fl[8];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("supernode: short header", 2);
	int b = hd[0], h = hd[1], w = hd[2], din = hd[3], fh = hd[4], fw = hd[5], dout = hd[6];
	int bias32 = hd[10], n_in = hd[11], nruns = hd[13];
#ifdef HX_DWISE
	int odepth = din * dout;
#else
	int odepth = dout;
#endif
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
#ifdef HX_FLAT
	hx_flat(&t[0], b, h, w, din, x, NN_TYPE_QUINT8);
#else
	hx_d32_in(&t[0], b, h, w, din, x);
#endif
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
#if defined(HX_DWISE) || defined(HX_FLAT)
	head[1] = -1;
#else
	head[1] = node.opaque ? ((struct supernode_info_new *)node.opaque)->use_v66 : -1;
#endif
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
#ifdef HX_FLAT
			memcpy(row, (uint8_t *)ot->data + (((size_t)n * sh[1] + y) * sh[2] + xx) * sh[3], sh[3]);
#else
			for (int c = 0; c < sh[3]; c++) row[c] = *tensor_location_d32(ot, n, y, xx, c);
#endif
			rt_write_all(1, row, sh[3]);
		}
	}
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("supernode: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
