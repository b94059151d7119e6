/* hexnn-import harness (ours) for nnlib's Dequantize device path, op_quantize.c: it is #included after
 * hvx_dequantize_64xh / hvx_dequantize_128xb / hvx_do_dequantize, extracted unedited by hvx_build.py.
 * The front lines follow dequantize_execute (op_quantize.c) line for line: range, flt_div_255 step
 * (quantize.h), the infeasible-step error, the all-zero fill, qzero = saturate_u8(roundf_i32(-min/step));
 * then one hvx_do_dequantize over the whole buffer (its work-func chunks are multiples of 128 elements and
 * the conversion is element-wise, so the chunking does not change a value).
 * stdin: int32 ncases, then per case int32 n, float min, float max, n bytes of codes.
 * stdout: per case int32 status (0 ok, 1 infeasible step, 2 filled with zero), float step, int32 qzero,
 * n float32 values. */
#include "harness_io.h"

static void one_case(void) {
  int32_t hdr[3];
  if (rt_read_all(0, hdr, sizeof hdr)) rt_fail("dequantize: short header", 2);
  int n = hdr[0];
  float minval, maxval;
  memcpy(&minval, &hdr[1], 4); memcpy(&maxval, &hdr[2], 4);
  int padded = (n + 127) & ~127;
  uint8_t *in = rt_alloc(padded ? padded : 128, 128);
  float *out = rt_alloc(sizeof(float) * (padded ? padded : 128), 128);
  if (rt_read_all(0, in, n)) rt_fail("dequantize: short codes", 2);
  float range = fmaxf(1e-18f, maxval - minval);
  float stepsize = flt_div_255(range);
  int32_t res[3] = {0, 0, 0};
  memcpy(&res[1], &stepsize, 4);
  if (stepsize < 0.f || stepsize >= 0x2.0p120) {
    res[0] = 1;
  } else if (stepsize < 0x1.0p-126) {
    res[0] = 2;
    memset(out, 0, n * sizeof(float));
  } else {
    res[2] = saturate_u8(roundf_i32(-minval / stepsize));
    hvx_do_dequantize(in, out, n, res[2], stepsize);
  }
  rt_write_all(1, res, sizeof res);
  if (res[0] != 1) rt_write_all(1, out, n * (long)sizeof(float));
  rt_alloc_reset();
}

int main(void) {
  for (int32_t i = 0, ncases = hx_case_count("dequantize"); i < ncases; i++) one_case();
  return 0;
}
