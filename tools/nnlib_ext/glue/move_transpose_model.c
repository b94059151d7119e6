/* move area glue (project code, not nnlib): model of gentranspose.c's HVX strategies.
 * nn_transpose_analyze_direct (compiled verbatim) picks transpose_execute_HVXFUNC with one of the HVX thread
 * functions (k64_deal6, A8xB8x16, 1vec_shuffle4, deal2, shuf2_6b, bulktranspose) for some table shapes. Each of
 * them moves exactly the bytes the strategy table describes: for every outer index and every index of table rows
 * 1..4, table[0].n contiguous bytes from  in + sum(i_k * in_stride_k)  to  out + sum(i_k * out_stride_k)
 * (rows past n_dims hold n = 1). This model walks the table that way; it does not model the HVX register work,
 * only its result (a permutation of bytes, nothing is computed). */
static int transpose_execute_HVXFUNC(struct nn_graph *nn, struct nn_transpose_desc const *tdp, void *buffer,
		uint8_t *output, uint8_t const *input)
{
	(void)nn; (void)buffer;
	struct nn_transpose_tabrow const *t = tdp->table;
	unsigned n0 = t[0].n;
	for (int io = 0; io < (int)tdp->n_outer; io++)
	 for (unsigned i4 = 0; i4 < t[4].n; i4++)
	  for (unsigned i3 = 0; i3 < t[3].n; i3++)
	   for (unsigned i2 = 0; i2 < t[2].n; i2++)
	    for (unsigned i1 = 0; i1 < t[1].n; i1++) {
		size_t oi = (size_t)io * tdp->outer_in_stride + i4 * t[4].in_stride + i3 * t[3].in_stride + i2 * t[2].in_stride + i1 * t[1].in_stride;
		size_t oo = (size_t)io * tdp->outer_out_stride + i4 * t[4].out_stride + i3 * t[3].out_stride + i2 * t[2].out_stride + i1 * t[1].out_stride;
		memcpy(output + oo, input + oi, n0);
	    }
	return 0;
}
int hx_move_transpose_hvx_hits;   /* how often the modelled HVX path ran (reported by the compare loop) */
#define HX_STUB(f) static void f(struct nn_graph *nn, void *p) { (void)nn; (void)p; }
HX_STUB(transpose_thread_k64_deal6) HX_STUB(transpose_thread_A8xB8x16) HX_STUB(transpose_thread_1vec_shuffle4)
HX_STUB(transpose_thread_deal2) HX_STUB(transpose_thread_bulktranspose) HX_STUB(transpose_thread_shuf2_6b)
