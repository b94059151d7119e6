/* hexnn-import harness (ours) for Supernode_u16x16p32to16_d32 as nnlib registers it (op_supernode_16b.c
 * nn_ops_for_Supernode_u16x16p32to16_d32: .check = supernode_u16b_check, .execute = supernode_execute_16b_hvx), the
 * whole vendor file compiled unedited with nnlib's own nn_graph.h and the assembly it calls; graph_os_standin.c runs
 * the work items in this thread. One node per case (12 inputs: quint16 data in 16-bit d32 with the default padding,
 * quint16 weights [fh, fw, din, dout], qint32 bias), its output shaped as a prepared graph's output definition gives
 * it: check() once, then execute() nruns times on the same input. VTCM: 256 KiB of ordinary memory, or none.
 * stdin: int32 ncases; per case int32 b, h, w, din, fh, fw, dout, sh, sw, padding (NN_PAD_*), vtcm (0 / 1), nruns;
 * float in_min, in_max, f_min, f_max, b_min, b_max, out_min, out_max; the input codes (b*h*w*din uint16), the weight
 * codes (fh*fw*din*dout uint16), the bias (dout int32).
 * stdout: per case int32 check status; per run int32 status, float out_min, out_max, int32 b, oh, ow, depth, then the
 * uint16 codes read from the d32 output (none when the status is not 0). */
#include "harness_u16_d32.h"

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
	if (n && rt_read_all(0, p, n)) rt_fail("supernode_u16: short data", 2);
	return p;
}

static void one_case(void) {
	int32_t hd[12]; float fl[8];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail("supernode_u16: short header", 2);
	int b = hd[0], h = hd[1], w = hd[2], din = hd[3], fh = hd[4], fw = hd[5], dout = hd[6], nruns = hd[11];
	uint16_t *x = hx_read(2u * b * h * w * din);
	uint16_t *filt = hx_read(2u * fh * fw * din * dout);
	int32_t *bias = hx_read(4u * dout);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	if (hd[10]) { nn.vtcm_ptr = memalign(HX_VTCM_BYTES, HX_VTCM_BYTES); nn.vtcm_size = HX_VTCM_BYTES; }
	struct tensor t[12], o[3];
	hx_d32_in_u16(&t[0], b, h, w, din, x);
	{	/* room after the input: the kernels read whole vectors and prefetch rows past the tensor */
		uint8_t *big = memalign(128, t[0].max_size + 65536); memset(big, 0, t[0].max_size + 65536);
		memcpy(big, t[0].data, t[0].max_size); t[0].data = big; t[0].max_size += 65536;
	}
	hx_flat(&t[1], fh, fw, din, dout, filt, NN_TYPE_QUINT16);
	for (int i = 0; i < 4; i++) hx_flat(&t[2 + i], 1, 1, 1, 1, &fl[i], NN_TYPE_FLOAT);
	int32_t stride_dummy = 0;
	hx_flat(&t[6], 1, hd[7], hd[8], 1, &stride_dummy, NN_TYPE_INT32);
	t[6].data_size = t[6].max_size = 4;
	hx_flat(&t[7], 1, 1, 1, dout, bias, NN_TYPE_INT32);
	for (int i = 0; i < 4; i++) hx_flat(&t[8 + i], 1, 1, 1, 1, &fl[4 + i], NN_TYPE_FLOAT);
	int oh = nn_pad_compute_outsize(h, fh, hd[7], hd[9]), ow = nn_pad_compute_outsize(w, fw, hd[8], hd[9]);
	uint32_t osize = 4u * b * (oh + 8) * (ow + 8) * ((dout + 31) & ~31) + 65536;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	hx_flat(&o[1], 1, 1, 1, 1, &omin, NN_TYPE_FLOAT);
	hx_flat(&o[2], 1, 1, 1, 1, &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[12]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 12; i++) ins[i] = &t[i];
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].max_sizes[0] = b; odefs[0].max_sizes[1] = oh; odefs[0].max_sizes[2] = ow;
	odefs[0].max_sizes[3] = dout; odefs[0].elementsize = 2;
	o[0].shape.batches = b; o[0].shape.height = oh; o[0].shape.width = ow; o[0].shape.depth = dout;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_Supernode_u16x16p32to16_d32; node.node_type = OP_Supernode_u16x16p32to16_d32;
	node.padding = hd[9]; node.inputs = ins; node.outputs = outs; node.output_defs = odefs;
	node.n_inputs = 12; node.n_outputs = 3;
	int32_t chk = node.ops->check(&node, &nn) != 0;
	rt_write_all(1, &chk, 4);
	for (int r = 0; r < nruns; r++) {
		int32_t st = chk ? 2 : node.ops->execute(&node, &nn) != 0;
		hx_write_d32_result_u16(st, omin, omax, &o[0]);
	}
}

int main(void) { return hx_run_cases("supernode_u16", one_case); }
