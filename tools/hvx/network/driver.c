/* hexnn-import driver (ours) for a whole hexagon_nn graph under qemu-hexagon: builds the graph through nnlib's own
 * API with the emitted graph C (GRAPH_BUILD = <prefix>_build: hexagon_nn_init, every hexagon_nn_append_*_node,
 * hexagon_nn_prepare with every op's check()), then runs hexagon_nn_execute_new once per input set.
 * stdin (little-endian int32 unless said): n_in, n_out, n_runs, fresh, debug_level, dump; with dump = 1 a
 * 256-byte path prefix follows (nnlib's own tensor print, print_tensor_to_file, then writes every node's outputs
 * after it runs, in logical order, to <prefix>_<node id hex>_<output>.dat); per input b, h, w, d, elementsize; per output its capacity in bytes; then per run every input's bytes in order.
 * fresh = 1 tears the graph down and builds it again before each run after the first (a run then starts from the
 * prepared state, as the engine's does). stdout per run: the execute return code, then per output b, h, w, d,
 * data_valid_len and that many bytes. A failing build ends with exit 3 and nnlib's first error line on stderr. */
#include <nn_graph.h>
#include "hvxrt.h"
#include <stdio.h>

int GRAPH_BUILD(hexagon_nn_nn_id *id);
struct nn_graph *nn_id_to_graph(nn_id_t id);
int hexagon_nn_op_id_to_name(const unsigned int id, char *name, int name_len);
static int32_t debug_level, dump;
static char dump_prefix[256];

#define MAX_IO 16
static int32_t get(void) {
	int32_t v;
	if (rt_read_all(0, &v, 4)) rt_fail("driver: short header", 2);
	return v;
}
static void put(int32_t v) { rt_write_all(1, &v, 4); }

/* With dump on: the prepared graph, one line per node in execution order, to <prefix>_graph.txt:
 * "id op padding n_inputs src:idx ... | n_outputs b,h,w,d:elementsize ..." (what localise.py matches node ids by). */
static void print_graph(struct nn_graph *nn) {
	char path[300], line[4096], name[64];
	snprintf(path, sizeof path, "%s_graph.txt", dump_prefix);
	FILE *f = fopen(path, "w");
	if (!f) rt_fail("driver: cannot write the graph listing", 2);
	for (struct nn_node *n = nn->head; n; n = n->next) {
		if (hexagon_nn_op_id_to_name(n->node_type, name, sizeof name)) snprintf(name, sizeof name, "op%u", (unsigned)n->node_type);
		int pos = snprintf(line, sizeof line, "%x %s %d %u", (unsigned)n->node_id, name, (int)n->padding, (unsigned)n->n_inputs);
		for (uint32_t i = 0; i < n->n_inputs && pos < (int)sizeof line - 64; i++)
			pos += snprintf(line + pos, sizeof line - pos, " %x:%u", (unsigned)n->input_refs[i].src_id,
			                (unsigned)n->input_refs[i].output_idx);
		pos += snprintf(line + pos, sizeof line - pos, " | %u", (unsigned)n->n_outputs);
		for (uint32_t i = 0; i < n->n_outputs && pos < (int)sizeof line - 64; i++) {
			const struct output *o = &n->output_defs[i];
			pos += snprintf(line + pos, sizeof line - pos, " %u,%u,%u,%u:%u", (unsigned)o->max_sizes[0],
			                (unsigned)o->max_sizes[1], (unsigned)o->max_sizes[2], (unsigned)o->max_sizes[3],
			                (unsigned)o->elementsize);
		}
		snprintf(line + pos, sizeof line - pos, "\n");
		fputs(line, f);
	}
	fclose(f);
}

static hexagon_nn_nn_id build(void) {
	hexagon_nn_nn_id id;
	int rc = GRAPH_BUILD(&id);
	if (rc) rt_fail("driver: graph build (init / append / prepare) failed", 3);
	hexagon_nn_set_debug_level(id, debug_level);
	if (dump) {
		struct nn_graph *nn = nn_id_to_graph(id);
		nn->enable_tensor_print = 1;
		nn->enable_tensor_print_prefix = dump_prefix;
		if (!nn->debug_level) nn->debug_level = 1;
		print_graph(nn);
	}
	return id;
}

int main(void) {
	int32_t n_in = get(), n_out = get(), n_runs = get(), fresh = get();
	debug_level = get();
	dump = get();
	if (dump && rt_read_all(0, dump_prefix, sizeof dump_prefix)) rt_fail("driver: short dump prefix", 2);
	dump_prefix[sizeof dump_prefix - 1] = 0;
	if (n_in < 1 || n_in > MAX_IO || n_out < 1 || n_out > MAX_IO) rt_fail("driver: bad input / output count", 2);
	hexagon_nn_tensordef ins[MAX_IO], outs[MAX_IO];
	for (int i = 0; i < n_in; i++) {
		int32_t b = get(), h = get(), w = get(), d = get(), es = get();
		uint32_t n = (uint32_t)(b * h * w * d * es);
		ins[i] = (hexagon_nn_tensordef){.batches = b, .height = h, .width = w, .depth = d,
		                                .data = rt_alloc(n + 128, 128), .dataLen = n, .data_valid_len = n};
	}
	for (int i = 0; i < n_out; i++) {
		int32_t cap = get();
		outs[i] = (hexagon_nn_tensordef){.data = rt_alloc(cap + 128, 128), .dataLen = cap};
	}
	hexagon_nn_nn_id id = build();
	for (int r = 0; r < n_runs; r++) {
		for (int i = 0; i < n_in; i++)
			if (rt_read_all(0, ins[i].data, ins[i].dataLen)) rt_fail("driver: short input data", 2);
		if (r > 0 && fresh) { hexagon_nn_teardown(id); id = build(); }
		int rc = hexagon_nn_execute_new(id, ins, n_in, outs, n_out);
		put(rc);
		for (int i = 0; i < n_out; i++) {
			put(outs[i].batches); put(outs[i].height); put(outs[i].width); put(outs[i].depth);
			uint32_t len = rc ? 0 : outs[i].data_valid_len;
			put((int32_t)len);
			rt_write_all(1, outs[i].data, len);
		}
	}
	return 0;
}
