/* HAND-WRITTEN MODEL (project code, not nnlib) of hvx_do_dequantize (hexagon/ops/src/op_quantize.c, HVX only),
 * element by element, following hvx_dequantize_64xh's intrinsics:
 *   d = in - qzero (Q6_Wh_vsub_VubVub, -255..255); a = |d| (Q6_Vh_vabs_Vh);
 *   prod = a * scale, scale = qstep's 24-bit mantissa with the hidden bit (vmpyie/vmpyio, fits 32 bits unsigned);
 *   c = clz(prod) (vcl0); prod <<= c; m = prod + 0x80 (32-bit wrap);
 *   exponent = (qstep's exponent field + 8) - c, +1 when bit 31 of m is clear (rounding carried out);
 *   result = sign(d) | exponent << 23 | ((m >> 8) & 0x7FFFFF); d == 0 gives +0.0 (exponent cleared).
 * The lane shuffles (vshuff/vdeal) only order the lanes; the vector tail beyond n is not written here. */
void hvx_do_dequantize(uint8_t const *inp, float *outp, int n, int qzero, float qstep)
{
	union { float f; uint32_t u; } uu = { qstep };
	uint32_t scale = (uu.u & 0x7FFFFF) | 0x800000;
	int base_exp = (int)((uu.u >> 23) & 0xFF) + 8;
	for (int i = 0; i < n; i++) {
		int d = (int)inp[i] - qzero;
		uint32_t a = (uint32_t)(d < 0 ? -d : d);
		union { uint32_t u; float f; } r;
		r.u = 0;
		if (a != 0) {
			uint32_t prod = a * scale;
			int c = __builtin_clz(prod);
			prod <<= c;
			uint32_t m = prod + 0x80u;
			int e = base_exp - c + ((m & 0x80000000u) ? 0 : 1);
			r.u = (d < 0 ? 0x80000000u : 0u) | ((uint32_t)e << 23) | ((m >> 8) & 0x7FFFFFu);
		}
		outp[i] = r.f;
	}
}
