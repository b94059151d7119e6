/* hexnn-import stand-in for <stdlib.h> on freestanding qemu-hexagon (see tools/hvx/runtime). */
#ifndef HVX_STANDIN_STDLIB_H
#define HVX_STANDIN_STDLIB_H
#include <stddef.h>
void abort(void) __attribute__((noreturn));
static inline int abs(int x) { return x < 0 ? -x : x; }
#endif
