/* HAND-WRITTEN glue (project code, not nnlib): on Hexagon, C's float -> int conversion is convert_sf2w:chop,
 * which saturates to INT32_MIN / INT32_MAX and gives -1 for NaN; x86's cvttss2si gives INT32_MIN for all of
 * these. The verbatim nnlib code compiled after this sees include/quantize.h's roundf_i32 - same expression,
 * (int)(val + copysignf(0.5f, val)) - with the device's conversion. */
static inline int32_t hx_dev_roundf_i32(float val)
{
	float v = val + copysignf(0.5f, val);
	if (v != v) return -1;
	if (v >= 2147483648.0f) return INT32_MAX;
	if (v < -2147483648.0f) return INT32_MIN;
	return (int32_t)v;
}
#define roundf_i32 hx_dev_roundf_i32
