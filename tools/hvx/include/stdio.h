/* hexnn-import stand-in for <stdio.h>: nothing in the harnesses prints through stdio. */
#ifndef HVX_STANDIN_STDIO_H
#define HVX_STANDIN_STDIO_H
#include <stddef.h>
#endif
