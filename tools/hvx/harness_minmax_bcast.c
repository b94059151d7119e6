/* hexnn-import harness (ours) for QuantizedMaximum_8 / QuantizedMinimum_8's registered execute functions, run
 * whole with broadcasting: #included after op_minimum_maximum.c's maximum_q8_execute / minimum_q8_execute,
 * minmax_execute, qminmax_thread_process, requantize_to_outrange and qminmax_hvx, nn_broadcast.h's inline helpers
 * and macros and src/broadcast.c's nn_check_prepare_hvx_opt / nn_elementwise_with_broadcast, extracted unedited;
 * graph_standin.h runs the work items in this thread. Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 op (0 MINIMUM, 1 MAXIMUM), int32 n_inputs (6..8), int32 a_shape[4],
 * b_shape[4], float a_min, a_max, b_min, b_max, out_min, out_max, the a codes, the b codes.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the codes (the broadcast
 * shape's element count). */
#include "harness_io.h"

static void one_case(struct nn_graph *nn) {
  int32_t hdr[2], sh[8]; float mm[6];
  if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, sh, sizeof sh) || rt_read_all(0, mm, sizeof mm))
    rt_fail("minmax_bcast: short header", 2);
  struct tensor t_in[8], t_out[3];
  uint32_t nout = hx_read_operands("minmax_bcast", sh, t_in), po = hx_padded(nout);
  uint8_t *out = rt_alloc(po, 128);
  float omin = 0.0f, omax = 0.0f;
  for (int i = 0; i < 6; i++) hx_tensor(&t_in[2 + i], 1, 1, 1, 1, &mm[i], 4, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, nout, po, NN_TYPE_QUINT8, &omin, &omax);
  const struct tensor *ins[8];
  for (int i = 0; i < 8; i++) ins[i] = &t_in[i];
  struct nn_node node = hx_node(ins, hdr[1], outs, 3);
  int32_t status = (hdr[0] ? maximum_q8_execute(&node, nn) : minimum_q8_execute(&node, nn)) != 0;
  hx_write_result(status, omin, omax, out, nout);
}

int main(void) { return hx_run_graph_cases("minmax_bcast", one_case); }
