/* hexnn-import stand-in for <stdio.h> with nnlib's whole nn_graph.h: the harnesses' stand-in (include/stdio.h)
 * plus the FILE type nn_graph.h's debug prototypes name (nothing here opens a file). */
#ifndef HVX_STANDIN_OS_STDIO_H
#define HVX_STANDIN_OS_STDIO_H
#include_next <stdio.h>
typedef struct hx_file FILE;
#endif
