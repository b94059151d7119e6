/* hexnn-import (ours, no vendor arithmetic): the 16-bit form of harness_d32.h for the _u16_d32 ops, built with
 * nnlib's whole nn_graph.h (include_os/): a QUINT16 d32 input laid out as prepare.c's Convert_to_d32_16b lays it
 * out (op_convert_d32.c convert_to_d32_16b with its default inputs), and the per-run result record. */
#ifndef HVX_HARNESS_U16_D32_H
#define HVX_HARNESS_U16_D32_H
#include "harness_io.h"

/* A QUINT16 d32 tensor of shape (b, h, w, d) holding codes (plain NHWC): 4 columns of left padding, the width
 * rounded up to 4, 4 rows above and below, the depth rounded up to 32; the padding zero. */
static void hx_d32_in_u16(struct tensor *t, int b, int h, int w, int d, const uint16_t *codes) {
	int wl = 4, wr = (-(w + wl)) & 3, ht = 4, da = (-d) & 31;
	uint32_t size = 2u * b * (h + 2 * ht) * (w + wl + wr) * (d + da);
	memset(t, 0, sizeof *t);
	t->data = memalign(128, size + 256); memset(t->data, 0, size + 256);
	t->max_size = size + 256; t->data_size = size;
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->format.depth_pad[1] = da; t->format.width_pad[0] = wl; t->format.width_pad[1] = wr;
	t->format.height_pad[0] = ht; t->format.height_pad[1] = ht;
	t->format.layout = NN_LAYOUT_D32; t->format.type = NN_TYPE_QUINT16;
	for (int n = 0; n < b; n++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) for (int c = 0; c < d; c++)
		*(uint16_t *)tensor_location_16b_d32(t, n, y, x, c) = codes[(((size_t)n * h + y) * w + x) * d + c];
}

/* One run's record: int32 status, float out_min, out_max, int32 shape[4] of the 16-bit d32 output ot (zeros
 * unless status is 0), then its codes as plain NHWC uint16. */
static void hx_write_d32_result_u16(int32_t st, float omin, float omax, struct tensor *ot) {
	int32_t sh[4] = {0, 0, 0, 0};
	if (!st) { sh[0] = ot->shape.batches; sh[1] = ot->shape.height; sh[2] = ot->shape.width; sh[3] = ot->shape.depth; }
	float res[2] = {omin, omax};
	rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
	for (int n = 0; n < sh[0]; n++) for (int y = 0; y < sh[1]; y++) for (int x = 0; x < sh[2]; x++) {
		uint16_t row[4096];
		for (int c = 0; c < sh[3]; c++) row[c] = *(uint16_t *)tensor_location_16b_d32(ot, n, y, x, c);
		rt_write_all(1, row, 2 * sh[3]);
	}
}
#endif
