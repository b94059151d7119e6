/* extra area glue (hexnn-import project code, not nnlib) for QuantizedResizeBilinear_8:
 *  - the HVX fast paths resizebilinear_2x / _4x / _hvx are NOT modelled: stubs that record an error (the
 *    compare loop draws only shapes that take resizebilinear_general or the same-size copy);
 *    weight_generation (the HVX path's plan) is a failing stub too;
 *  - nn_mcmanager_* (DMA/HVX memcpy manager) as plain memcpy; bufpool (HVX path only) as no-ops;
 *  - batchslice_decode (include/nn_atomic.h) re-written: jobno -> (jobno / inner, jobno % inner). */
#include "nn_bufferpool.h"
struct bilin_runstate;
int hx_extra_resize_fastpath_hit;
#define HX_RB_STUB(nm) void nm(const uint8_t *in, uint8_t *out, int32_t h_in, int32_t w_in, int32_t d_in, \
	int32_t h_out, int32_t w_out, int32_t h_in_end, struct bilin_runstate *rtsp) { hx_extra_resize_fastpath_hit = 1; }
HX_RB_STUB(resizebilinear_2x)
HX_RB_STUB(resizebilinear_4x)
HX_RB_STUB(resizebilinear_hvx)
struct nn_memcpy_manager { int unused; };
static inline void nn_mcmanager_init(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; (void)m; }
static inline void nn_mcmanager_vmemcpy(struct nn_graph *nn, struct nn_memcpy_manager *m, void *d, const void *s, uint32_t n)
	{ (void)nn; (void)m; memcpy(d, s, n); }
static inline void nn_mcmanager_wait(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; (void)m; }
typedef struct { int inner_count, ibatch; } batchslice_decode;
static inline void batchslice_decode_init(batchslice_decode *b, int inner) { b->inner_count = inner; b->ibatch = 0; }
static inline int batchslice_decode_update(batchslice_decode *b, int jobno)
	{ b->ibatch = jobno / b->inner_count; return jobno % b->inner_count; }
static int weight_generation(struct nn_node *self, struct bilin_runstate *r)   /* HVX path's plan: not modelled */
	{ (void)self; (void)r; hx_extra_resize_fastpath_hit = 1; return -1; }
