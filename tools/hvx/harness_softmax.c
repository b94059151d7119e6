/* hexnn-import harness (ours) for QuantizedSoftmax_8's registered execute, op_softmax_d32.c softmax_flat_execute,
 * run whole: #included after the file's functions (its depth-2, large-depth and general HVX flat paths),
 * extracted unedited; graph_standin.h runs the work items in this thread. Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 shape[4], int32 n_inputs (3 or 4), float in_min, in_max, beta, the codes.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes.
 * harness_softmax_larged.c defines HX_NAME, its libm and HX_READ_MORE (what a case sends after its codes) and
 * includes this file. */
#include "harness_io.h"

#ifndef HX_NAME
#define HX_NAME "softmax"
#define HX_READ_MORE() ((void)0)
/* The large-depth path (depth >= 1408) builds its table with libm's expf / expm1f: the Hexagon toolchain's libm
 * is not here, so that path is not run (no case reaches it; these stop the run if one does). */
float expf(float x) { (void)x; rt_fail("softmax: expf (Hexagon libm) is not available: large-depth path", 6); }
float expm1f(float x) { (void)x; rt_fail("softmax: expm1f (Hexagon libm) is not available: large-depth path", 6); }
#endif

static void one_case(struct nn_graph *nn) {
  int32_t sh[5]; float f[3];
  if (rt_read_all(0, sh, sizeof sh) || rt_read_all(0, f, sizeof f)) rt_fail(HX_NAME ": short header", 2);
  uint32_t n = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], padded = ((n + 127) & ~127u) + 256;
  uint8_t *in = hx_read_input(HX_NAME, n, padded), *out = rt_alloc(padded, 128);
  HX_READ_MORE();
  float omin = 0.0f, omax = 0.0f;
  struct tensor t_in[4], t_out[3];
  hx_tensor(&t_in[0], sh[0], sh[1], sh[2], sh[3], in, padded, NN_TYPE_QUINT8);
  for (int i = 0; i < 3; i++) hx_tensor(&t_in[1 + i], 1, 1, 1, 1, &f[i], 4, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, n, padded, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[4] = {&t_in[0], &t_in[1], &t_in[2], &t_in[3]};
  struct nn_node node = hx_node(ins, sh[4], outs, 3);
  int32_t status = softmax_flat_execute(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, n);
}

int main(void) { return hx_run_graph_cases(HX_NAME, one_case); }
