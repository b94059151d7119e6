/* arith glue (HAND-WRITTEN, not nnlib): scalar models of the few HVX intrinsics used by the unary ops the
   arith rows compile (op_neg.c unary_op_execute's run functions, op_sqrt.c sqrt_execute_hvx). Semantics from
   the Hexagon V6x HVX programmer's reference; each lane is computed as the instruction defines it.
   The shim's HVX_Vector is 32 int32 lanes (128 bytes). */
#ifndef ARITH_HVX_H
#define ARITH_HVX_H
#include <stdint.h>
#include <string.h>
typedef union { HVX_Vector v; int32_t w[32]; uint8_t ub[128]; } arith_hv;
static inline HVX_Vector arith_vsplat(int32_t x) { arith_hv r; for (int i = 0; i < 32; i++) r.w[i] = x; return r.v; }
static inline HVX_Vector arith_vzero(void) { return arith_vsplat(0); }
static inline HVX_Vector arith_vxor(HVX_Vector a, HVX_Vector b) { arith_hv x = {a}, y = {b}; for (int i = 0; i < 32; i++) x.w[i] ^= y.w[i]; return x.v; }
static inline HVX_Vector arith_vand(HVX_Vector a, HVX_Vector b) { arith_hv x = {a}, y = {b}; for (int i = 0; i < 32; i++) x.w[i] &= y.w[i]; return x.v; }
static inline HVX_Vector arith_vnot(HVX_Vector a) { arith_hv x = {a}; for (int i = 0; i < 32; i++) x.w[i] = ~x.w[i]; return x.v; }
static inline int32_t arith_sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }
/* Vw_vsub_VwVw_sat: per 32-bit lane a - b, saturated to int32 */
static inline HVX_Vector arith_vsubw_sat(HVX_Vector a, HVX_Vector b) { arith_hv x = {a}, y = {b}; for (int i = 0; i < 32; i++) x.w[i] = arith_sat32((int64_t)x.w[i] - y.w[i]); return x.v; }
/* Vw_vabs_Vw_sat: per 32-bit lane |a|, saturated (|INT32_MIN| -> INT32_MAX) */
static inline HVX_Vector arith_vabsw_sat(HVX_Vector a) { arith_hv x = {a}; for (int i = 0; i < 32; i++) x.w[i] = arith_sat32(x.w[i] < 0 ? -(int64_t)x.w[i] : x.w[i]); return x.v; }
/* The byte-table lookup idiom of op_sqrt.c / op_div.c: Vb_vshuff_Vb on each 128-byte half of a 256-entry
   table, then vlut32 / vlut32or with segments 0..7. vlut32 with segment s picks, for each byte whose value
   lies in s's 32-entry block, the entry of the (shuffled) table half; together the eight calls are a plain
   256-entry table lookup. Modelled as such: vshuff is the identity here and vlut32 indexes the unshuffled
   half directly (entry v & 127 of the half), ORing into the result only for the bytes of block s. */
static inline HVX_Vector arith_vshuff_b(HVX_Vector a) { return a; }
static inline HVX_Vector arith_vlut32or(HVX_Vector acc, HVX_Vector idx, HVX_Vector lut, int seg) {
	arith_hv r = {acc}, x = {idx}, t = {lut};
	for (int i = 0; i < 128; i++) if ((x.ub[i] >> 5) == seg) r.ub[i] |= t.ub[x.ub[i] & 127];
	return r.v; }
static inline HVX_Vector arith_vlut32(HVX_Vector idx, HVX_Vector lut, int seg) { return arith_vlut32or(arith_vzero(), idx, lut, seg); }
#define Q6_V_vsplat_R arith_vsplat
#define Q6_V_vzero arith_vzero
#define Q6_V_vxor_VV arith_vxor
#define Q6_V_vand_VV arith_vand
#define Q6_V_vnot_V arith_vnot
#define Q6_Vw_vsub_VwVw_sat arith_vsubw_sat
#define Q6_Vw_vabs_Vw_sat arith_vabsw_sat
#define Q6_Vb_vshuff_Vb arith_vshuff_b
#define q6op_Vb_vlut32_VbVbI arith_vlut32
#define q6op_Vb_vlut32or_VbVbVbI arith_vlut32or
#endif
