/* hexnn-import stand-ins (ours, no vendor arithmetic) for the parts of nnlib's graph runtime (nn_graph.h,
 * nn_graph_os*.h, nn_graph_log.h) that an op's execute / check functions touch, for a harness that runs those
 * functions unedited on one node in a single thread under qemu-hexagon. nnlib's own nn_graph_types.h
 * (struct tensor, struct shape, the tensor_* helpers) is used as it is.
 * - struct nn_node / struct nn_graph / struct output: the fields the harnessed code reads, same names and types
 *   as nn_graph.h and nn_graph_if.h (which pull in the whole graph runtime).
 * - Threads: nn_os_work_for_vector runs the work function at once in the caller (the work queue of
 *   nn_graph_os_linux.c with one vector thread); a semaphore is a counter (posts, then the waits consume them).
 * - Scratch: one arena of HX_SCRATCH bytes, 128-byte aligned; nn_scratch_alloc bumps, nn_scratch_reset rewinds.
 *   nn_calloc / nn_memalign take from the runtime's bump allocator (freed when the harness resets it).
 * - errlog counts the error and gives -1 (as nnlib's macro does); logmsg prints nothing.
 * - hx_passes counts nn_sem_wait_n_times calls, hx_resets nn_scratch_reset calls (a harness reads them to report
 *   how often a node ran its loop or called itself again).
 * - hx_escape: see below. */
#ifndef HVX_GRAPH_STANDIN_H
#define HVX_GRAPH_STANDIN_H
#include <stdio.h>
#include "hvxrt.h"
#include "harness_io.h"
#include "nn_graph_types.h"

struct output {
	uint32_t rank;
	uint32_t max_sizes[8];
	uint32_t elementsize;
	int32_t zero_offset;
	float stepsize;
};

struct nn_node {
	struct nn_node_ops *ops;
	const struct tensor **inputs;
	struct tensor **outputs;
	void *input_refs;
	struct output *output_defs;
	uint32_t n_inputs;
	uint32_t n_outputs;
	uint32_t node_type;
	void *opaque;
};

struct nn_graph {
	void *scratch;
	size_t scratch_size;
	volatile int32_t scratch_nextalloc;
};

#define HX_SCRATCH (4u << 20)
static int hx_errors, hx_passes, hx_resets;
/* A harness sets hx_escape (rt_setjmp) to leave a call chain that does not end: after HX_MAX_RESETS calls of
 * nn_scratch_reset in one execution (an op that calls itself again with a new range each time resets its
 * scratch each time) nn_scratch_reset jumps there. */
#define HX_MAX_RESETS 4000
static rt_jmp_buf *hx_escape;

#define errlog(...) (hx_errors++, -1)
#define logmsg(...) ((void)0)

typedef struct { int count; } nn_sem_t;
static inline void nn_sem_init(nn_sem_t *sem, int val) { sem->count = val; }
static inline void nn_sem_post(nn_sem_t *sem) { sem->count++; }
static inline void nn_sem_wait(nn_sem_t *sem) {
	if (sem->count < 1) rt_fail("graph_standin: a wait would block (work not posted)", 5);
	sem->count--;
}
static inline void nn_sem_wait_n_times(nn_sem_t *sem, int nt) {
	hx_passes++;
	if (sem->count < nt) rt_fail("graph_standin: a wait would block (work not posted)", 5);
	sem->count -= nt;
}
static inline void nn_os_work_for_vector(struct nn_graph *nn, void (*f)(struct nn_graph *, void *), void *arg) { f(nn, arg); }
static inline int nn_os_vector_call(struct nn_graph *nn, int (*f)(struct nn_graph *, void *), void *arg) { return f(nn, arg); }

static inline void *nn_calloc(size_t n, size_t sz) { void *p = rt_alloc(n * sz, 128); memset(p, 0, n * sz); return p; }
static inline void *nn_memalign(size_t align, size_t n) { return rt_alloc(n, align < 128 ? 128 : align); }
static inline void nn_free(void *p) { (void)p; }
static inline void *nn_malloc(size_t n) { return rt_alloc(n, 128); }
/* The memcpy manager (nn_graph.h): each copy done at once, in this thread. */
struct nn_memcpy_manager { int pending; };
static inline void nn_mcmanager_init(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; m->pending = 0; }
static inline void nn_mcmanager_vmemcpy(struct nn_graph *nn, struct nn_memcpy_manager *m, void *dst, void const *src,
                                        uint32_t len) { (void)nn; (void)m; memcpy(dst, src, len); }
