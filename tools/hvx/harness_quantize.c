/* hexnn-import harness (ours) for Quantize's device path, op_quantize.c quantize_execute_opt: #included after
 * adjust_minmax_for_zero (src/quantize.c) and find_scaling_for_hvx_quant (op_quantize.c), extracted
 * unedited, and linked with quantize_floats_to_8b_asm (hexagon/asm_src/autoquantize_h.S). The front lines
 * follow quantize_execute_opt: minmaxbuf = {-min_in, max_in}, find_scaling_for_hvx_quant (its error for
 * Inf / NaN ends), the asm over all elements, the output range qparms.minval / maxval. Buffers are 128-byte
 * aligned and padded, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 n, float min_in, max_in, n float32.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, n bytes of codes. */
#include "harness_io.h"

static void one_case(void) {
  int32_t n; float mm[2];
  if (rt_read_all(0, &n, 4) || rt_read_all(0, mm, sizeof mm)) rt_fail("quantize: short header", 2);
  int padded = ((n + 127) & ~127) + 128;
  float *in = rt_alloc(4 * padded, 128);
  uint8_t *out = rt_alloc(padded, 128);
  if (rt_read_all(0, in, 4L * n)) rt_fail("quantize: short data", 2);
  struct hvx_quant_parms qparms;
  float minmaxbuf[2] = {-mm[0], mm[1]};
  int32_t status = find_scaling_for_hvx_quant(minmaxbuf, &qparms) != 0;
  float res[2] = {0.0f, 0.0f};
  if (!status) {
    quantize_floats_to_8b_asm(in, out, n, qparms.min_offset, qparms.common_exp, qparms.scaling);
    res[0] = qparms.minval; res[1] = qparms.maxval;
  }
  rt_write_all(1, &status, 4);
  rt_write_all(1, res, sizeof res);
  if (!status) rt_write_all(1, out, n);
  rt_alloc_reset();
}

int main(void) {
  for (int32_t i = 0, ncases = hx_case_count("quantize"); i < ncases; i++) one_case();
  return 0;
}
