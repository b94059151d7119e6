/* hexnn-import stand-in for <stdlib.h> with nnlib's whole nn_graph.h: the harnesses' stand-in (include/stdlib.h)
 * plus the allocator nn_graph_os.h wraps (bodies in graph_os_standin.c, over the runtime's bump allocator). */
#ifndef HVX_STANDIN_OS_STDLIB_H
#define HVX_STANDIN_OS_STDLIB_H
#include_next <stdlib.h>
void *malloc(size_t n);
void *calloc(size_t n, size_t sz);
void *realloc(void *p, size_t n);
void *memalign(size_t align, size_t n);
void free(void *p);
#endif
