/* move area glue (project code, not nnlib): include/quantize.h's quantize_uint8 with the DEVICE's float -> int
 * conversion. Same expression; the C cast `int32_t value_i = roundf(value_f)` is convert_sf2w:chop on Hexagon
 * (saturating: a zero-width range gives +-huge -> INT32_MAX/MIN -> 255/0), while x86's cvttss2si gives INT32_MIN
 * for every out-of-range value. The verbatim code compiled after this calls this version. */
static inline uint8_t hx_dev_quantize_uint8(float val, float minval, float maxval)
{
	float range = fmaxf(1e-18f, maxval - minval);
	float resize_amt = 255.0f / range;
	float value_f = (val - minval) * resize_amt;
	float r = roundf(value_f);
	int32_t value_i = (r != r) ? -1 : (r >= 2147483648.0f) ? INT32_MAX : (r < -2147483648.0f) ? INT32_MIN : (int32_t)r;
	return saturate_u8(value_i);
}
#define quantize_uint8 hx_dev_quantize_uint8
