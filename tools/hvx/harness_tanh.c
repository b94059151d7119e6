/* hexnn-import harness (ours) for QuantizedTanh_8, QuantizedSigmoid_8 and their _d32 forms as nnlib registers them
 * (op_tanh_d32.c: tanh_d32_check then tanh_d32_execute, the HVX table lookups on d32 or flat data), the whole vendor
 * file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work items in this thread.
 * Buffers start filled with a fixed byte (harness_flat.h); the d32 input has the default padding (bytes 0).
 * stdin: int32 ncases; per case int32 op (0 QuantizedTanh_8, 1 QuantizedSigmoid_8, 2 QuantizedTanh_8_d32,
 * 3 QuantizedSigmoid_8_d32), b, h, w, d; float in_min, in_max; the codes.
 * stdout: per case a d32-style record (harness_d32.h: status, range, shape, logical codes) for every op. */
#include "harness_d32.h"
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 20)

int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void one_case(void) {
	int32_t hd[5]; float fl[2];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("tanh", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 3) hx_fail("tanh", ": bad op", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t[3], o[3], din;
	float omin = 0.0f, omax = 0.0f;
	hx_flat_in("tanh", &t[0], hd + 1, NN_TYPE_QUINT8, 1);
	hx_flat_scalar(&t[1], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[2], &fl[1], NN_TYPE_FLOAT);
	uint32_t osize = (uint32_t)hd[1] * (hd[2] + 8) * (hd[3] + 8) * ((hd[4] + 31) & ~31) + 1024;
	hx_flat_out(&o[0], osize);
	if (op >= 2) {
		hx_d32_in(&din, hd[1], hd[2], hd[3], hd[4], t[0].data);
		t[0] = din;
		o[0].shape = din.shape;
	}
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[3] = {&t[0], &t[1], &t[2]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct output odefs[3]; memset(odefs, 0, sizeof odefs);
	odefs[0].rank = 4; odefs[0].elementsize = 1;
	for (int i = 0; i < 4; i++) odefs[0].max_sizes[i] = hd[1 + i];
	static const struct nn_node_ops *ops[4] = {&nn_ops_for_QuantizedTanh_8, &nn_ops_for_QuantizedSigmoid_8,
		&nn_ops_for_QuantizedTanh_8_d32, &nn_ops_for_QuantizedSigmoid_8_d32};
	static const int types[4] = {OP_QuantizedTanh_8, OP_QuantizedSigmoid_8, OP_QuantizedTanh_8_d32,
		OP_QuantizedSigmoid_8_d32};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)ops[op]; node.node_type = types[op];
	node.inputs = ins; node.outputs = outs; node.output_defs = odefs; node.n_inputs = 3; node.n_outputs = 3;
	int32_t st = node.ops->check(&node, &nn) != 0 ? 2 : node.ops->execute(&node, &nn) != 0;
	if (op >= 2) { hx_write_d32_result(st, omin, omax, &o[0]); return; }
	int32_t sh[4] = {0, 0, 0, 0};
	if (!st) { sh[0] = o[0].shape.batches; sh[1] = o[0].shape.height; sh[2] = o[0].shape.width; sh[3] = o[0].shape.depth; }
	float res[2] = {omin, omax};
	rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
	if (!st) rt_write_all(1, o[0].data, (long)sh[0] * sh[1] * sh[2] * sh[3]);
}

int main(void) { return hx_run_cases("tanh", one_case); }
