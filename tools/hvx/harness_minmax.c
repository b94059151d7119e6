/* hexnn-import harness (ours) for QuantizedMaximum_8 / QuantizedMinimum_8's device path on same-shape operands,
 * op_minimum_maximum.c: #included after requantize_to_outrange (HVX jointly_quantize, hvx_inlines.h) and
 * qminmax_hvx, extracted unedited. The front lines follow minmax_execute (output range from 6, 7 or 8
 * inputs; the "output min >= output max" error) and qminmax_thread_process (an operand whose range differs
 * from the output range is requantized onto it); same shapes make check_prepare_hvx_opt pass both buffers
 * through with no constants, so qminmax_hvx(a, b, out, n, 0, 0, op) follows.
 * stdin: int32 ncases; per case int32 op (0 MINIMUM, 1 MAXIMUM), int32 n_inputs (6..8), int32 n,
 * float a_min, a_max, b_min, b_max, out_min, out_max (the last two used as n_inputs says), n bytes a, n bytes b.
 * stdout: per case int32 status (0 ok, 1 the C's range error), float out_min, out_max, n bytes of codes. */
#include "harness_io.h"

static void one_case(void) {
  int32_t hdr[3]; float f[6];
  if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, f, sizeof f)) rt_fail("minmax: short header", 2);
  int op = hdr[0] ? MAXIMUM : MINIMUM, n_inputs = hdr[1], n = hdr[2];
  int padded = ((n + 127) & ~127) + 128;
  uint8_t *a = rt_alloc(padded, 128), *b = rt_alloc(padded, 128), *out = rt_alloc(padded, 128);
  uint8_t *ar = rt_alloc(padded, 128), *br = rt_alloc(padded, 128);
  if (rt_read_all(0, a, n) || rt_read_all(0, b, n)) rt_fail("minmax: short data", 2);
  float a_min_float = f[0], a_max_float = f[1], b_min_float = f[2], b_max_float = f[3];
  float out_min = 0.0f, out_max = 0.0f;
  if (n_inputs == 8) { out_min = f[4]; out_max = f[5]; }
  else if (n_inputs == 7) { out_min = f[4]; out_max = fmaxf(a_max_float, b_max_float); }
  else { out_min = fminf(a_min_float, b_min_float); out_max = fmaxf(a_max_float, b_max_float); }
  int32_t status = out_min >= out_max;
  float res[2] = {out_min, out_max};
  rt_write_all(1, &status, 4);
  rt_write_all(1, res, sizeof res);
  if (!status) {
    uint8_t *pa = a, *pb = b;
    if (a_min_float != out_min || a_max_float != out_max) {
      requantize_to_outrange(a_min_float, a_max_float, out_min, out_max, a, ar, n); pa = ar;
    }
    if (b_min_float != out_min || b_max_float != out_max) {
      requantize_to_outrange(b_min_float, b_max_float, out_min, out_max, b, br, n); pb = br;
    }
    qminmax_hvx(pa, pb, out, n, 0, 0, op);
    rt_write_all(1, out, n);
  }
  rt_alloc_reset();
}

int main(void) {
  for (int32_t i = 0, ncases = hx_case_count("minmax"); i < ncases; i++) one_case();
  return 0;
}
