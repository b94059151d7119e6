/* hexnn-import stand-in for <locale.h>: hvx_inlines.h only tests LC_COLLATE_MASK to detect a
 * Hexagon tools >= 8.0 compiler, which clang 14's HVX intrinsics headers are. */
#ifndef HVX_STANDIN_LOCALE_H
#define HVX_STANDIN_LOCALE_H
#define LC_COLLATE_MASK 1
#endif
