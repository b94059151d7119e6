/* hexnn-import harness (ours) for QuantizedSoftmax_8's large-depth path (op_softmax_d32.c softmax_flat_execute ->
 * softmax_larged_flat_exec, depth >= 1408 and >= 5632 bytes), run whole as harness_softmax.c runs the op. That
 * path builds its table with libm's expf / expm1f, which the Hexagon toolchain's libm gives and which are not
 * here: each case brings the values to use (its exact float32 arguments and results, correctly rounded, made by
 * tools/hvx/op_softmax_larged.py); an argument not in the list stops the run. So the run checks every step of the
 * path but the libm's own last bits.
 * stdin: int32 ncases; per case int32 shape[4], int32 n_inputs (3 or 4), float in_min, in_max, beta, the codes,
 * int32 npairs, then npairs of (int32 kind: 0 expf / 1 expm1f, uint32 argument bits, uint32 result bits).
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes. */
#include "harness_io.h"

static int32_t hx_npairs;
static uint32_t hx_pairs[512][3];

static float hx_libm(uint32_t kind, float x) {
	union { float f; uint32_t u; } in = {x}, out;
	for (int i = 0; i < hx_npairs; i++)
		if (hx_pairs[i][0] == kind && hx_pairs[i][1] == in.u) { out.u = hx_pairs[i][2]; return out.f; }
	rt_fail("softmax_larged: a libm argument the case did not bring", 6);
}
float expf(float x) { return hx_libm(0, x); }
float expm1f(float x) { return hx_libm(1, x); }

static void hx_read_libm(void) {
	if (rt_read_all(0, &hx_npairs, 4) || hx_npairs > 512 || rt_read_all(0, hx_pairs, 12 * hx_npairs))
		rt_fail("softmax_larged: bad libm table", 2);
}

#define HX_NAME "softmax_larged"
#define HX_READ_MORE hx_read_libm
#include "harness_softmax.c"
