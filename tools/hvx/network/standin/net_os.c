/* hexnn-import stand-ins (ours, no vendor arithmetic) for nnlib's src/nn_os.c in the whole-graph build under
 * qemu-hexagon, which runs one thread. The op harnesses' graph_os_standin.c is included for what it stands in
 * (vector work run at once in the caller, in order; the allocator over the runtime's bump arena; clang's aligned
 * memcpy helper; ceil); the functions nnlib's own graph sources define (log.c, scratch.c, newnode.c,
 * nn_os_posix.c) are renamed away from it, so nnlib's own are linked.
 * nn_os.c's worker threads: hexagon_nn_init's nn_os_workers_spawn creates none; acquiring / releasing the vector
 * workers (execute.c, prepare.c) has nothing to do; scalar work runs at once like vector work. */
#define nn_errlog_function hxgs_errlog_function
#define nn_logmsg_function hxgs_logmsg_function
#define nn_scratch_grow hxgs_scratch_grow
#define nn_os_vtcm_acquire hxgs_vtcm_acquire
#define nn_os_vtcm_release hxgs_vtcm_release
#define node_alloc_common hxgs_node_alloc_common
#define node_free_common hxgs_node_free_common
#include "../../graph_os_standin.c"
#undef nn_errlog_function
#undef nn_logmsg_function
#undef nn_scratch_grow
#undef nn_os_vtcm_acquire
#undef nn_os_vtcm_release
#undef node_alloc_common
#undef node_free_common

int Num_Vector_Threads = 1;
int Total_Threads = 1;
int Stack_Size = 16384;
int VTCM_User_Req = -1;

int nn_os_workers_spawn(struct nn_graph *nn) { (void)nn; return 0; }
void nn_os_workers_kill(struct nn_graph *nn) { (void)nn; }
void nn_os_vector_workers_acquire(struct nn_graph *nn) { (void)nn; }
void nn_os_vector_workers_release(struct nn_graph *nn) { (void)nn; }
void nn_os_work_for_scalar(struct nn_graph *nn, void (*f)(struct nn_graph *, void *), void *arg) { f(nn, arg); }
int nn_os_careful_free(struct nn_graph *nn, int ret) { (void)nn; return ret; }
void nn_os_join_n_threads(struct nn_graph *nn, int n_threads) { (void)nn; (void)n_threads; }
int nn_os_update_main_thread_priority(struct nn_graph *nn, int *priority) { (void)nn; if (priority) *priority = 0; return 0; }
int nn_os_restore_main_thread_priority(struct nn_graph *nn, int priority) { (void)nn; (void)priority; return 0; }

/* The Linux PMU files nn_os_linux.c reads for per-node performance counts (no such files under qemu-hexagon):
 * every counter reads 0; no output depends on them. */
#include <pmu_control_linux.h>
int pmu_init() { return 0; }
unsigned long pmu_read_file(const char *fn) { (void)fn; return 0; }
unsigned long long pmu_read_file_llu(const char *fn) { (void)fn; return 0; }
void pmu_write_pmuevtcfg(uint32_t val) { (void)val; }
void pmu_write_enable(uint32_t val) { (void)val; }
