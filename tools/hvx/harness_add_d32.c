/* hexnn-import harness (ours) for QuantizedAdd_8p8to8_d32 / QuantizedSub_8p8to8_d32 / QuantizedMul_8x8to8_d32 as
 * nnlib registers them (op_add_d32.c: .check = addsub_d32_check, .execute = addsub_d32_execute_common), the whole
 * vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread.
 * One node per case: check() once, then execute() nruns times on the same inputs (an auto output range persists in
 * the node). Both inputs are d32 with the default padding (as harness_supernode.c lays them out, padding bytes 0);
 * the output tensor is shaped as node_alloc_common gives it from the output definition (the broadcast shape).
 * stdin: int32 ncases; per case int32 op (0 add, 1 sub, 2 mul), shape A[4], shape B[4], n_inputs (6-8), nruns;
 * float a_min, a_max, b_min, b_max, out_min, out_max; the codes of A, then of B.
 * stdout: per case int32 check status; per run int32 status, float out_min, out_max, int32 shape[4], then the codes
 * read from the d32 output (none when the status is not 0).
 * harness_add_u16_d32.c defines HX_CODE and the names below for the _u16_d32 ops and includes this file;
 * harness_add_d32_seq.c defines HX_RANGES_PER_RUN: then each run after the first reads its four input range ends
 * (float a_min, a_max, b_min, b_max) from stdin first, into the same scalar tensors. */
#ifndef HX_CODE
#include "harness_d32.h"
#define HX_CODE uint8_t                  /* one code */
#define HX_D32_IN hx_d32_in              /* harness_d32.h's input layout and result record */
#define HX_WRITE_D32 hx_write_d32_result
#define HX_ADD_OPS {&nn_ops_for_QuantizedAdd_8p8to8_d32, &nn_ops_for_QuantizedSub_8p8to8_d32, \
                    &nn_ops_for_QuantizedMul_8x8to8_d32}
#define HX_ADD_TYPES {OP_QuantizedAdd_8p8to8_d32, OP_QuantizedSub_8p8to8_d32, OP_QuantizedMul_8x8to8_d32}
#define HX_NAME "add_d32"
#endif

#define HX_SCRATCH_BYTES (8u << 20)

static void hx_scalar(struct tensor *t, float *v) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = v; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = NN_TYPE_FLOAT;
}

static HX_CODE *hx_read(size_t n) {
	HX_CODE *p = memalign(128, sizeof(HX_CODE) * n + 128);
	if (n && rt_read_all(0, p, sizeof(HX_CODE) * n)) rt_fail(HX_NAME ": short data", 2);
	return p;
}

static void one_case(void) {
	int32_t hd[11]; float fl[6];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) rt_fail(HX_NAME ": short header", 2);
	const int32_t *sa = &hd[1], *sb = &hd[5];
	int n_in = hd[9], nruns = hd[10];
	HX_CODE *a = hx_read((size_t)sa[0] * sa[1] * sa[2] * sa[3]);
	HX_CODE *bb = hx_read((size_t)sb[0] * sb[1] * sb[2] * sb[3]);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	struct tensor t[8], o[3];
	HX_D32_IN(&t[0], sa[0], sa[1], sa[2], sa[3], a);
	HX_D32_IN(&t[1], sb[0], sb[1], sb[2], sb[3], bb);
	for (int i = 0; i < 6; i++) hx_scalar(&t[2 + i], &fl[i]);
	int32_t osh[4];
	for (int i = 0; i < 4; i++) osh[i] = sa[i] > sb[i] ? sa[i] : sb[i];
	uint32_t osize = (uint32_t)sizeof(HX_CODE) * osh[0] * (osh[1] + 8) * (osh[2] + 8) * ((osh[3] + 31) & ~31) + 1024;
	float omin = 0.0f, omax = 0.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, osize); o[0].max_size = osize;
	o[0].shape.batches = osh[0]; o[0].shape.height = osh[1]; o[0].shape.width = osh[2]; o[0].shape.depth = osh[3];
	hx_scalar(&o[1], &omin); hx_scalar(&o[2], &omax);
	const struct tensor *ins[8]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 8; i++) ins[i] = &t[i];
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = sizeof(HX_CODE);
	for (int i = 0; i < 4; i++) odefs[0].max_sizes[i] = osh[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	static struct nn_node_ops *const ops[3] = HX_ADD_OPS;
	static const uint32_t types[3] = HX_ADD_TYPES;
	node.ops = ops[hd[0]]; node.node_type = types[hd[0]];
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = n_in; node.n_outputs = 3;
	int32_t chk = node.ops->check(&node, &nn) != 0;
	rt_write_all(1, &chk, 4);
	for (int r = 0; r < nruns; r++) {
#ifdef HX_RANGES_PER_RUN
		if (r > 0 && rt_read_all(0, fl, 4 * sizeof(float))) rt_fail(HX_NAME ": short ranges", 2);
#endif
		int32_t st = chk ? 2 : node.ops->execute(&node, &nn) != 0;
		HX_WRITE_D32(st, omin, omax, &o[0]);
	}
}

int main(void) { return hx_run_cases(HX_NAME, one_case); }
