/* hexnn-import harness (ours) for QuantizedAdd_u16_d32 / QuantizedSub_u16_d32 / QuantizedMul_u16_d32 as nnlib
 * registers them (op_addsubmul16_d32.c: .check = addsub16_d32_check, .execute = addsub_d32_execute_common):
 * harness_add_d32.c's node, stdin and stdout with uint16 codes, both inputs laid out by harness_u16_d32.h (default
 * padding, padding 0). */
#include "harness_u16_d32.h"

#define HX_CODE uint16_t
#define HX_D32_IN hx_d32_in_u16
#define HX_WRITE_D32 hx_write_d32_result_u16
#define HX_ADD_OPS {&nn_ops_for_QuantizedAdd_u16_d32, &nn_ops_for_QuantizedSub_u16_d32, &nn_ops_for_QuantizedMul_u16_d32}
#define HX_ADD_TYPES {OP_QuantizedAdd_u16_d32, OP_QuantizedSub_u16_d32, OP_QuantizedMul_u16_d32}
#define HX_NAME "add_u16_d32"
#include "harness_add_d32.c"
