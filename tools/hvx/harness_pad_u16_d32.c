/* hexnn-import harness (ours) for QuantizedPad_u16_d32 as nnlib registers it (op_pad_d32.c: .check = pad_d32_check,
 * .execute = pad_d32_execute): harness_pad_d32.c's node, stdin and stdout with uint16 codes, the d32 input laid out
 * by harness_u16_d32.h (default padding, padding 0). */
#include "harness_u16_d32.h"

#define HX_CODE uint16_t
#define HX_D32_IN hx_d32_in_u16
#define HX_WRITE_D32 hx_write_d32_result_u16
#define HX_PAD_OPS nn_ops_for_QuantizedPad_u16_d32
#define HX_PAD_TYPE OP_QuantizedPad_u16_d32
#define HX_NAME "pad_u16_d32"
#include "harness_pad_d32.c"
