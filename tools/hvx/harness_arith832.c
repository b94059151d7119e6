/* hexnn-import harness (ours) for QuantizedAdd_8p8to32 / QuantizedSub_8p8to32 / QuantizedMul_8x8to32's registered
 * execute functions, op_addsubmul_8to32.c addsub_832_execute / mul_832_execute, run whole: #included after them,
 * their scalar and HVX inner loops and src/broadcast.c's nn_elementwise_with_broadcast (with its HVX work
 * function), extracted unedited; graph_standin.h runs the work items in this thread. Tensors are 128-byte
 * aligned and padded.
 * stdin: int32 ncases; per case int32 op (0 Add, 1 Sub, 2 Mul), int32 a_shape[4], b_shape[4], float a_min, a_max,
 * b_min, b_max, the a codes, the b codes.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, the int32 outputs (the
 * broadcast shape's element count). */
#include "harness_io.h"

static const uint32_t node_types[3] = {OP_QuantizedAdd_8p8to32, OP_QuantizedSub_8p8to32, OP_QuantizedMul_8x8to32};

static void one_case(struct nn_graph *nn) {
  int32_t op, sh[8]; float mm[4];
  if (rt_read_all(0, &op, 4) || rt_read_all(0, sh, sizeof sh) || rt_read_all(0, mm, sizeof mm))
    rt_fail("arith832: short header", 2);
  struct tensor t_in[6], t_out[3];
  uint32_t nout = hx_read_operands("arith832", sh, t_in), po = 4 * hx_padded(nout);
  int32_t *out = rt_alloc(po, 128);
  float omin = 0.0f, omax = 0.0f;
  for (int i = 0; i < 4; i++) hx_tensor(&t_in[2 + i], 1, 1, 1, 1, &mm[i], 4, NN_TYPE_FLOAT);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, nout, po, NN_TYPE_INT32, &omin, &omax);
  const struct tensor *ins[6] = {&t_in[0], &t_in[1], &t_in[2], &t_in[3], &t_in[4], &t_in[5]};
  struct nn_node node = hx_node(ins, 6, outs, 3);
  node.node_type = node_types[op];
  int32_t status = (op == 2 ? mul_832_execute(&node, nn) : addsub_832_execute(&node, nn)) != 0;
  hx_write_result(status, omin, omax, out, 4L * nout);
}

int main(void) { return hx_run_graph_cases("arith832", one_case); }
