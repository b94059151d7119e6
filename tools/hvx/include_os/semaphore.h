/* hexnn-import stand-in for <semaphore.h>: nn_graph_os_linux.h includes it; nnlib's semaphores are its own. */
#ifndef HVX_STANDIN_SEMAPHORE_H
#define HVX_STANDIN_SEMAPHORE_H
typedef struct { int unused; } sem_t;
#endif
