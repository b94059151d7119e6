/* hexnn-import stand-in for <linux/futex.h>: the two operations nn_graph_os_linux.h names. */
#ifndef HVX_STANDIN_LINUX_FUTEX_H
#define HVX_STANDIN_LINUX_FUTEX_H
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#endif
