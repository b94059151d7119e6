/* hexnn-import stand-in for <stdlib.h> in the whole-graph build: the OS stand-ins' (allocator, abort, abs) plus
 * rand() for op_extract_glimpse.c (its noise fill; no body: reaching it ends the run with its name). */
#ifndef HXNET_STDLIB_H
#define HXNET_STDLIB_H
#include_next <stdlib.h>
#define RAND_MAX 0x7fffffff
int rand(void);
int atoi(const char *s);
#endif
