/* hexnn-import harness (ours) for QuantizedResizeBilinear_8's registered execute, op_resizebilinear.c
 * resizebilinear_qu8_execute, run whole: #included after the file's functions (the HVX 2x / 4x upscales
 * resizebilinear_2x / _4x, the align-corners path resizebilinear_hvx with weight_generation, and
 * resizebilinear_general), extracted unedited; graph_standin.h runs the work items in this thread.
 * Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 shape[4], int32 h_out, w_out, int32 n_inputs (4 or 5), int32 align_corners,
 * float in_min, in_max, the codes.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, b*h_out*w_out*d codes. */
#include "harness_io.h"

static void one_case(struct nn_graph *nn) {
  int32_t sh[4], hw[2], na[2]; float mm[2];
  if (rt_read_all(0, sh, sizeof sh) || rt_read_all(0, hw, sizeof hw) || rt_read_all(0, na, sizeof na)
      || rt_read_all(0, mm, sizeof mm)) rt_fail("resize: short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], nout = (uint32_t)sh[0] * hw[0] * hw[1] * sh[3];
  uint32_t pin = ((n + 127) & ~127u) + 256, pout = ((nout + 127) & ~127u) + 256;
  uint8_t *in = hx_read_input("resize", n, pin), *out = rt_alloc(pout, 128);
  float omin = 0.0f, omax = 0.0f;
  struct tensor t_in[5], t_out[3];
  hx_tensor(&t_in[0], sh[0], sh[1], sh[2], sh[3], in, pin, NN_TYPE_QUINT8);
  hx_tensor(&t_in[1], 1, 1, 1, 2, hw, 8, NN_TYPE_INT32);
  hx_tensor(&t_in[2], 1, 1, 1, 1, &mm[0], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[3], 1, 1, 1, 1, &mm[1], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[4], 1, 1, 1, 1, &na[1], 4, NN_TYPE_INT32);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, nout, pout, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[5] = {&t_in[0], &t_in[1], &t_in[2], &t_in[3], &t_in[4]};
  struct nn_node node = hx_node(ins, na[0], outs, 3);
  int32_t status = resizebilinear_qu8_execute(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, nout);
}

int main(void) { return hx_run_graph_cases("resize", one_case); }
