// Flat ctypes entry point onto lib_nn's conv2d_im2col, for tools/golden_libnn_im2col.py. Compiled
// together with lib_nn's portable C (-DNN_USE_REF); this file holds no lib_nn code: it fills
// lib_nn's parameter structs from plain ints, plans one job covering the whole output
// (conv2d_im2col_init with job_params NULL) and runs it. COL is the caller's scratch column
// (word-aligned, K_h * K_w * X_c rounded up to 32 bytes). The caller checks lib_nn's asserted
// preconditions (a failed assert aborts the process).
#include <stdint.h>
#include <string.h>
#include "nn_operator.h"
#include "nn_conv2d_int8.h"

void im2col_conv2d(int8_t* Y, const int8_t* X, int8_t* COL, const int8_t* K, const int16_t* BSO, int zp,
                   int xh, int xw, int xc, int yh, int yw, int yc,
                   int kh, int kw, int r0, int c0, int sv, int sh) {
  nn_image_params_t xp, yp;
  nn_window_params_t w;
  nn_conv2d_im2col_plan_t plan;
  nn_conv2d_im2col_job_t job;
  xp.height = xh; xp.width = xw; xp.channels = xc;
  yp.height = yh; yp.width = yw; yp.channels = yc;
  memset(&w, 0, sizeof(w));
  w.shape.height = kh; w.shape.width = kw;
  w.start.row = r0; w.start.column = c0;
  w.stride.vertical = sv; w.stride.horizontal = sh;
  w.dilation.vertical = 1; w.dilation.horizontal = 1;
  memset(&plan, 0, sizeof(plan));
  memset(&job, 0, sizeof(job));
  conv2d_im2col_init(&plan, &job, &xp, &yp, NULL, &w, (int8_t)zp, 1);
  conv2d_im2col(Y, X, COL, K, (const nn_bso_block_t*)BSO, &plan, &job);
}
