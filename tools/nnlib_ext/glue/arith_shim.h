/* arith glue (hand-written, not nnlib): names the compiled nnlib pieces use that the harness shim spells
   differently. */
#ifndef ARITH_SHIM_H
#define ARITH_SHIM_H
#include <nn_atomic.h>
#define nn_tensor_copy(dst, src) tensor_copy(dst, src)
#define nn_tensor_out_prepare_normal_fromshape(t, s, ty) tensor_out_prepare_normal_fromshape(t, s, ty)
#endif
