/* hexnn-import stand-in for <sys/syscall.h>: the futex syscall number nn_graph_os_linux.h names. */
#ifndef HVX_STANDIN_SYS_SYSCALL_H
#define HVX_STANDIN_SYS_SYSCALL_H
#define SYS_futex 98
#endif
