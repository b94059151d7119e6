/* hexnn-import stand-in for <assert.h> in the whole-graph build: a failed assertion ends the run with the
 * condition's text (runtime/hvxrt.h rt_fail). */
#ifndef HXNET_ASSERT_H
#define HXNET_ASSERT_H
#include "hvxrt.h"
#define assert(c) ((c) ? (void)0 : rt_fail("assert failed: " #c, 134))
#endif
