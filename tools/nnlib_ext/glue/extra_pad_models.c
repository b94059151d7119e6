/* extra area glue (hexnn-import project code, not nnlib): helpers the x86 shim lacks, and scalar models of
 * op_pad.c's HVX fill routines, for QuantizedPad_8.
 *  - do_pad_batch: fills the whole padded batches with the pad byte (nnlib: nn_mcmanager_vmemset32 of the
 *    byte splatted into a word; a byte fill).
 *  - do_pad_edge_hvx: for one batch, fills the output h x w x d block with the pad byte and copies the
 *    input block into it at (pad_h_before, pad_w_before, pad_d_before) (nnlib: HVX stores, same bytes). */
static inline int tensor_type_size(unsigned int type) { return hx_elsize((int)type); }
static inline uint32_t mulu32_sat(uint32_t a, uint32_t b) {
	uint64_t p = (uint64_t)a * b; return p > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)p; }
static void do_pad_batch(struct nn_graph *nn, void *vinfo);
static void do_pad_edge_hvx(struct nn_graph *nn, void *vinfo);

