/* hexnn-import stand-in for <math.h> in the whole-graph build: the op harnesses' (include_os/math.h, include/math.h)
 * plus the prototypes of the functions the whole library calls that our stand-ins define (standin/net_libc.c).
 * Without a prototype, C89 implicit declaration calls ldexpf as `int ldexpf()`: the float argument is promoted to
 * double (passed in a register pair), the int result read back as int, so nnlib's src/qf16.c q2f returned 0 for
 * every value (the InstanceNorm_8_d32 per-depth output ranges of 0 / 0, "squashing output due to zero sd"). */
#ifndef HXNET_MATH_H
#define HXNET_MATH_H
#include_next <math.h>
float ldexpf(float x, int n);
#endif
