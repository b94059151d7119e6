/* hexnn-import harness (ours) for AutoQuantize's device path, op_quantize.c: #included after
 * autoquantize_execute_opt and autoquantize_hvx (the registered execute and its vector-thread work), with
 * find_scaling_for_hvx_quant and adjust_minmax_for_zero (src/quantize.c), extracted unedited and linked with
 * find_minmax_of_floats_asm / quantize_floats_to_8b_asm (hexagon/asm_src/autoquantize_h.S); graph_standin.h
 * runs the work item in this thread. Input and output are 128-byte aligned and padded, as nnlib's tensors are.
 * stdin: int32 ncases; per case int32 shape[4], float32 data (the shape's element count).
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes. */
#include "hvxrt.h"

static void one_case(struct nn_graph *nn) {
  int32_t sh[4];
  if (rt_read_all(0, sh, sizeof sh)) rt_fail("autoquantize: short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], padded = ((n + 127) & ~127u) + 128;
  float *in = rt_alloc(4 * padded, 128), omin = 0.0f, omax = 0.0f;
  uint8_t *out = rt_alloc(padded, 128);
  memset(in, 0, 4 * padded);
  if (rt_read_all(0, in, 4L * n)) rt_fail("autoquantize: short data", 2);
  struct tensor t_in, t_out[3];
  hx_tensor(&t_in, sh[0], sh[1], sh[2], sh[3], in, 4 * padded, NN_TYPE_FLOAT);
  hx_tensor(&t_out[0], 1, 1, 1, n, out, padded, NN_TYPE_QUINT8);
  hx_tensor(&t_out[1], 1, 1, 1, 1, &omin, 4, NN_TYPE_FLOAT);
  hx_tensor(&t_out[2], 1, 1, 1, 1, &omax, 4, NN_TYPE_FLOAT);
  const struct tensor *ins[1] = {&t_in};
  struct tensor *outs[3] = {&t_out[0], &t_out[1], &t_out[2]};
  struct nn_node node = {0};
  node.inputs = ins; node.outputs = outs; node.n_inputs = 1; node.n_outputs = 3;
  int32_t status = autoquantize_execute_opt(&node, nn) != 0;
  float res[2] = {omin, omax};
  rt_write_all(1, &status, 4);
  rt_write_all(1, res, sizeof res);
  rt_write_all(1, out, n);
}

int main(void) {
  int32_t ncases;
  if (rt_read_all(0, &ncases, 4)) rt_fail("autoquantize: no case count", 2);
  for (int i = 0; i < ncases; i++) {
    struct nn_graph nn;
    hx_graph_init(&nn);
    one_case(&nn);
    rt_alloc_reset();
  }
  return 0;
}
