/* hexnn-import harness (ours) for QuantizedBiasAdd_32p32to32 and QuantizedChannelScale_32xf as nnlib registers them
 * (op_biasadd.c biasadd_32p32to32_execute: fast_roundf of the rescaled bias, Q6_P_vaddw_PP word adds;
 * op_channelscale.c channelscale_32xf_execute: roundf_i32 scales, Q6_P_mpy_RR / Q6_P_asrrnd_PI / Q6_R_sat_P; both
 * execute only), the whole vendor files compiled unedited with nnlib's own nn_graph.h. Buffers start filled with
 * a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 BiasAdd_32p32to32, 1 ChannelScale_32xf), b, h, w, d, k (the bias /
 * scale length); float in_min, in_max, bias_min, bias_max; the int32 data (b*h*w*d), then k int32 biases or k float
 * scales.
 * stdout: per case harness_flat.h's record (int32 data). */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 20)

static void one_case(void) {
	int32_t hd[6]; float fl[4];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("bias32", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 1 || hd[5] < 1) hx_fail("bias32", ": bad header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t[6], o[3];
	float omin = 0.0f, omax = 0.0f;
	int32_t kshape[4] = {1, 1, 1, hd[5]};
	hx_flat_in("bias32", &t[0], hd + 1, NN_TYPE_INT32, 4);
	hx_flat_in("bias32", &t[1], kshape, op ? NN_TYPE_FLOAT : NN_TYPE_INT32, 4);
	for (int i = 0; i < 4; i++) hx_flat_scalar(&t[2 + i], &fl[i], NN_TYPE_FLOAT);
	hx_flat_out(&o[0], t[0].data_size + 128);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[6] = {&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = op ? &nn_ops_for_QuantizedChannelScale_32xf : &nn_ops_for_QuantizedBiasAdd_32p32to32;
	node.node_type = op ? OP_QuantizedChannelScale_32xf : OP_QuantizedBiasAdd_32p32to32;
	node.inputs = ins; node.outputs = outs; node.n_inputs = op ? 4 : 6; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("bias32", one_case); }
