"""The C text of ``xs3_runner.c``'s body: the project's own runner of a network header on lib_nn's kernels.

:mod:`.c_runner` writes it after a model binding (``XR_*`` macros naming the
header's tables). The C calls lib_nn's public API only (``nn_operator.h``,
commit 96bd67c: ``conv2d_deep``, ``conv2d_shallowin``, ``conv2d_1x1``,
``conv2d_depthwise``, ``fully_connected_8`` / ``_16``, ``add_elementwise``,
``maxpool2d``, ``avgpool2d``, ``avgpool2d_global``, ``lookup8``); it pads a
kernel's input channels with zeros and cuts its output back to the real
channels as the simulation does (``kernel_table._pad_channels`` /
``kernels_fc.pad_inputs`` / ``_image_out``), and reduces fully_connected_16's
int16 output as ``kernel_table._run_fc16`` does (``(y + 128) >> 8``, clamped).
Params slots follow :func:`hexnn_import.xs3.network_desc._call_params`
(checked by :func:`hexnn_import.xs3.c_runner.runner_refusal`).
"""
from __future__ import annotations

RUNNER_BODY = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_operator.h"

/* lib_nn's C reads up to 32 bytes past a row or vector: every buffer has this much slack after it */
#define XR_SLACK 64
#define XR_ARENA_BYTES (XR_ARENA_SIZE + XR_SLACK)
#define XR_SCRATCH_BYTES (XR_SCRATCH_SIZE + XR_SLACK)
#define XR_ALIGN4(n) ((((int32_t)(n)) + 3) & ~3)

/* called after each layer with the tensor it wrote (--dump) */
typedef void (*xr_hook_t)(int layer, int tensor, const int8_t *data, int32_t bytes, void *ctx);

enum { XR_DEEP, XR_SHALLOWIN, XR_1X1, XR_DEPTHWISE, XR_FC8, XR_FC16, XR_ADD, XR_MAXPOOL, XR_AVGPOOL,
       XR_AVGPOOL_GLOBAL, XR_LOOKUP8, XR_N_KNOWN };
static const char *const xr_known[XR_N_KNOWN] = {
  "conv2d_deep", "conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise", "fully_connected_8",
  "fully_connected_16", "add_elementwise", "maxpool2d", "avgpool2d", "avgpool2d_global", "lookup8"};

/* params slots (hexnn_import.xs3.network_desc): conv-like kernels window[0..5], zero_point[6], k_in[7],
 * k_out[8]; fully-connected zero_point[0], rows[1], k_in[2], k_out[3]; add_elementwise shr0, m0, shr1, m1,
 * bias, out_shr; pools window[0..5]; avgpool2d_global bias, scale, shift */
enum { XR_P_ZP = 6, XR_P_KIN = 7, XR_P_KOUT = 8, XR_P_ROWS = 1, XR_P_FC_KIN = 2, XR_P_FC_KOUT = 3 };

static char xr_error[256];

int xr_kind(int layer) {
  int k;
  for (k = 0; k < XR_N_KNOWN; ++k)
    if (strcmp(xr_kernel_names[xr_layers[layer].kernel], xr_known[k]) == 0) return k;
  return -1;
}

int32_t xr_bytes(int tensor) {
  const int32_t *s = xr_tensors[tensor].shape;
  return s[0] * s[1] * s[2] * s[3];
}

int8_t *xr_tensor_data(int8_t *arena, int tensor) { return arena + xr_tensors[tensor].offset; }

static int32_t xr_pixels(int tensor) {
  const int32_t *s = xr_tensors[tensor].shape;
  return s[1] * s[2];
}

static int xr_conv_like(int kind) {
  return kind == XR_DEEP || kind == XR_SHALLOWIN || kind == XR_1X1 || kind == XR_DEPTHWISE;
}