static inline void nn_mcmanager_wait(struct nn_graph *nn, struct nn_memcpy_manager *m) { (void)nn; (void)m; }
static inline void nn_scratch_reset(struct nn_graph *nn) {
	if (++hx_resets > HX_MAX_RESETS && hx_escape) rt_longjmp(*hx_escape, 1);
	nn->scratch_nextalloc = 0;
}
static inline int nn_scratch_grow(struct nn_graph *nn, size_t bytes) { return bytes <= nn->scratch_size ? 0 : -1; }
static inline void *nn_scratch_alloc(struct nn_graph *nn, size_t bytes) {
	bytes = (bytes + 127) & ~(size_t)127;
	if (nn->scratch_nextalloc + bytes > nn->scratch_size) return NULL;
	void *p = (char *)nn->scratch + nn->scratch_nextalloc;
	nn->scratch_nextalloc += bytes;
	return p;
}
int nn_tensor_out_prepare_normal_fromshape(struct tensor *dst, struct shape const *shp, uint32_t type);

/* A graph with its scratch arena (allocated from the runtime's bump allocator). */
static inline void hx_graph_init(struct nn_graph *nn) {
	nn->scratch = rt_alloc(HX_SCRATCH, 128); nn->scratch_size = HX_SCRATCH; nn->scratch_nextalloc = 0;
}
/* A plain tensor of shape (b, h, w, d) over data (max_size bytes). */
static inline void hx_tensor(struct tensor *t, uint32_t b, uint32_t h, uint32_t w, uint32_t d, void *data,
                             uint32_t max_size, uint32_t type) {
	memset(t, 0, sizeof *t);
	t->shape.batches = b; t->shape.height = h; t->shape.width = w; t->shape.depth = d;
	t->data = data; t->max_size = max_size; t->data_size = b * h * w * d * tensor_type_size(type);
	t->format.type = type; t->format.layout = NN_LAYOUT_PLAIN;
}
/* An op's three outputs: data (n elements of type over max_size bytes), then the floats *omin and *omax;
 * outs[i] points at t_out[i]. */
static inline void hx_outputs(struct tensor t_out[3], struct tensor *outs[3], void *data, uint32_t n,
                              uint32_t max_size, uint32_t type, float *omin, float *omax) {
	hx_tensor(&t_out[0], 1, 1, 1, n, data, max_size, type);
	hx_tensor(&t_out[1], 1, 1, 1, 1, omin, 4, NN_TYPE_FLOAT);
	hx_tensor(&t_out[2], 1, 1, 1, 1, omax, 4, NN_TYPE_FLOAT);
	for (int i = 0; i < 3; i++) outs[i] = &t_out[i];
}
/* Operands A and B of a broadcasting op, shapes sh[0..3] and sh[4..7], as QUINT8 tensors t[0] and t[1] over
 * 128-byte aligned, padded, zeroed buffers holding their codes read from stdin (without them, "<who>: short data"
 * and exit 2). Returns the element count of the broadcast output. */
static inline uint32_t hx_read_operands(const char *who, const int32_t *sh, struct tensor t[2]) {
	uint32_t na = (uint32_t)sh[0] * sh[1] * sh[2] * sh[3], nb = (uint32_t)sh[4] * sh[5] * sh[6] * sh[7], nout = 1;
	for (int i = 0; i < 4; i++) nout *= sh[i] > sh[4 + i] ? sh[i] : sh[4 + i];
	uint32_t pa = hx_padded(na), pb = hx_padded(nb);
	uint8_t *a = rt_alloc(pa, 128), *b = rt_alloc(pb, 128);
	memset(a, 0, pa); memset(b, 0, pb);
	if (rt_read_all(0, a, na) || rt_read_all(0, b, nb)) hx_fail(who, ": short data", 2);
	hx_tensor(&t[0], sh[0], sh[1], sh[2], sh[3], a, pa, NN_TYPE_QUINT8);
	hx_tensor(&t[1], sh[4], sh[5], sh[6], sh[7], b, pb, NN_TYPE_QUINT8);
	return nout;
}
/* A node over n_in inputs and n_out outputs, its other fields zero. */
static inline struct nn_node hx_node(const struct tensor **ins, uint32_t n_in, struct tensor **outs, uint32_t n_out) {
	struct nn_node node = {0};
	node.inputs = ins; node.outputs = outs; node.n_inputs = n_in; node.n_outputs = n_out;
	return node;
}
/* The case loop of a harness whose cases each run in a fresh graph (its scratch from the allocator, which is
 * rewound after the case). */
static inline int hx_run_graph_cases(const char *who, void (*one_case)(struct nn_graph *)) {
	int32_t ncases = hx_case_count(who);
	for (int i = 0; i < ncases; i++) {
		struct nn_graph nn;
		hx_graph_init(&nn);
		one_case(&nn);
		rt_alloc_reset();
	}
	return 0;
}
#endif
