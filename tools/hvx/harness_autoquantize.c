/* hexnn-import harness (ours) for AutoQuantize's device path, op_quantize.c: #included after
 * autoquantize_execute_opt and autoquantize_hvx (the registered execute and its vector-thread work), with
 * find_scaling_for_hvx_quant and adjust_minmax_for_zero (src/quantize.c), extracted unedited and linked with
 * find_minmax_of_floats_asm / quantize_floats_to_8b_asm (hexagon/asm_src/autoquantize_h.S); graph_standin.h
 * runs the work item in this thread. Input and output are 128-byte aligned and padded, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 shape[4], float32 data (the shape's element count).
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes. */
#include "harness_io.h"

static void one_case(struct nn_graph *nn) {
  int32_t sh[4];
  if (rt_read_all(0, sh, sizeof sh)) rt_fail("autoquantize: short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], padded = hx_padded(n);
  float *in = hx_read_input("autoquantize", 4L * n, 4 * padded), omin = 0.0f, omax = 0.0f;
  uint8_t *out = rt_alloc(padded, 128);
  struct tensor t_in, t_out[3];
  hx_tensor(&t_in, sh[0], sh[1], sh[2], sh[3], in, 4 * padded, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, n, padded, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[1] = {&t_in};
  struct nn_node node = hx_node(ins, 1, outs, 3);
  int32_t status = autoquantize_execute_opt(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, n);
}

int main(void) { return hx_run_graph_cases("autoquantize", one_case); }
