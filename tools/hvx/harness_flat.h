/* hexnn-import (ours, no vendor arithmetic): what the golden harnesses of flat (NHWC, plain layout) ops share, for
 * harnesses built with nnlib's whole nn_graph.h (include_os/): plain input tensors whose buffers end with a tail
 * of a fixed byte (so any read past the data is the same on every run), scalar tensors, and the per-run record. */
#ifndef HVX_HARNESS_FLAT_H
#define HVX_HARNESS_FLAT_H
#include "harness_io.h"

#define HX_TAIL_BYTE 0x5a

/* A plain tensor of shape (b, h, w, d) and element type, over a fresh 128-aligned buffer holding the nbytes of
 * data read from stdin, then 256 bytes of HX_TAIL_BYTE. */
static void hx_flat_in(const char *who, struct tensor *t, const int32_t shp[4], uint32_t type, uint32_t elsize) {
	uint32_t n = (uint32_t)shp[0] * shp[1] * shp[2] * shp[3] * elsize;
	uint8_t *p = memalign(128, n + 256);
	memset(p, HX_TAIL_BYTE, n + 256);
	if (rt_read_all(0, p, n)) hx_fail(who, ": short data", 2);
	memset(t, 0, sizeof *t);
	t->shape.batches = shp[0]; t->shape.height = shp[1]; t->shape.width = shp[2]; t->shape.depth = shp[3];
	t->data = p; t->data_size = n; t->max_size = n;
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* A 1x1x1x1 tensor over one 4-byte value at v. */
static void hx_flat_scalar(struct tensor *t, void *v, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = t->shape.height = t->shape.width = t->shape.depth = 1;
	t->data = v; t->data_size = t->max_size = 4; t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* An output tensor with room for max_bytes, its buffer filled with HX_TAIL_BYTE (a byte the op leaves unset
 * shows as that byte, the same on every run). */
static void hx_flat_out(struct tensor *t, uint32_t max_bytes) {
	memset(t, 0, sizeof *t);
	t->data = memalign(128, max_bytes + 256); memset(t->data, HX_TAIL_BYTE, max_bytes + 256);
	t->max_size = max_bytes;
}

/* A plain tensor of shape (b, h, w, d) over data as it is (no copy): the input, scalar and range tensors of a
 * harness that reads its buffers with hx_read_zero_tail. */
static void hx_plain(struct tensor *t, const int32_t *sh, void *data, uint32_t elsize, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = sh[0]; t->shape.height = sh[1]; t->shape.width = sh[2]; t->shape.depth = sh[3];
	t->data = data; t->data_size = t->max_size = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3] * elsize;
	t->format.layout = NN_LAYOUT_PLAIN; t->format.type = type;
}

/* A fresh 128-aligned buffer of the next n bytes of stdin and a zeroed tail of 256 bytes (for HVX loops that read
 * and write whole vectors); without them, "<who>: short data" and exit 2. */
static void *hx_read_zero_tail(const char *who, size_t n) {
	void *p = memalign(128, n + 256);
	memset(p, 0, n + 256);
	if (n && rt_read_all(0, p, n)) hx_fail(who, ": short data", 2);
	return p;
}

/* One run's record: int32 status, float out_min, out_max, int32 shape[4] of ot (zeros unless status is 0), then
 * its data_size bytes. */
static void hx_write_flat_result(int32_t st, float omin, float omax, const struct tensor *ot) {
	int32_t sh[4] = {0, 0, 0, 0};
	if (!st) { sh[0] = ot->shape.batches; sh[1] = ot->shape.height; sh[2] = ot->shape.width; sh[3] = ot->shape.depth; }
	float res[2] = {omin, omax};
	rt_write_all(1, &st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, sh, sizeof sh);
	if (!st) rt_write_all(1, ot->data, ot->data_size);
}
#endif
