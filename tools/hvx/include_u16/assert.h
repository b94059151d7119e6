/* hexnn-import stand-in for <assert.h> in the single-op harness of op_supernode_16b.c (tools/hvx/op_supernode_u16_d32.py):
 * a failed assertion ends the run with the condition's text (runtime/hvxrt.h rt_fail). */
#ifndef HX_U16_ASSERT_H
#define HX_U16_ASSERT_H
#include "hvxrt.h"
#define assert(c) ((c) ? (void)0 : rt_fail("assert failed: " #c, 134))
#endif
