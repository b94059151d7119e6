/* hexnn-import stand-in for <pthread.h> (nn_graph_os_linux.h's types) for a single-threaded harness under
 * qemu-hexagon: the types only; nothing here creates a thread. */
#ifndef HVX_STANDIN_PTHREAD_H
#define HVX_STANDIN_PTHREAD_H
#include <stddef.h>
typedef unsigned long pthread_t;
typedef struct { int unused; } pthread_attr_t;
typedef struct { int unused; } pthread_mutex_t;
#define PTHREAD_MUTEX_INITIALIZER {0}
int pthread_join(pthread_t t, void **ret);
int pthread_attr_init(pthread_attr_t *a);
int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);
int pthread_attr_setstacksize(pthread_attr_t *a, size_t n);
int pthread_attr_setstack(pthread_attr_t *a, void *p, size_t n);
#endif
