/* hexnn-import harness (ours) for QuantizedRecip_8 as nnlib registers it (op_recip.c nn_ops_for_QuantizedRecip_8: .execute =
 * recip_execute: float32 under 256 elements, HVX min / max and a code table above), the vendor file compiled unedited with
 * nnlib's own nn_graph.h; graph_os_standin.c runs the work item in this thread. Input buffers are 128-aligned with a
 * zeroed tail of 256 bytes (the HVX loop reads whole vectors).
 * Each case runs three times, the stack below this frame first filled with 0x00, 0xFF or 0xC0 bytes and the output
 * range preset to 12345 / -12345 (not values the op writes): bytes that differ between the runs come from memory the
 * op never set (its table path leaves entries of its `inverses` array unwritten), and a range still at the preset
 * was never written.
 * stdin: int32 ncases; per case int32 shape[4]; float in_min, in_max; the codes.
 * stdout: per case int32 status, float out_min, out_max, int32 shape[4] (zeros unless the status is 0), codes (first
 * run), then one byte per code: 1 where the three runs agree. */
#include "harness_flat.h"

/* Fills 16 KiB of the stack below the caller's frame with `pat` (the frames of the next call land there). */
static void __attribute__((noinline)) hx_fill_stack(int pat) {
	uint8_t buf[16384];
	memset(buf, pat, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

struct hx_run { int32_t st; float omin, omax; int32_t osh[4]; uint8_t *codes; };

static void __attribute__((noinline)) hx_run(const int32_t *sh, uint8_t *x, float *fl, int pat, struct hx_run *r) {
	uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3];
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	nn.scratch = memalign(128, 1u << 16); nn.scratch_size = 1u << 16; memset(nn.scratch, 0, 1u << 16);
	static const int32_t one[4] = {1, 1, 1, 1};
	struct tensor t[3], o[3];
	hx_plain(&t[0], sh, x, 1, NN_TYPE_QUINT8);
	hx_plain(&t[1], one, &fl[0], 4, NN_TYPE_FLOAT);
	hx_plain(&t[2], one, &fl[1], 4, NN_TYPE_FLOAT);
	r->omin = 12345.0f; r->omax = -12345.0f;
	memset(o, 0, sizeof o);
	o[0].data = memalign(128, n + 256); o[0].max_size = n + 256; memset(o[0].data, 0, n + 256);
	hx_plain(&o[1], one, &r->omin, 4, NN_TYPE_FLOAT);
	hx_plain(&o[2], one, &r->omax, 4, NN_TYPE_FLOAT);
	const struct tensor *ins[3]; struct tensor *outs[3] = {&o[0], &o[1], &o[2]};
	for (int i = 0; i < 3; i++) ins[i] = &t[i];
	struct nn_node node; memset(&node, 0, sizeof node);
	node.ops = &nn_ops_for_QuantizedRecip_8; node.inputs = ins; node.outputs = outs; node.n_inputs = 3; node.n_outputs = 3;
	hx_fill_stack(pat);
	r->st = node.ops->execute(&node, &nn) != 0;
	memset(r->osh, 0, sizeof r->osh);
	if (!r->st) { r->osh[0] = o[0].shape.batches; r->osh[1] = o[0].shape.height; r->osh[2] = o[0].shape.width; r->osh[3] = o[0].shape.depth; }
	r->codes = o[0].data;
}

static void one_case(void) {
	int32_t sh[4]; float fl[2];
	if (rt_read_all(0, sh, sizeof sh) || rt_read_all(0, fl, sizeof fl)) rt_fail("recip: short header", 2);
	uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3];
	uint8_t *x = hx_read_zero_tail("recip", n);
	static const int pats[3] = {0x00, 0xFF, 0xC0};
	struct hx_run r[3];
	for (int k = 0; k < 3; k++) hx_run(sh, x, fl, pats[k], &r[k]);
	uint8_t *same = memalign(128, n + 1);
	for (uint32_t i = 0; i < n; i++) same[i] = r[0].codes[i] == r[1].codes[i] && r[0].codes[i] == r[2].codes[i];
	float res[2] = {r[0].omin, r[0].omax};
	rt_write_all(1, &r[0].st, 4); rt_write_all(1, res, sizeof res); rt_write_all(1, r[0].osh, sizeof r[0].osh);
	if (!r[0].st) { rt_write_all(1, r[0].codes, n); rt_write_all(1, same, n); }
}

int main(void) {
	int32_t ncases;
	if (rt_read_all(0, &ncases, 4)) rt_fail("recip: no case count", 2);
	for (int i = 0; i < ncases; i++) {
		one_case();
		rt_alloc_reset();
	}
	return 0;
}
