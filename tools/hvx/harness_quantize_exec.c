/* hexnn-import harness (ours) for Quantize's registered execute, op_quantize.c quantize_execute_opt, run whole:
 * #included after quantize_execute_opt and its vector-thread work quantize_opt, with find_scaling_for_hvx_quant
 * and adjust_minmax_for_zero (src/quantize.c), extracted unedited and linked with quantize_floats_to_8b_asm
 * (hexagon/asm_src/autoquantize_h.S); graph_standin.h runs the work item in this thread. Input and output are
 * 128-byte aligned and padded, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 shape[4], float min_in, max_in, float32 data (the shape's element count).
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes. */
#include "harness_io.h"

static void one_case(struct nn_graph *nn) {
  int32_t sh[4]; float mm[2];
  if (rt_read_all(0, sh, sizeof sh) || rt_read_all(0, mm, sizeof mm)) rt_fail("quantize_exec: short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], padded = hx_padded(n);
  float *in = hx_read_input("quantize_exec", 4L * n, 4 * padded), omin = 0.0f, omax = 0.0f;
  uint8_t *out = rt_alloc(padded, 128);
  struct tensor t_in[3], t_out[3];
  hx_tensor(&t_in[0], sh[0], sh[1], sh[2], sh[3], in, 4 * padded, NN_TYPE_FLOAT);
  hx_tensor(&t_in[1], 1, 1, 1, 1, &mm[0], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[2], 1, 1, 1, 1, &mm[1], 4, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, n, padded, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[3] = {&t_in[0], &t_in[1], &t_in[2]};
  struct nn_node node = hx_node(ins, 3, outs, 3);
  int32_t status = quantize_execute_opt(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, n);
}

int main(void) { return hx_run_graph_cases("quantize_exec", one_case); }
