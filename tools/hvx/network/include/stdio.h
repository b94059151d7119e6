/* hexnn-import stand-in for <stdio.h> in the whole-graph build: the op harnesses' stand-ins (printf goes nowhere,
 * FILE) plus the formatting nnlib's log.c uses; bodies in standin/net_libc.c (vprintf writes to stderr, so nnlib's
 * own errlog / logmsg lines reach the driver's stderr). */
#ifndef HXNET_STDIO_H
#define HXNET_STDIO_H
#include_next <stdio.h>
#include <stdarg.h>
int vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int snprintf(char *buf, size_t n, const char *fmt, ...);
int vprintf(const char *fmt, va_list ap);
int sprintf(char *buf, const char *fmt, ...);
/* Files (nnlib's print_tensor_to_file, which the driver's tensor dump turns on): written through the runtime's
 * openat / write / close, which qemu-hexagon passes to the host. */
FILE *fopen(const char *path, const char *mode);
size_t fwrite(const void *p, size_t size, size_t n, FILE *f);
int fputs(const char *s, FILE *f);
int fclose(FILE *f);
#endif
