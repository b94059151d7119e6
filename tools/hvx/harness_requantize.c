/* hexnn-import harness (ours) for nnlib's int32 -> uint8 requantization on the device: #included after
 * scalar_requantize_i32_to_qu8 / fallback_requantize_i32_to_qu8 / hvx_quantize_32_to_8 /
 * nn_requantize_i32_to_qu8_hvx (src/quantize.c, extracted unedited by hvx_build.py), linked with
 * hexagon/asm_src/quantize_h.S (quantize_asm). Mode 0 follows op_requantize.c do_requantize_execute's lines
 * (Requantize_32to8), mode 1 do_autorequantize_execute's (QuantizeDownAndShrinkRange_32to8): level size,
 * quantize_adjust_range (quantize.h), then nn_requantize_i32_to_qu8_hvx. find_min_max_int32 is declared
 * by quantize.h but defined nowhere in nnlib 2.14.1: ours below stores min in [0] and ~max in [1], as
 * do_autorequantize_execute reads them. Buffers are 128-byte aligned, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 mode, int32 n, float in_min, in_max, req_min, req_max, n int32.
 * stdout: per case float out_min, out_max, n uint8 codes. */
#include "harness_io.h"

void find_min_max_int32(int32_t const *arr, int n, int32_t *minmaxp) {
  int32_t mn = 0x7FFFFFFF, mx = (int32_t)0x80000000;
  for (int i = 0; i < n; i++) { if (arr[i] < mn) mn = arr[i]; if (arr[i] > mx) mx = arr[i]; }
  minmaxp[0] = mn; minmaxp[1] = ~mx;
}

static void one_case(void) {
  int32_t hdr[2]; float rng[4];
  if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, rng, sizeof rng)) rt_fail("requantize: short header", 2);
  int mode = hdr[0], n = hdr[1];
  int padded = (n + 127) & ~127;
  int32_t *in = rt_alloc(4 * (padded ? padded : 128), 128);
  uint8_t *out = rt_alloc(padded ? padded : 128, 128);
  if (rt_read_all(0, in, 4L * n)) rt_fail("requantize: short data", 2);
  float in_min = rng[0], in_max = rng[1], out_min = rng[2], out_max = rng[3], stepsize, recip_stepsize;
  float in_level_size;
  if (mode == 0) {
    in_level_size = (in_max - in_min) * (0x1.0p-32f);
  } else {
    in_level_size = (in_max - in_min) * (1.0f / 4294967296.0f);
    int32_t mm[2];
    find_min_max_int32(in, n, mm);
    int32_t in_max_val = max_i32(~mm[1], 0), in_min_val = min_i32(mm[0], 0);
    out_min = in_level_size * (float)in_min_val;
    out_max = in_level_size * (float)in_max_val;
  }
  quantize_adjust_range(&out_min, &out_max, &stepsize, &recip_stepsize, out_min, out_max);
  nn_requantize_i32_to_qu8_hvx(out, in, n, in_level_size, out_min, out_max);
  float res[2] = {out_min, out_max};
  rt_write_all(1, res, sizeof res);
  rt_write_all(1, out, n);
  rt_alloc_reset();
}

int main(void) {
  for (int32_t i = 0, ncases = hx_case_count("requantize"); i < ncases; i++) one_case();
  return 0;
}
