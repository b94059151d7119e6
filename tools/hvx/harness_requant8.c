/* hexnn-import harness (ours) for Requantize_8to8 and Requantize_8to8_d32 as nnlib registers them (op_requantize.c,
 * execute only: requantize_8to8_execute / requantize_8to8_execute_d32, each through launcher(): the output range
 * checked by quantize_adjust_range, gain and offsets, then src/quantize.c's HVX nn_requantize_qu8_to_qu8_hvx /
 * _hvx_d32 in work items), the whole vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c
 * runs the work items in this thread. Buffers start filled with a fixed byte (harness_flat.h); the d32 input has
 * the default padding (harness_d32.h, bytes 0).
 * stdin: int32 ncases; per case int32 op (0 flat, 1 d32), b, h, w, d; float in_min, in_max, out_min, out_max; the
 * codes (b*h*w*d).
 * stdout: per case harness_flat.h's record (flat) or harness_d32.h's (d32), with the output range. */
#include "harness_d32.h"
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 20)

static void one_case(void) {
	int32_t hd[5]; float fl[4];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("requant8", ": short header", 2);
	int op = hd[0];
	if (op < 0 || op > 1) hx_fail("requant8", ": bad op", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t[5], o[3], din;
	float omin = 0.0f, omax = 0.0f;
	hx_flat_in("requant8", &t[0], hd + 1, NN_TYPE_QUINT8, 1);
	for (int i = 0; i < 4; i++) hx_flat_scalar(&t[1 + i], &fl[i], NN_TYPE_FLOAT);
	if (op == 1) {
		hx_d32_in(&din, hd[1], hd[2], hd[3], hd[4], t[0].data);
		t[0] = din;
		hx_flat_out(&o[0], din.max_size + 256);
	} else {
		hx_flat_out(&o[0], t[0].data_size + 128);
	}
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = op ? &nn_ops_for_Requantize_8to8_d32 : &nn_ops_for_Requantize_8to8;
	node.node_type = op ? OP_Requantize_8to8_d32 : OP_Requantize_8to8;
	node.inputs = ins; node.outputs = outs; node.n_inputs = 5; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	if (op) hx_write_d32_result(st, omin, omax, &o[0]);
	else hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("requant8", one_case); }