/* scratch bytes a layer needs: a padded input (channels or vector up to k_in) and an output of k_out */
int32_t xr_scratch_need(int layer) {
  const xr_layer_t *l = &xr_layers[layer];
  const int32_t *p = l->params;
  int kind = xr_kind(layer);
  int32_t need = 0;
  if (xr_conv_like(kind)) {
    if (xr_tensors[l->in[0]].shape[3] != p[XR_P_KIN])
      need += XR_ALIGN4(xr_pixels(l->in[0]) * p[XR_P_KIN]) + XR_SLACK;
    if (xr_tensors[l->out[0]].shape[3] != p[XR_P_KOUT])
      need += XR_ALIGN4(xr_pixels(l->out[0]) * p[XR_P_KOUT]) + XR_SLACK;
  } else if (kind == XR_MAXPOOL || kind == XR_AVGPOOL) {
    int32_t c = xr_tensors[l->in[0]].shape[3];
    if (c % 4)
      need += XR_ALIGN4(xr_pixels(l->in[0]) * XR_ALIGN4(c)) + XR_ALIGN4(xr_pixels(l->out[0]) * XR_ALIGN4(c)) +
              2 * XR_SLACK;
  } else if (kind == XR_FC8 || kind == XR_FC16) {
    int32_t rows = p[XR_P_ROWS];
    if (xr_bytes(l->in[0]) / rows != p[XR_P_FC_KIN]) need += XR_ALIGN4(p[XR_P_FC_KIN]) + XR_SLACK;
    if (kind == XR_FC16) need += XR_ALIGN4(2 * p[XR_P_FC_KOUT]) + XR_SLACK;
    else if (xr_bytes(l->out[0]) / rows != p[XR_P_FC_KOUT]) need += XR_ALIGN4(p[XR_P_FC_KOUT]) + XR_SLACK;
  }
  return need;
}

/* 0, or -1 with xr_error saying which layer the runner cannot run and why */
int xr_check(void) {
  int i, j;
  for (i = 0; i < XR_N_LAYERS; ++i) {
    const xr_layer_t *l = &xr_layers[i];
    int kind = xr_kind(i);
    int n_in = kind == XR_ADD ? 2 : 1;
    if (kind < 0) {
      snprintf(xr_error, sizeof xr_error, "layer %d (%s): kernel %s is not one the runner runs", i, l->name,
               xr_kernel_names[l->kernel]);
      return -1;
    }
    if (l->n_in != n_in || l->n_out != 1) {
      snprintf(xr_error, sizeof xr_error, "layer %d (%s): %d inputs and %d outputs, %s takes %d and 1", i,
               l->name, l->n_in, l->n_out, xr_known[kind], n_in);
      return -1;
    }
    for (j = 0; j < n_in + 1; ++j) {
      const xr_tensor_t *t = &xr_tensors[j < n_in ? l->in[j] : l->out[0]];
      if (t->dtype != 0 || t->offset < 0) {
        snprintf(xr_error, sizeof xr_error, "layer %d (%s): tensor %s is not int8 in the arena", i, l->name,
                 t->name);
        return -1;
      }
    }
    if (xr_scratch_need(i) > XR_SCRATCH_SIZE) {
      snprintf(xr_error, sizeof xr_error, "layer %d (%s): needs %ld scratch bytes, XR_SCRATCH_SIZE is %ld", i,
               l->name, (long)xr_scratch_need(i), (long)XR_SCRATCH_SIZE);
      return -1;
    }
  }
  return 0;
}

/* pixels of c channels <-> pixels of c_pad channels (zeros in the padding) */
static void xr_pad(int8_t *dst, const int8_t *src, int32_t pixels, int32_t c, int32_t c_pad) {
  int32_t i;
  memset(dst, 0, (size_t)(pixels * c_pad));
  for (i = 0; i < pixels; ++i) memcpy(dst + i * c_pad, src + i * c, (size_t)c);
}

static void xr_unpad(int8_t *dst, const int8_t *src, int32_t pixels, int32_t c, int32_t c_pad) {
  int32_t i;
  for (i = 0; i < pixels; ++i) memcpy(dst + i * c, src + i * c_pad, (size_t)c);
}

static void xr_window(nn_window_params_t *w, const int32_t *p) {
  memset(w, 0, sizeof *w);
  w->shape.height = p[0];
  w->shape.width = p[1];
  w->start.row = p[2];
  w->start.column = p[3];
  w->stride.vertical = p[4];
  w->stride.horizontal = p[5];
  w->dilation.vertical = 1;
  w->dilation.horizontal = 1;
}

static void xr_image(nn_image_params_t *im, int tensor, int32_t channels) {
  im->height = (uint32_t)xr_tensors[tensor].shape[1];
  im->width = (uint32_t)xr_tensors[tensor].shape[2];
  im->channels = (channel_count_t)channels;
}

