/* hexnn-import stand-in (force-included into nnlib's interface.c only) for the QuRT system-environment calls it
 * makes outside its USE_OS_QURT blocks: the device reports Hexagon v66 with 128-byte HVX units and 4 hardware
 * threads (check_processor_version accepts v66; the thread counts set there do not matter: nn_os here runs every
 * work item at once in the caller). */
#ifndef HXNET_QURT_H
#define HXNET_QURT_H 1
typedef struct { unsigned int arch_version; } qurt_arch_version_t;
typedef struct { unsigned int max_hthreads; } qurt_sysenv_max_hthreads_t;
static inline int qurt_sysenv_get_arch_version(qurt_arch_version_t *v) { v->arch_version = 0x66; return 0; }
static inline int qurt_hvx_get_units(void) { return 0x400; }
static inline int qurt_sysenv_get_max_hw_threads(qurt_sysenv_max_hthreads_t *t) { t->max_hthreads = 4; return 0; }
#endif
