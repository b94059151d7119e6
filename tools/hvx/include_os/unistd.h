/* hexnn-import stand-in for <unistd.h>: syscall() for nn_graph_os_linux.h's futex calls; a harness runs one
 * thread, so a futex wait would never be woken: it fails loudly instead (runtime/hvxrt.h rt_fail). */
#ifndef HVX_STANDIN_UNISTD_H
#define HVX_STANDIN_UNISTD_H
#include "hvxrt.h"
static inline long syscall(long nr, ...) { (void)nr; rt_fail("include_os: a futex call in a one-thread harness", 6); }
#endif
