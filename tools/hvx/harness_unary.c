/* hexnn-import harness (ours) for the elementwise HVX ops of op_neg.c and op_sqrt.c, run whole: #included after
 * unary_op_execute (with its run functions hvx_run_neg_f / abs_f / neg_i32 / abs_i32 / 1scomp, made by nnlib's
 * RUNFUNCTION_DEF macro) and sqrt_execute / sqrt_execute_hvx, extracted unedited; graph_standin.h runs the work
 * items in this thread. Tensors are 128-byte aligned and padded, as nnlib's are.
 * stdin: int32 ncases; per case int32 op (0 Neg_f, 1 Abs_f, 2 Neg_int32, 3 Abs_int32, 4 QuantizedNeg_8,
 * 5 QuantizedSqrt_8), int32 n, float in_min, in_max (the quantized ops), n elements (4 bytes, or 1 for the
 * quantized ops).
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, n output elements. */
#include "harness_io.h"

static const uint32_t node_types[6] = {OP_Neg_f, OP_Abs_f, OP_Neg_int32, OP_Abs_int32, OP_QuantizedNeg_8,
                                       OP_QuantizedSqrt_8};

static void one_case(struct nn_graph *nn) {
  int32_t hdr[2]; float mm[2];
  if (rt_read_all(0, hdr, sizeof hdr) || rt_read_all(0, mm, sizeof mm)) rt_fail("unary: short header", 2);
  int op = hdr[0], n = hdr[1], esize = op >= 4 ? 1 : 4;
  uint32_t type = op >= 4 ? NN_TYPE_QUINT8 : op < 2 ? NN_TYPE_FLOAT : NN_TYPE_INT32;
  uint32_t bytes = hx_padded(n * esize);
  uint8_t *in = hx_read_input("unary", (long)n * esize, bytes), *out = rt_alloc(bytes, 128);
  float omin = 0.0f, omax = 0.0f;
  struct tensor t_in[3], t_out[3];
  hx_tensor(&t_in[0], 1, 1, 1, n, in, bytes, type);
  hx_tensor(&t_in[1], 1, 1, 1, 1, &mm[0], 4, NN_TYPE_FLOAT);
  hx_tensor(&t_in[2], 1, 1, 1, 1, &mm[1], 4, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, n, bytes, type, &omin, &omax);
  const struct tensor *ins[3] = {&t_in[0], &t_in[1], &t_in[2]};
  uint32_t n_io = op >= 4 ? 3 : 1;
  struct nn_node node = hx_node(ins, n_io, outs, n_io);
  node.node_type = node_types[op];
  int32_t status = (op == 5 ? sqrt_execute(&node, nn) : unary_op_execute(&node, nn)) != 0;
  hx_write_result(status, omin, omax, out, (long)n * esize);
}

int main(void) { return hx_run_graph_cases("unary", one_case); }