/* conv2d_deep / _shallowin / _1x1 / _depthwise on every image of the batch */
static void xr_conv(int kind, const xr_layer_t *l, int8_t *arena, int8_t *scratch) {
  const int32_t *p = l->params;
  int32_t c = xr_tensors[l->in[0]].shape[3], yc = xr_tensors[l->out[0]].shape[3];
  int32_t k_in = p[XR_P_KIN], k_out = p[XR_P_KOUT];
  int32_t px = xr_pixels(l->in[0]), py = xr_pixels(l->out[0]), b, batch = xr_tensors[l->in[0]].shape[0];
  int8_t *xs = scratch, *ys = scratch + (c != k_in ? XR_ALIGN4(px * k_in) + XR_SLACK : 0);
  nn_image_params_t xp, yp;
  nn_window_params_t w;
  xr_image(&xp, l->in[0], k_in);
  xr_image(&yp, l->out[0], k_out);
  xr_window(&w, p);
  for (b = 0; b < batch; ++b) {
    const int8_t *X = xr_tensor_data(arena, l->in[0]) + b * px * c;
    int8_t *Y = xr_tensor_data(arena, l->out[0]) + b * py * yc;
    const int8_t *xk = X;
    int8_t *yk = yc != k_out ? ys : Y;
    if (c != k_in) {
      xr_pad(xs, X, px, c, k_in);
      xk = xs;
    }
    if (kind == XR_DEEP)
      conv2d_deep(yk, xk, (const nn_tensor_t *)l->weights, (const nn_bso_block_t *)l->bso, (int8_t)p[XR_P_ZP],
                  &xp, &yp, &w);
    else if (kind == XR_SHALLOWIN)
      conv2d_shallowin(yk, xk, (const nn_tensor_t *)l->weights, (const nn_bso_block_t *)l->bso,
                       (int8_t)p[XR_P_ZP], &xp, &yp, &w);
    else if (kind == XR_1X1)
      conv2d_1x1(yk, xk, (const nn_tensor_t *)l->weights, (const nn_bso_block_t *)l->bso, &xp, &yp);
    else
      conv2d_depthwise(yk, xk, (const int8_t *)l->weights, (const nn_bso_block_t *)l->bso, (int8_t)p[XR_P_ZP],
                       &xp, &yp, &w);
    if (yc != k_out) xr_unpad(Y, ys, py, yc, k_out);
  }
}

/* fully_connected_8 / _16, one call per input vector; _16's int16 output reduced as VDEPTH8 rounds */
static void xr_fc(int kind, const xr_layer_t *l, int8_t *arena, int8_t *scratch) {
  const int32_t *p = l->params;
  int32_t rows = p[XR_P_ROWS], k_in = p[XR_P_FC_KIN], k_out = p[XR_P_FC_KOUT], r, i;
  int32_t n = xr_bytes(l->in[0]) / rows, m = xr_bytes(l->out[0]) / rows;
  int8_t *xs = scratch, *ys = scratch + (n != k_in ? XR_ALIGN4(k_in) + XR_SLACK : 0);
  int32_t lo = XR_SYMMETRIC ? -127 : -128;
  for (r = 0; r < rows; ++r) {
    const int8_t *X = xr_tensor_data(arena, l->in[0]) + r * n;
    int8_t *Y = xr_tensor_data(arena, l->out[0]) + r * m;
    const int8_t *xk = X;
    if (n != k_in) {
      xr_pad(xs, X, 1, n, k_in);
      xk = xs;
    }
    if (kind == XR_FC8) {
      int8_t *yk = m != k_out ? ys : Y;
      fully_connected_8(yk, (const int8_t *)l->weights, xk, (const nn_bso_block_t *)l->bso,
                        (channel_count_t)k_in, 0, (channel_count_t)k_out);
      if (m != k_out) memcpy(Y, ys, (size_t)m);
    } else {
      int16_t *y16 = (int16_t *)(void *)ys;
      fully_connected_16(y16, (const int8_t *)l->weights, xk, (const nn_bso_block_t *)l->bso,
                         (channel_count_t)k_in, 0, (channel_count_t)k_out);
      for (i = 0; i < m; ++i) {
        int32_t v = ((int32_t)y16[i] + 128) >> 8;
        Y[i] = (int8_t)(v < lo ? lo : v > 127 ? 127 : v);
      }
    }
  }
}

