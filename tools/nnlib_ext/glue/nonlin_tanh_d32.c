/* nonlin glue (hand-written, not nnlib): a minimal run state holding only the fields that
 * op_tanh_d32.c's operate_ref_function reads, and an entry point that runs it on the 256 codes. */
struct hx_addr_min { int height_stride; };
struct tanh_run_state {
	struct shape shape;
	struct hx_addr_min tin, tout;
	struct tanh_scaling_parms sparms;
};
/*SPLIT*/
/* table of op_tanh_d32.c for [mn, mx]: operate_ref_function on one row of 8 d32 slices (codes 0..255) */
int hx_tanh_d32_table(float mn, float mx, int is_sigmoid, uint8_t *out)
{
	struct tanh_run_state r;
	uint8_t in[256];
	memset(&r, 0, sizeof r);
	for (int i = 0; i < 256; i++) in[i] = (uint8_t)i;
	set_scaling_parms(&r.sparms, mn, mx, is_sigmoid);
	r.shape.batches = 1; r.shape.height = 1; r.shape.width = 8; r.shape.depth = 32;
	r.tin.height_stride = 256; r.tout.height_stride = 256;
	operate_ref_function(&r, out, in, 32, 0);
	return 0;
}
