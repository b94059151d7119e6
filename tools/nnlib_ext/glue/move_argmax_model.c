/* move area glue (project code, not nnlib): scalar models of op_argmax.c's two HVX row kernels, called by the
 * verbatim argmax_thread_work for ArgMax_8toInt32 when the reduced axis has stride 1.
 *  - horizontal_argmax128_hvx (dim <= 128): lanes are masked with Q6_Q_vsetq_R(dim), which sets the first
 *    (dim mod 128) lanes (HVX: Rt & (VLEN-1)), so dim == 128 masks every lane to 0; each lane is packed as
 *    (value << 8) | (127 - lane) (Q6_Wb_vshuffoe_VbVb with const_InverseCount128) and the uint16 maximum is
 *    taken: the largest value, ties to the lowest lane; the result is 127 - (max & 0xff).
 *  - horizontal_argmax_hvx (dim > 128): running vmax over 128-byte chunks (the partial last chunk only in its
 *    first dim%128 lanes), then the lowest lane equal to the max, chunk by chunk: the first index of the max. */
static void horizontal_argmax128_hvx(argmax_job_info *jobinfo, const int dim)
{
	unsigned best = 0;
	for (int i = 0; i < 128; i++) {
		unsigned v = (i < (dim & 127)) ? jobinfo->src[i] : 0;
		unsigned packed = (v << 8) | (unsigned)(127 - i);
		if (packed > best) best = packed;
	}
	*jobinfo->dst = 127 - (int)(best & 0xff);
}
static void horizontal_argmax_hvx(argmax_job_info *jobinfo, const int dim)
{
	int idx = 0; uint8_t mx = jobinfo->src[0];
	for (int i = 1; i < dim; i++) if (jobinfo->src[i] > mx) { mx = jobinfo->src[i]; idx = i; }
	*jobinfo->dst = idx;
}
