// Flat ctypes entry points onto lib_nn's element-wise / pooling / padding kernels, for
// tools/golden_libnn_ops.py. Compiled together with lib_nn's portable C (-DNN_USE_REF); this file
// holds no lib_nn code: it only fills lib_nn's parameter structs from plain ints and calls the API.
// The caller checks lib_nn's asserted preconditions (a failed assert aborts the process).
#include <stdint.h>
#include <string.h>
#include "nn_operator.h"

static void ops_window(nn_window_params_t* w, int kh, int kw, int r0, int c0, int sv, int sh) {
  memset(w, 0, sizeof(*w));
  w->shape.height = kh; w->shape.width = kw;
  w->start.row = r0; w->start.column = c0;
  w->stride.vertical = sv; w->stride.horizontal = sh;
  w->dilation.vertical = 1; w->dilation.horizontal = 1;
}

void ops_add_elementwise(int8_t* Y, const int8_t* X0, const int8_t* X1, int shr0, int m0, int shr1, int m1,
                         int32_t bias, int out_shr, int n) {
  nn_add_params_t p;
  memset(&p, 0, sizeof(p));
  p.input[0].shr = (int16_t)shr0; p.input[0].multiplier = (int16_t)m0;
  p.input[1].shr = (int16_t)shr1; p.input[1].multiplier = (int16_t)m1;
  p.output.bias = bias; p.output.shr = (uint8_t)out_shr;
  add_elementwise(Y, X0, X1, &p, 0, (unsigned)n);
}

void ops_avgpool2d(int8_t* Y, const int8_t* X, int xh, int xw, int xc, int yh, int yw,
                   int kh, int kw, int r0, int c0, int sv, int sh) {
  nn_image_params_t xp = {(uint32_t)xh, (uint32_t)xw, (channel_count_t)xc};
  nn_image_params_t yp = {(uint32_t)yh, (uint32_t)yw, (channel_count_t)xc};
  nn_window_params_t w;
  ops_window(&w, kh, kw, r0, c0, sv, sh);
  avgpool2d(Y, X, &xp, &yp, &w);
}

void ops_avgpool2d_global(int8_t* Y, const int8_t* X, int32_t bias, int scale, int shift, int xh, int xw, int xc) {
  nn_image_params_t xp = {(uint32_t)xh, (uint32_t)xw, (channel_count_t)xc};
  avgpool2d_global(Y, X, bias, (int8_t)scale, (uint16_t)shift, &xp);
}

void ops_maxpool2d(int8_t* Y, const int8_t* X, int xh, int xw, int xc, int yh, int yw,
                   int kh, int kw, int r0, int c0, int sv, int sh) {
  nn_image_params_t xp = {(uint32_t)xh, (uint32_t)xw, (channel_count_t)xc};
  nn_image_params_t yp = {(uint32_t)yh, (uint32_t)yw, (channel_count_t)xc};
  nn_window_params_t w;
  ops_window(&w, kh, kw, r0, c0, sv, sh);
  maxpool2d(Y, X, &xp, &yp, &w);
}

void ops_lookup8(uint8_t* Y, const uint8_t* X, const uint8_t* lut, int n) {
  lookup8(Y, X, lut, 0, (unsigned)n);
}

void ops_requantize_16_to_8(int8_t* Y, const int16_t* X, int n) {
  requantize_16_to_8(Y, X, 0, (unsigned)n);
}

void ops_pad(int8_t* Y, int8_t* X, int xh, int xw, int xc, int top, int bottom, int left, int right,
             uint32_t pad_value) {
  nn_image_params_t xp = {(uint32_t)xh, (uint32_t)xw, (channel_count_t)xc};
  padding_sizes_t p = {top, bottom, left, right};
  pad_ref(Y, X, &p, &xp, (unsigned)xc, pad_value);
}
