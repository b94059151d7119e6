/* HAND-WRITTEN (not nnlib code) for the addsub harness rows.
 *
 * 1. Scalar models of the two HVX-only helpers of ops/src/op_minimum_maximum.c, per element, from the
 *    HVX intrinsic semantics (Hexagon V6x PRM):
 *    - requantize_to_outrange (via hvx_inlines.h jointly_quantize, SHIFT = 12):
 *        in_step / in_zero and out_step / out_zero from get_qu8_level_size_zero;
 *        mult = round(4096.0f * (in_step / out_step)) (C round() on the float product; a double->int
 *        conversion saturates on Hexagon), used as the low 16 bits, UNSIGNED (Q6_Ww_vmpy_VhVuh);
 *        d = x - in_zero (Q6_Wh_vsub_VubVub, 16-bit); p = d * mult (32-bit);
 *        s = sat16((p + 2048) >> 12) (Q6_Vh_vasr_VwVwR_rnd_sat); j = sat16(s + out_zero) (vadd_sat);
 *        out = usat8(j) (Q6_Vub_vpack_VhVh_sat).
 *    - qminmax_hvx: elementwise vmin/vmax of unsigned bytes. An operand whose broadcast value
 *      (x_const_value) is non-zero is that constant; one whose constant is 0 is read from its buffer
 *      (for a scalar operand that buffer is nn->scratch, never written: on the device it holds whatever
 *      the scratch holds; the runner below zero-fills its scratch first, which gives the constant 0).
 * 2. Stand-ins for helpers the shim lacks (vmemcpy_asm = memcpy, nn_memalign/nn_free = posix_memalign/free).
 * 3. hx_addsub_run: a copy of the harness's generic runner (glue/common.c hx_generic) with its own
 *    128-aligned scratch, zero-filled before each call. */
#include <nn_broadcast.h>
static inline void vmemcpy_asm(void *d, const void *s, int n) { memcpy(d, s, n); }
static inline void *nn_memalign(size_t a, size_t n) { void *p; return posix_memalign(&p, a, n) ? NULL : p; }
static inline void nn_free(void *p) { free(p); }

static void qminmax_hvx(uint8_t *a, uint8_t *b, uint8_t *out, int32_t elem, int32_t a_const_value,
                        int32_t b_const_value, int op);
static void requantize_to_outrange(float in_min, float in_max, float out_min, float out_max,
                                   const uint8_t *in_data, uint8_t *requant_data, uint32_t in_size);
/*SPLIT*/
static void qminmax_hvx(uint8_t *a, uint8_t *b, uint8_t *out, int32_t elem, int32_t a_const_value,
                        int32_t b_const_value, int op) {
	for (int32_t i = 0; i < elem; i++) {
		int x = a_const_value != 0 ? a_const_value : a[i];
		int y = b_const_value != 0 ? b_const_value : b[i];
		out[i] = (uint8_t)(op == 0 ? (x < y ? x : y) : (x > y ? x : y));   /* MINIMUM = 0 */
	}
}
static int32_t hx_sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }
static void requantize_to_outrange(float in_min, float in_max, float out_min, float out_max,
                                   const uint8_t *in_data, uint8_t *requant_data, uint32_t in_size) {
	float in_step, out_step;
	int in_zero = get_qu8_level_size_zero(in_min, in_max, &in_step);
	int out_zero = get_qu8_level_size_zero(out_min, out_max, &out_step);
	double r = round((float)4096.0f * (in_step / out_step));
	int32_t mult = r != r ? -1 : r >= 2147483647.0 ? INT32_MAX : r <= -2147483648.0 ? INT32_MIN : (int32_t)r;
	uint32_t m16 = (uint32_t)mult & 0xffff;
	for (uint32_t i = 0; i < in_size; i++) {
		int32_t d = (int32_t)in_data[i] - in_zero;
		int32_t s = hx_sat16((int32_t)(((int64_t)d * m16 + 2048) >> 12));
		int32_t j = hx_sat16(s + out_zero);
		requant_data[i] = (uint8_t)(j < 0 ? 0 : j > 255 ? 255 : j);
	}
}
static char *hx_as_scratch;
int hx_addsub_run(hx_exec_fn f, int n_in, struct hx_td *ins, int n_out, struct hx_td *outs, void *opaque) {
	const size_t sz = 16u << 20;
	struct tensor ti[16], to[4]; const struct tensor *pi[16]; struct tensor *po[4];
	if (n_in > 16 || n_out > 4) return -99;
	if (!hx_as_scratch && posix_memalign((void **)&hx_as_scratch, 128, sz)) return -98;
	memset(hx_as_scratch, 0, sz);
	for (int k = 0; k < n_in; k++) { ti[k] = hx_t(ins[k].data, ins[k].b, ins[k].h, ins[k].w, ins[k].d, ins[k].max_size);
		ti[k].data_size = ins[k].data_size; pi[k] = &ti[k]; }
	for (int k = 0; k < n_out; k++) { to[k] = hx_t(outs[k].data, outs[k].b, outs[k].h, outs[k].w, outs[k].d, outs[k].max_size);
		to[k].data_size = 0; po[k] = &to[k]; }
	struct nn_graph nn; memset(&nn, 0, sizeof nn); nn.scratch = hx_as_scratch; nn.scratch_size = sz;
	struct nn_node node; memset(&node, 0, sizeof node);
	node.inputs = pi; node.outputs = po; node.n_inputs = n_in; node.n_outputs = n_out; node.opaque = opaque;
	int r = f(&node, &nn);
	for (int k = 0; k < n_out; k++) { outs[k].b = to[k].shape.batches; outs[k].h = to[k].shape.height;
		outs[k].w = to[k].shape.width; outs[k].d = to[k].shape.depth; outs[k].data_size = to[k].data_size; }
	return r;
}
