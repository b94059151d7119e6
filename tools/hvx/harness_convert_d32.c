/* hexnn-import harness (ours) for Convert_to_d32 and Convert_from_d32 as nnlib registers them (op_convert_d32.c:
 * Convert_to_d32 execute only, its padding options; Convert_from_d32 check then execute, twice on its cached
 * plan), the whole vendor file compiled unedited with nnlib's own nn_graph.h; graph_os_standin.c runs the work
 * items in this thread. Every buffer handed to the device starts filled with a fixed byte (harness_flat.h).
 * stdin: int32 ncases; per case int32 op (0 to_d32, 1 from_d32), b, h, w, d, n_in (to_d32: 1-5),
 * opt[4] (to_d32: depth-before, width-left, min width-right, height; from_d32: the input's top, left, right,
 * depth-before paddings - bottom = top, depth-after to 32), then the codes (b*h*w*d, plain NHWC).
 * stdout: per case int32 status, int32 pads[6] (the d32 output's top, bottom, left, right, before, after; zeros
 * for from_d32), then harness_d32.h's record of a d32 output or harness_flat.h's record (to_d32 / from_d32);
 * from_d32 writes a second flat record: its second run. */
#include "harness_d32.h"
#include "harness_flat.h"

#define HX_SCRATCH_BYTES (1u << 20)

/* A QUINT8 d32 tensor of shape (b, h, w, d) holding codes, paddings as given (bottom = top; right, depth-after to
 * the alignment); padding bytes HX_TAIL_BYTE. */
static void hx_d32_in_pad(struct tensor *t, int b, int h, int w, int d, int top, int wl, int wr_min, int d0,
                          const uint8_t *codes) {
	int wr = (-(w + wl + wr_min)) & 3;
	wr += wr_min;
	int da = (-(d + d0)) & 31;
	uint32_t size = (uint32_t)b * (h + 2 * top) * (w + wl + wr) * (d0 + d + da);
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, HX_TAIL_BYTE, size + 256);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[0] = d0; t->format.depth_pad[1] = da; t->format.width_pad[0] = wl;
	t->format.width_pad[1] = wr; t->format.height_pad[0] = top; t->format.height_pad[1] = top;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT8;
	for (int n = 0; n < b; n++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) for (int c = 0; c < d; c++)
		*tensor_location_d32(t, n, y, x, c) = codes[(((size_t)n * h + y) * w + x) * d + c];
}

int node_free_common_release_opaque(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

static void one_case(void) {
	int32_t hd[10];
	if (rt_read_all(0, hd, sizeof hd)) hx_fail("convert_d32", ": short header", 2);
	int op = hd[0], b = hd[1], h = hd[2], w = hd[3], d = hd[4], n_in = hd[5];
	if (op < 0 || op > 1 || n_in < 1 || n_in > 5) hx_fail("convert_d32", ": bad header", 2);
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, HX_SCRATCH_BYTES); nn.scratch_size = HX_SCRATCH_BYTES;
	memset(nn.scratch, HX_TAIL_BYTE, HX_SCRATCH_BYTES);
	struct tensor t[5], o;
	hx_flat_in("convert_d32", &t[0], hd + 1, NN_TYPE_QUINT8, 1);
	for (int i = 0; i < 4; i++) hx_flat_scalar(&t[1 + i], &hd[6 + i], NN_TYPE_INT32);
	const struct tensor *ins[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
	struct tensor *outs[1] = {&o};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.inputs = ins; node.outputs = outs; node.n_outputs = 1;
	int32_t pads[6] = {0, 0, 0, 0, 0, 0};
	if (op == 0) {
		uint32_t osize = (uint32_t)b * (h + 2 * 16) * (w + 16) * ((d + 31) & ~31) + 1024;
		hx_flat_out(&o, osize);
		node.ops = &nn_ops_for_Convert_to_d32; node.node_type = OP_Convert_to_d32; node.n_inputs = n_in;
		int32_t st = node.ops->execute(&node, &nn) != 0;
		if (!st) {
			pads[0] = o.format.height_pad[0]; pads[1] = o.format.height_pad[1]; pads[2] = o.format.width_pad[0];
			pads[3] = o.format.width_pad[1]; pads[4] = o.format.depth_pad[0]; pads[5] = o.format.depth_pad[1];
		}
		rt_write_all(1, &st, 4); rt_write_all(1, pads, sizeof pads);
		hx_write_d32_result(st, 0.0f, 0.0f, &o);
		return;
	}
	struct tensor din;
	hx_d32_in_pad(&din, b, h, w, d, hd[6], hd[7], hd[8], hd[9], t[0].data);
	ins[0] = &din;
	hx_flat_out(&o, (uint32_t)b * h * w * d + 128);
	node.ops = &nn_ops_for_Convert_from_d32; node.node_type = OP_Convert_from_d32; node.n_inputs = 1;
	int32_t st = node.ops->check(&node, &nn) != 0 ? 2 : node.ops->execute(&node, &nn) != 0;
	rt_write_all(1, &st, 4); rt_write_all(1, pads, sizeof pads);
	hx_write_flat_result(st, 0.0f, 0.0f, &o);
	if (!st) { memset(o.data, HX_TAIL_BYTE, o.max_size); st = node.ops->execute(&node, &nn) != 0; }
	hx_write_flat_result(st, 0.0f, 0.0f, &o);
}

int main(void) { return hx_run_cases("convert_d32", one_case); }
