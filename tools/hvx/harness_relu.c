/* hexnn-import harness (ours) for the Relu family's device path, op_relu.c: relu_kernel / reluX_kernel are
 * nnlib's assembly (hexagon/asm_src/relu_kernel_h.S, linked unedited); the front lines follow relu_execute
 * (kind 0, QuantizedRelu_8), reluX_execute (1, QuantizedReluX_8) and clamp_execute (2, QuantizedClamp_8):
 * the bounds are quantize_uint8 (quantize.h) of 0 / X / the clamp ends over the input range, which the ops
 * copy to their output. Buffers are 128-byte aligned and padded, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 kind, int32 n, float in_min, in_max, a, b (X; or clamp min, max),
 * n bytes of codes. stdout: per case n bytes of codes. */
#include "harness_io.h"

void relu_kernel(const uint8_t *in_data, uint8_t *out_data, int bytes, uint8_t quantized_zero);
void reluX_kernel(const uint8_t *in_data, uint8_t *out_data, int bytes, uint8_t quantized_zero, uint8_t quantized_max);

static void one_case(void) {
  int32_t hdr[2]; float f[4];
  if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, f, sizeof f)) rt_fail("relu: short header", 2);
  int kind = hdr[0], n = hdr[1];
  int padded = ((n + 127) & ~127) + 128;
  uint8_t *in = rt_alloc(padded, 128), *out = rt_alloc(padded, 128);
  if (rt_read_all(0, in, n)) rt_fail("relu: short codes", 2);
  float in_min = f[0], in_max = f[1];
  if (kind == 0) {
    relu_kernel(in, out, n, quantize_uint8(0.0f, in_min, in_max));
  } else if (kind == 1) {
    reluX_kernel(in, out, n, quantize_uint8(0.0f, in_min, in_max), quantize_uint8(f[2], in_min, in_max));
  } else {
    reluX_kernel(in, out, n, quantize_uint8(f[2], in_min, in_max), quantize_uint8(f[3], in_min, in_max));
  }
  rt_write_all(1, out, n);
  rt_alloc_reset();
}

int main(void) {
  for (int32_t i = 0, ncases = hx_case_count("relu"); i < ncases; i++) one_case();
  return 0;
}
