/* hexnn-import stand-ins (ours, no vendor arithmetic) for the parts of nnlib's graph runtime and OS layer
 * (src/nn_os.c, nn_graph.c, newnode.c, the libc allocator) that an op source compiled WHOLE against nnlib's
 * real nn_graph.h calls, for a harness that runs one node's check() and execute() in a single thread under
 * qemu-hexagon (graph_standin.h is the lighter variant for harnesses that extract single functions).
 * - Vector work: nn_os_work_for_vector / nn_os_worklist_for_vector run each work item at once, in order, in
 *   the caller (nnlib's vector pipe is FIFO; with one worker a work item only waits on posts made before it).
 *   nnlib's own semaphores (nn_os_portable.h, asm_src/nn_os_fast.S) are used as they are; a wait that would
 *   block ends in include_os/unistd.h's futex stand-in, which fails loudly.
 * - Scratch: nn->scratch is set by the harness; nn_scratch_grow accepts what fits, else fails.
 * - VTCM: the harness points nn->vtcm_ptr at ordinary memory, as nn_os_qurt.c's nn_os_vtcm_fake_acquire does on a
 *   device without VTCM; acquire / release do nothing.
 * - Heap: calloc / malloc / memalign / realloc from the runtime's bump allocator (free does nothing).
 * - errlog counts (hx_errors) and keeps the first message's format string (hx_first_error); logmsg prints nothing. */
#include "hvxrt.h"
#include <nn_graph.h>

static int hx_errors;
static const char *hx_first_error;

int nn_errlog_function(const char *filename, unsigned int line, struct nn_graph *nn, const char *fmt, ...) {
	(void)filename; (void)line; (void)nn;
	if (!hx_errors++) hx_first_error = fmt;
	return -1;
}
void nn_logmsg_function(const char *filename, unsigned int line, struct nn_graph *nn, int level, const char *fmt, ...) {
	(void)filename; (void)line; (void)nn; (void)level; (void)fmt;
}

void nn_os_work_for_vector(struct nn_graph *nn, void (*f)(struct nn_graph *, void *), void *arg) { f(nn, arg); }
void nn_os_worklist_for_vector(struct nn_graph *nn, nn_os_workitem_t *items, int n_items) {
	for (int i = 0; i < n_items; i++) items[i].f(nn, items[i].arg);
}
int nn_os_vector_call(struct nn_graph *nn, int (*f)(struct nn_graph *, void *), void *arg) { return f(nn, arg); }
int nn_os_vtcm_acquire(struct nn_graph *nn) { (void)nn; return 0; }
int nn_os_vtcm_release(struct nn_graph *nn) { (void)nn; return 0; }

int nn_scratch_grow(struct nn_graph *nn, size_t bytes) {
	if (bytes > nn->scratch_size) rt_fail("graph_os_standin: scratch too small for nn_scratch_grow", 7);
	return 0;
}

void *memalign(size_t align, size_t n) {
	if (align < 128) align = 128;
	uintptr_t p = (uintptr_t)rt_alloc(n + align, 128);
	return (void *)((p + align - 1) & ~(uintptr_t)(align - 1));
}
void *malloc(size_t n) { return memalign(128, n); }
void *calloc(size_t n, size_t sz) { void *p = memalign(128, n * sz); memset(p, 0, n * sz); return p; }
void *realloc(void *old, size_t n) {
	void *p = memalign(128, n);
	if (old) memcpy(p, old, n);	/* bump allocator: the old block is at least as far from the arena end */
	return p;
}
void free(void *p) { (void)p; }

/* The graph's node constructor and destructor: the harness builds its node itself. */
struct nn_node *node_alloc_common(struct nn_graph *nn, uint32_t node_id, op_type operation, padding_type padding,
                                  uint32_t num_inputs, uint32_t num_outputs, const struct input *inputs,
                                  const struct output *outputs) {
	rt_fail("graph_os_standin: node_alloc_common is not stood in", 7);
}
int node_free_common(struct nn_node *node, struct nn_graph *nn) { (void)node; (void)nn; return 0; }

/* The helper clang's Hexagon back end calls for large aligned struct copies (compiler-rt's, not linked here). */
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *dst, const void *src, size_t n) {
	return memcpy(dst, src, n);
}

/* ceil for doubles (IEEE: exact; |x| >= 2^52 is already an integer; keeps the sign of a zero result). */
double ceil(double x) {
	if (!(x == x) || x >= 4503599627370496.0 || x <= -4503599627370496.0) return x;
	double t = (double)(long long)x;
	if (t < x) t += 1.0;
	return t == 0.0 ? (x < 0.0 ? -0.0 : t) : t;
}
