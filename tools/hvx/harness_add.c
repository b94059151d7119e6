/* hexnn-import harness (ours) for QuantizedAdd_8p8to8's device path, op_add.c: #included after the op's
 * execute and check functions, extracted unedited (qadd_888_check, qadd_888_execute; same shapes:
 * addsub_flat_direct_execute with its range planning, set_addsub_scaling_for_output_range, the HVX cores
 * add_core_hvx / add_core_hvx_underrange, the re-run test check_addsub_need_rerun; other shapes: qadd_888_hvx,
 * expand and do_quantized_add_888 with the asm quant_add_spec_asm / vmemcpy_asm, and its recursive retries).
 * One node per case, its struct qadd_888_info kept between the case's runs as nnlib keeps it between
 * executions; graph_standin.h runs the work items in this thread. Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 n_inputs (6..8), float out_min, out_max (inputs 6, 7 as n_inputs says),
 * int32 a_shape[4], b_shape[4], int32 nruns; per run float a_min, a_max, b_min, b_max, a bytes, b bytes.
 * A run whose qadd_888_hvx calls itself more than HX_MAX_RESETS times (graph_standin.h) is left by a jump: on the
 * device it would not end; the node's later runs are not run.
 * stdout: per run int32 status (0 ok, 1 the C's error, 2 no end, 3 not run after 2), int32 passes (flat: loop passes; other shapes: calls
 * of qadd_888_hvx), float out_min, out_max, output bytes (the larger shape's element count). */
#include "graph_standin.h"

static uint32_t count(const int32_t *s) { return (uint32_t)s[0] * s[1] * s[2] * s[3]; }

static void one_case(struct nn_graph *nn) {
  int32_t n_inputs, sh[8], nruns; float spec[2];
  if (rt_read_all(0, &n_inputs, 4) || rt_read_all(0, spec, 8) || rt_read_all(0, sh, 32) || rt_read_all(0, &nruns, 4))
    rt_fail("add: short header", 2);
  uint32_t na = count(sh), nb = count(sh + 4), nout = na > nb ? na : nb;
  uint32_t pa = hx_padded(na), pb = hx_padded(nb), po = hx_padded(nout);
  struct tensor t_in[8], t_out[3];
  const struct tensor *ins[8]; struct tensor *outs[3];
  float ranges[6] = {0, 0, 0, 0, spec[0], spec[1]}, omin = 0, omax = 0;
  uint8_t *a = rt_alloc(pa, 128), *b = rt_alloc(pb, 128), *out = rt_alloc(po, 128);
  memset(a, 0, pa); memset(b, 0, pb);
  hx_tensor(&t_in[0], sh[0], sh[1], sh[2], sh[3], a, pa, NN_TYPE_QUINT8);
  hx_tensor(&t_in[1], sh[4], sh[5], sh[6], sh[7], b, pb, NN_TYPE_QUINT8);
  for (int i = 0; i < 6; i++) hx_tensor(&t_in[2 + i], 1, 1, 1, 1, &ranges[i], 4, NN_TYPE_FLOAT);
  hx_outputs(t_out, outs, out, nout, po, NN_TYPE_QUINT8, &omin, &omax);
  for (int i = 0; i < 8; i++) ins[i] = &t_in[i];
  struct output def = {4, {1, 1, 1, nout}, 1, 0, 0.0f};
  struct nn_node node = {0};
  node.inputs = ins; node.outputs = outs; node.output_defs = &def; node.n_inputs = n_inputs; node.n_outputs = 3;
  int32_t st = qadd_888_check(&node, nn) != 0;
  volatile int32_t hung = 0;
  rt_jmp_buf escape;
  for (int r = 0; r < nruns; r++) {
    if (rt_read_all(0, ranges, 16) || rt_read_all(0, a, na) || rt_read_all(0, b, nb)) rt_fail("add: short run", 2);
    hx_passes = hx_resets = 0;
    int32_t status;
    hx_escape = &escape;
    if (hung) status = 3;
    else if (st) status = 1;
    else if (rt_setjmp(escape)) status = 2, hung = 1;
    else status = qadd_888_execute(&node, nn) != 0;
    hx_escape = 0;
    int32_t passes = hx_passes ? hx_passes : hx_resets;
    float res[2] = {omin, omax};
    rt_write_all(1, &status, 4);
    rt_write_all(1, &passes, 4);
    rt_write_all(1, res, 8);
    rt_write_all(1, out, nout);
  }
}

int main(void) { return hx_run_graph_cases("add", one_case); }