/* maxpool2d / avgpool2d on every image; channels not a multiple of 4 (lib_nn asserts one) padded in the
 * scratch and the output cut back, as the simulation does */
static void xr_pool(int kind, const xr_layer_t *l, int8_t *arena, int8_t *scratch) {
  int32_t b, batch = xr_tensors[l->in[0]].shape[0], c = xr_tensors[l->in[0]].shape[3], c4 = XR_ALIGN4(c);
  int32_t px = xr_pixels(l->in[0]), py = xr_pixels(l->out[0]);
  int8_t *xs = scratch, *ys = scratch + XR_ALIGN4(px * c4) + XR_SLACK;
  nn_image_params_t xp, yp;
  nn_window_params_t w;
  xr_image(&xp, l->in[0], c4);
  xr_image(&yp, l->out[0], c4);
  xr_window(&w, l->params);
  for (b = 0; b < batch; ++b) {
    const int8_t *X = xr_tensor_data(arena, l->in[0]) + b * px * c;
    int8_t *Y = xr_tensor_data(arena, l->out[0]) + b * py * c;
    const int8_t *xk = X;
    int8_t *yk = c != c4 ? ys : Y;
    if (c != c4) {
      xr_pad(xs, X, px, c, c4);
      xk = xs;
    }
    if (kind == XR_MAXPOOL)
      maxpool2d(yk, xk, &xp, &yp, &w);
    else
      avgpool2d(yk, xk, &xp, &yp, &w);
    if (c != c4) xr_unpad(Y, ys, py, c, c4);
  }
}

/* the element-wise kernels and the global average pool */
static void xr_other(int kind, const xr_layer_t *l, int8_t *arena) {
  const int32_t *p = l->params;
  int8_t *X = xr_tensor_data(arena, l->in[0]), *Y = xr_tensor_data(arena, l->out[0]);
  int32_t b, batch = xr_tensors[l->in[0]].shape[0], c = xr_tensors[l->in[0]].shape[3];
  int32_t px = xr_pixels(l->in[0]) * c;
  nn_image_params_t xp;
  xr_image(&xp, l->in[0], c);
  if (kind == XR_ADD) {
    nn_add_params_t a;
    memset(&a, 0, sizeof a);
    a.input[0].shr = (int16_t)p[0];
    a.input[0].multiplier = (int16_t)p[1];
    a.input[1].shr = (int16_t)p[2];
    a.input[1].multiplier = (int16_t)p[3];
    a.output.bias = p[4];
    a.output.shr = (uint8_t)p[5];
    add_elementwise(Y, X, xr_tensor_data(arena, l->in[1]), &a, 0, (unsigned)xr_bytes(l->out[0]));
  } else if (kind == XR_LOOKUP8) {
    lookup8((uint8_t *)Y, (const uint8_t *)X, (const uint8_t *)l->extra, 0, (unsigned)xr_bytes(l->out[0]));
  } else {
    for (b = 0; b < batch; ++b)
      avgpool2d_global(Y + b * c, X + b * px, p[0], (int8_t)p[1], (uint16_t)p[2], &xp);
  }
}

/* runs every layer in order on the arena (inputs already in place); hook (may be NULL) after each */
int xr_run(int8_t *arena, int8_t *scratch, xr_hook_t hook, void *ctx) {
  int i;
  if (xr_check() != 0) return -1;
  for (i = 0; i < XR_N_LAYERS; ++i) {
    const xr_layer_t *l = &xr_layers[i];
    int kind = xr_kind(i);
    if (xr_conv_like(kind))
      xr_conv(kind, l, arena, scratch);
    else if (kind == XR_FC8 || kind == XR_FC16)
      xr_fc(kind, l, arena, scratch);
    else if (kind == XR_MAXPOOL || kind == XR_AVGPOOL)
      xr_pool(kind, l, arena, scratch);
    else
      xr_other(kind, l, arena);
    if (hook) hook(i, l->out[0], xr_tensor_data(arena, l->out[0]), xr_bytes(l->out[0]), ctx);
  }
  return 0;
}

