/* hexnn-import stand-in for <string.h> in the whole-graph build: the runtime's (memcpy, memset, memmove, strlen)
 * plus the string functions nnlib's graph code calls; bodies in standin/net_libc.c. */
#ifndef HXNET_STRING_H
#define HXNET_STRING_H
#include_next <string.h>
int memcmp(const void *a, const void *b, size_t n);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *dst, const char *src);
char *strncpy(char *dst, const char *src, size_t n);
char *strchr(const char *s, int c);
char *strcat(char *dst, const char *src);
char *strdup(const char *s);
#endif
