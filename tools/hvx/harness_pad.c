/* hexnn-import harness (ours) for the flat pads as nnlib registers them (op_pad.c, execute only:
 * QuantizedPad_8 pad_q_execute, QuantizedPad_V2_8 pad_q_v2_execute, QuantizedPad_u16 pad_q16_execute, each
 * pad_generic_execute with its HVX edge fill: the memcpy manager's vmemset / 2-D copy and fill, asm vmemcpy_h /
 * vmemset_h / vmemcpy_2d_h / vmemset_2d_h), the whole vendor file compiled unedited with nnlib's own nn_graph.h;
 * graph_os_standin.c runs the work items in this thread. Input and output buffers as harness_flat.h lays them out
 * (the output's starts filled with a fixed byte).
 * stdin: int32 ncases; per case int32 op (0 QuantizedPad_8, 1 QuantizedPad_V2_8, 2 QuantizedPad_u16), b, h, w, d,
 * n_in (4-6), rows, pads_depth, flag (input 5 of QuantizedPad_8), qpad (V2's pad code), osize (output bytes);
 * float in_min, in_max, pad_value; int32 pads[rows * pads_depth]; the data (b*h*w*d codes of 1 or 2 bytes).
 * stdout: per case harness_flat.h's record. */
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 20)

static const struct nn_node_ops *hx_ops[3] = {&nn_ops_for_QuantizedPad_8, &nn_ops_for_QuantizedPad_V2_8,
	&nn_ops_for_QuantizedPad_u16};
static const int hx_types[3] = {OP_QuantizedPad_8, OP_QuantizedPad_V2_8, OP_QuantizedPad_u16};

static void one_case(void) {
	int32_t hd[11]; float fl[3];
	if (rt_read_all(0, hd, sizeof hd) || rt_read_all(0, fl, sizeof fl)) hx_fail("pad", ": short header", 2);
	int op = hd[0], n_in = hd[5], npads = hd[6] * hd[7];
	if (op < 0 || op > 2 || n_in < 4 || n_in > 6 || npads < 0 || npads > 32) hx_fail("pad", ": bad header", 2);
	int32_t *pads = memalign(128, 4 * 32 + 128);
	if (npads && rt_read_all(0, pads, 4 * npads)) hx_fail("pad", ": short pads", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, 0, HX_SCRATCH_BYTES);
	struct tensor t[6], o[3];
	float omin = 0.0f, omax = 0.0f;
	uint8_t qpad[4] = {(uint8_t)hd[9], 0, 0, 0};
	hx_flat_in("pad", &t[0], hd + 1, op == 2 ? NN_TYPE_QUINT16 : NN_TYPE_QUINT8, op == 2 ? 2 : 1);
	hx_flat_scalar(&t[1], &fl[0], NN_TYPE_FLOAT); hx_flat_scalar(&t[2], &fl[1], NN_TYPE_FLOAT);
	hx_flat_scalar(&t[3], pads, NN_TYPE_INT32);
	t[3].shape.width = hd[6]; t[3].shape.depth = hd[7]; t[3].data_size = t[3].max_size = 4 * npads;
	if (op == 1) hx_flat_scalar(&t[4], qpad, NN_TYPE_QUINT8);
	else hx_flat_scalar(&t[4], &fl[2], NN_TYPE_FLOAT);
	hx_flat_scalar(&t[5], &hd[8], NN_TYPE_INT32);
	hx_flat_out(&o[0], (uint32_t)hd[10]);
	hx_flat_scalar(&o[1], &omin, NN_TYPE_FLOAT); hx_flat_scalar(&o[2], &omax, NN_TYPE_FLOAT);
	const struct tensor *ins[6] = {&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]};
	struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = (struct nn_node_ops *)hx_ops[op]; node.node_type = hx_types[op];
	node.inputs = ins; node.outputs = outs; node.n_inputs = n_in; node.n_outputs = 3;
	int32_t st = node.ops->execute(&node, &nn) != 0;
	hx_write_flat_result(st, omin, omax, &o[0]);
}

int main(void) { return hx_run_cases("pad", one_case); }
