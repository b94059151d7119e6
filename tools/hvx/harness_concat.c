/* hexnn-import harness (ours) for QuantizedConcat_8's registered execute, op_concat.c concat_execute_asm, run
 * whole: #included after it, concat_execute and concat_execute_slice_asm (two work items, even / odd inputs),
 * extracted unedited and linked with the asm memconvert_hvx (memconvert_hvx.S) and vmemcpy_2d_general_asm
 * (vmemcpy_2d_h.S); graph_standin.h runs the work items in this thread. Tensors are 128-byte aligned and padded.
 * stdin: int32 ncases; per case int32 dim, int32 n_in, int32 b, h, w; per input int32 depth, float min, max and
 * its b*h*w*depth codes.
 * stdout: per case int32 status (0 ok, 1 the C's error), float out_min, out_max, b*h*w*(sum of depths) codes, per
 * input int32 offset, gain (as concat_execute_slice_asm computes them; meaningless where the C errs). */
#include "harness_io.h"

#define MAX_IN 16

static void one_case(struct nn_graph *nn) {
  int32_t hdr[5];
  if (rt_read_all(0, hdr, sizeof hdr)) rt_fail("concat: short header", 2);
  int32_t dim = hdr[0], n_in = hdr[1], rows = hdr[2] * hdr[3] * hdr[4], total = 0;
  if (n_in < 1 || n_in > MAX_IN) rt_fail("concat: input count", 2);
  struct tensor t_in[1 + 3 * MAX_IN], t_out[3];
  const struct tensor *ins[1 + 3 * MAX_IN];
  float mm[2 * MAX_IN], omin = 0.0f, omax = 0.0f;
  hx_tensor(&t_in[0], 1, 1, 1, 1, &dim, 4, NN_TYPE_INT32);
  for (int i = 0; i < n_in; i++) {
    int32_t d;
    if (rt_read_all(0, &d, 4) || rt_read_all(0, &mm[2 * i], 8)) rt_fail("concat: short input header", 2);
    uint32_t bytes = hx_padded(rows * d);
    uint8_t *data = rt_alloc(bytes, 128);
    memset(data, 0, bytes);
    if (rt_read_all(0, data, (long)rows * d)) rt_fail("concat: short data", 2);
    hx_tensor(&t_in[1 + i], hdr[2], hdr[3], hdr[4], d, data, bytes, NN_TYPE_QUINT8);
    hx_tensor(&t_in[1 + n_in + i], 1, 1, 1, 1, &mm[2 * i], 4, NN_TYPE_FLOAT);
    hx_tensor(&t_in[1 + 2 * n_in + i], 1, 1, 1, 1, &mm[2 * i + 1], 4, NN_TYPE_FLOAT);
    total += d;
  }
  for (int i = 0; i < 1 + 3 * n_in; i++) ins[i] = &t_in[i];
  uint32_t obytes = hx_padded(rows * total);
  uint8_t *out = rt_alloc(obytes, 128);
  struct tensor *outs[3];
  hx_outputs(t_out, outs, out, rows * total, obytes, NN_TYPE_QUINT8, &omin, &omax);
  struct nn_node node = hx_node(ins, 1 + 3 * n_in, outs, 3);
  int32_t status = concat_execute_asm(&node, nn) != 0;
  hx_write_result(status, omin, omax, out, (long)rows * total);
  /* each input's offset and gain, computed as concat_execute_slice_asm's lines compute them (for the replay's
   * account of memconvert_hvx's 16-bit lanes) */
  float out_level_recip = 255.0f / (omax - omin);
  for (int i = 0; i < n_in; i++) {
    float in_min = mm[2 * i], in_max = mm[2 * i + 1];
    if (in_min > 0.0f) in_min = 0.0f;
    float in_level = flt_div_255(in_max - in_min);
    int32_t og[2] = {max_i32(0, roundf_i32((in_min - omin) / in_level)),
                     roundf_i32(out_level_recip * in_level * 32768.0f)};
    rt_write_all(1, og, sizeof og);
  }
}

int main(void) { return hx_run_graph_cases("concat", one_case); }
