/* move area glue (hexnn-import project code, not nnlib): x86 stand-ins for the helpers the data-movement ops
 * call and the harness shim lacks. All are plain byte copies; on the device they are HVX / multi-thread copies
 * of the same bytes (nn_mcmanager_* run vmemcpy in vector threads; vmemcpy_asm / vmemcpy_2d_general_asm are
 * asm copies). Strides may be negative (op_mirrorpad.c copies rows backwards with stride -rowsize). */
#ifndef HX_MOVE_SHIM
#define HX_MOVE_SHIM 1
struct nn_memcpy_manager { int unused; };
static inline void nn_mcmanager_init(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; (void)m; }
static inline void nn_mcmanager_wait(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; (void)m; }
static inline void nn_mcmanager_vmemcpy(struct nn_graph *nn, struct nn_memcpy_manager *m, void *dst, void const *src, unsigned len)
{ (void)nn; (void)m; memmove(dst, src, len); }
static inline void nn_mcmanager_vmemcpy_2d(struct nn_graph *nn, struct nn_memcpy_manager *m, int width, int height,
		void *dst, unsigned dst_stride, void const *src, unsigned src_stride)
{	(void)nn; (void)m;
	for (int i = 0; i < height; i++)
		memmove((char *)dst + (ptrdiff_t)i * (int)dst_stride, (char const *)src + (ptrdiff_t)i * (int)src_stride, width); }
static inline int nn_mcmanager_tensor_copy(struct nn_graph *nn, struct nn_memcpy_manager *m, struct tensor *dst, const struct tensor *src)
{ (void)nn; (void)m; return tensor_copy(dst, src); }
static inline void vmemcpy_asm(void *dst, const void *src, int len) { memmove(dst, src, len); }
static inline void vmemcpy_2d_general_asm(unsigned width, unsigned height, void *dst, int dst_stride, void const *src, int src_stride)
{ for (unsigned i = 0; i < height; i++) memmove((char *)dst + (ptrdiff_t)i * dst_stride, (char const *)src + (ptrdiff_t)i * src_stride, width); }
static inline uint32_t mulu32_sat(uint32_t a, uint32_t b) {
	uint64_t p = (uint64_t)a * b; return p > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)p; }
static inline int shape_apparent_rank(struct shape const *s) {   /* nn_graph_types.h semantics */
	return s->batches > 1 ? 4 : s->height > 1 ? 3 : s->width > 1 ? 2 : s->depth > 1 ? 1 : 0; }
static inline int Q6_R_popcount_P(uint64_t x) { return __builtin_popcountll(x); }
static inline int Q6_R_ct0_R(uint32_t x) { return x ? __builtin_ctz(x) : 32; }
static inline int Q6_R_cl0_R(uint32_t x) { return x ? __builtin_clz(x) : 32; }
static inline void *nn_memalign(size_t a, size_t n) { (void)a; return malloc(n); }
static inline void nn_free(void *p) { free(p); }
static inline int tensor_type_size(unsigned int t) { return hx_elsize((int)t); }
#define __builtin_assume(x) ((void)0)
/* the shim's element-type enum lacks the plain 8-bit types; only their 1-byte size matters here */
#define NN_TYPE_UINT8 NN_TYPE_QUINT8
#define NN_TYPE_QINT8 NN_TYPE_QUINT8
#endif
