/* hexnn-import harness (ours) for the two fixed-point functions of QuantizedSoftmax_8's HVX loops, on every input:
 * op_softmax_d32.c's pow2_v65_poly (extracted unedited) on every 16-bit fraction, and hvx_mathops.h's
 * hvx_recip16_inline(d, 10) followed by the loops' Q6_Vh_vmpy_VhRh_s1_rnd_sat(., 0x10001 * (255 << 7)) on every
 * 16-bit d (the loops give it 0x4000..0x7fff).
 * stdin: int32 ncases (ignored: one fixed set). stdout: int16 pow2[65536], recip[65536], recip_mant[65536]. */
#include "harness_io.h"

int main(void) {
	(void)hx_case_count("softmax_lanes");
	for (int fn = 0; fn < 3; fn++) {
		for (int v = 0; v < 1024; v++) {
			HVX_Vector x, y;
			uint16_t *p = (uint16_t *)&x;
			for (int i = 0; i < 64; i++) p[i] = (uint16_t)(v * 64 + i);
			if (fn == 0) y = pow2_v65_poly(x);
			else {
				y = hvx_recip16_inline(x, 10);
				if (fn == 2) y = Q6_Vh_vmpy_VhRh_s1_rnd_sat(y, 0x10001 * (255 << 7));
			}
			rt_write_all(1, &y, 128);
		}
	}
	return 0;
}
