/* hexnn-import stand-in for <math.h> on freestanding qemu-hexagon: the few functions nnlib's inline
 * helpers name; bodies in tools/hvx/runtime/hvxmath.c (our own code). */
#ifndef HVX_STANDIN_MATH_H
#define HVX_STANDIN_MATH_H
#define copysignf __builtin_copysignf
#define fabsf __builtin_fabsf
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
float fmaxf(float a, float b);
float fminf(float a, float b);
float floorf(float x);
float roundf(float x);
double round(double x);
double fmax(double a, double b);
float sqrtf(float x);
float expf(float x);    /* declared for nnlib's prototypes; no body in the runtime (a harness that links it says why) */
float expm1f(float x);
double fmin(double a, double b);
#endif
