/* hexnn-import harness (ours) for QuantizedPRelu_8's registered execute, op_prelu.c prelu_execute_hvx, run whole:
 * #included after it and its helpers (prelu_scalar_alpha / hvx_prelu_scalar_alpha for one alpha, prelu_1D_alpha
 * with hvx_float2_u16, do_hvx_quant_frac_offst and hvx_intr_prelu_circ for one per depth), extracted unedited;
 * graph_standin.h runs the work items in this thread. Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 shape[4], int32 alpha_depth, float in_min, in_max, the codes, alpha_depth
 * float alphas.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes. */
#include "harness_io.h"

static void one_case(struct nn_graph *nn) {
  int32_t sh[5]; float mm[2];
  if (rt_read_all(0, sh, sizeof sh) || rt_read_all(0, mm, sizeof mm)) rt_fail("prelu: short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], padded = hx_padded(n);
  int32_t da = sh[4];
  uint8_t *in = rt_alloc(padded, 128), *out = rt_alloc(padded, 128);
  float *alpha = rt_alloc(4 * da + 128, 128), omin = 0.0f, omax = 0.0f;
  memset(in, 0, padded);
  if (rt_read_all(0, in, n) || rt_read_all(0, alpha, 4L * da)) rt_fail("prelu: short data", 2);
  struct tensor t_in[4], t_out[3];
  hx_tensor(&t_in[0], sh[0], sh[1], sh[2], sh[3], in, padded, NN_TYPE_QUINT8);
  hx_tensor(&t_in[1], 1, 1, 1, 1, &mm[0], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[2], 1, 1, 1, 1, &mm[1], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[3], 1, 1, 1, da, alpha, 4 * da + 128, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, n, padded, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[4] = {&t_in[0], &t_in[1], &t_in[2], &t_in[3]};
  struct nn_node node = hx_node(ins, 4, outs, 3);
  int32_t status = prelu_execute_hvx(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, n);
}

int main(void) { return hx_run_graph_cases("prelu", one_case); }