#ifndef XR_NO_MAIN
static int8_t xr_arena_mem[XR_ARENA_BYTES] __attribute__((aligned(4)));
static int8_t xr_scratch_mem[XR_SCRATCH_BYTES] __attribute__((aligned(4)));

static int xr_write(const char *dir, const char *stem, int index, const int8_t *data, int32_t bytes) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s_%d.bin", dir, stem, index);
  f = fopen(path, "wb");
  if (!f || fwrite(data, 1, (size_t)bytes, f) != (size_t)bytes) {
    fprintf(stderr, "xs3_runner: cannot write %s\n", path);
    if (f) fclose(f);
    return -1;
  }
  return fclose(f) == 0 ? 0 : -1;
}

static void xr_dump(int layer, int tensor, const int8_t *data, int32_t bytes, void *ctx) {
  (void)layer;
  if (xr_write((const char *)ctx, "tensor", tensor, data, bytes) != 0) exit(1);
}

static int xr_read(const char *path, int8_t *dst, int32_t bytes) {
  FILE *f = fopen(path, "rb");
  size_t got;
  int extra;
  if (!f) {
    fprintf(stderr, "xs3_runner: cannot read %s\n", path);
    return -1;
  }
  got = fread(dst, 1, (size_t)bytes, f);
  extra = fgetc(f);
  fclose(f);
  if (got != (size_t)bytes || extra != EOF) {
    fprintf(stderr, "xs3_runner: %s must hold exactly %ld bytes\n", path, (long)bytes);
    return -1;
  }
  return 0;
}

static void xr_list(void) {
  int i;
  printf("%s: %d XS3 layers, arena %ld bytes, scratch %ld bytes\n", XR_MODEL_NAME, XR_N_LAYERS,
         (long)XR_ARENA_SIZE, (long)XR_SCRATCH_SIZE);
  for (i = 0; i < XR_N_INPUTS; ++i)
    printf("input %d: tensor %ld %s, %ld bytes\n", i, (long)xr_inputs[i], xr_tensors[xr_inputs[i]].name,
           (long)xr_bytes(xr_inputs[i]));
  for (i = 0; i < XR_N_OUTPUTS; ++i)
    printf("output %d: tensor %ld %s, %ld bytes\n", i, (long)xr_outputs[i], xr_tensors[xr_outputs[i]].name,
           (long)xr_bytes(xr_outputs[i]));
}

int main(int argc, char **argv) {
  int a = 1, i, dump = 0, poison = 0;
  const char *out;
  while (a < argc && argv[a][0] == '-' && argv[a][1] == '-') {
    if (strcmp(argv[a], "--list") == 0) {
      xr_list();
      return 0;
    } else if (strcmp(argv[a], "--dump") == 0) {
      dump = 1;
    } else if (strcmp(argv[a], "--poison") == 0 && a + 1 < argc) {
      poison = atoi(argv[++a]);
    } else {
      break;
    }
    ++a;
  }
  if (argc - a != 1 + XR_N_INPUTS) {
    fprintf(stderr, "usage: %s [--list] [--dump] [--poison BYTE] OUT_DIR INPUT.bin x %d (raw int8, C order; "
            "--list names them)\n", argv[0], XR_N_INPUTS);
    return 2;
  }
  if (xr_check() != 0) {
    fprintf(stderr, "xs3_runner: %s\n", xr_error);
    return 3;
  }
  memset(xr_arena_mem, poison, sizeof xr_arena_mem);
  memset(xr_scratch_mem, poison, sizeof xr_scratch_mem);
  out = argv[a++];
  for (i = 0; i < XR_N_INPUTS; ++i)
    if (xr_read(argv[a + i], xr_tensor_data(xr_arena_mem, xr_inputs[i]), xr_bytes(xr_inputs[i])) != 0) return 1;
  if (xr_run(xr_arena_mem, xr_scratch_mem, dump ? xr_dump : NULL, (void *)out) != 0) {
    fprintf(stderr, "xs3_runner: %s\n", xr_error);
    return 3;
  }
  for (i = 0; i < XR_N_OUTPUTS; ++i)
    if (xr_write(out, "output", i, xr_tensor_data(xr_arena_mem, xr_outputs[i]), xr_bytes(xr_outputs[i])) != 0)
      return 1;
  return 0;
}
#endif /* XR_NO_MAIN */
"""
