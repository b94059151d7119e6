/* hexnn-import stand-in for <string.h> on freestanding qemu-hexagon (see tools/hvx/runtime). */
#ifndef HVX_STANDIN_STRING_H
#define HVX_STANDIN_STRING_H
#include <stddef.h>
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
size_t strlen(const char *s);
#endif
