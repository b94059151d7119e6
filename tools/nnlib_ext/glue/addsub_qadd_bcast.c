/* HAND-WRITTEN (not nnlib code) for the addsub harness row "QuantizedAdd_8p8to8 [addsub: broadcast]".
 * 1. A scalar model of hexagon/asm_src/quant_add_spec_h.S (quant_add_spec_asm), per element, from the
 *    instructions (Hexagon V6x PRM): x = (a ^ 0x80) as int8 in the high byte (vxor, vshuffoe);
 *    xs = sat16((x * ialpha * 2 + 0x8000) >> 16) (vmpy:<<1:rnd:sat); z = wrap16(xs + wrap16(b + ikappa))
 *    (vzxt, vadd, vadd); u = sat16((z * recip * 2 + 0x8000) >> 16); out = usat8(wrap16(u - offset))
 *    (vsub, vsat); min/max of z over every element of the ceil(length/128) vectors (the rows use whole
 *    vectors only), stored as 64 copies of max then 64 copies of min (vdeal/vmax reduction).
 * 2. Stand-ins: NN_TYPE_QINT8 (a 1-byte type, absent from the shim), vmemcpy_asm = memcpy.
 * 3. hx_addsub_qadd_bcast: runs qadd_888_check (first run) and qadd_888_hvx on one node whose
 *    struct qadd_888_info is kept by the caller between runs. */
#define NN_TYPE_QINT8 NN_TYPE_QUINT8
static inline void vmemcpy_asm(void *d, const void *s, int n) { memcpy(d, s, n); }
static void quant_add_spec_asm(uint8_t *aq, uint8_t *bq, short ialpha, short ikappa, short offset, short recip,
                               uint8_t *cq, int16_t *ptr_max, int length) {
	int nv = ((length - 1) >> 7) + 1, mn = 0x7fff, mx = -0x8000;
	for (int i = 0; i < nv * 128; i++) {
		int64_t x = (int64_t)(int8_t)(aq[i] ^ 0x80) * 256;
		int64_t xs = (x * ialpha * 2 + 0x8000) >> 16; xs = xs < -32768 ? -32768 : xs > 32767 ? 32767 : xs;
		int16_t w = (int16_t)(uint16_t)(bq[i] + ikappa);
		int16_t z = (int16_t)(uint16_t)(xs + w);
		if (z < mn) mn = z; if (z > mx) mx = z;
		int64_t u = ((int64_t)z * recip * 2 + 0x8000) >> 16; u = u < -32768 ? -32768 : u > 32767 ? 32767 : u;
		int16_t v = (int16_t)(uint16_t)(u - offset);
		cq[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
	for (int k = 0; k < 64; k++) { ptr_max[k] = (int16_t)mx; ptr_max[64 + k] = (int16_t)mn; }
}
/*SPLIT*/
static char *hx_qb_scratch;
int hx_addsub_qadd_bcast(int n_in, struct hx_td *ins, struct hx_td *outs, void *info_blob, int first) {
	const size_t sz = 16u << 20;
	struct tensor ti[8], to[3]; const struct tensor *pi[8]; struct tensor *po[3];
	if (!hx_qb_scratch && posix_memalign((void **)&hx_qb_scratch, 128, sz)) return -98;
	memset(hx_qb_scratch, 0, sz);
	for (int k = 0; k < n_in; k++) { ti[k] = hx_t(ins[k].data, ins[k].b, ins[k].h, ins[k].w, ins[k].d, ins[k].max_size);
		ti[k].data_size = ins[k].data_size; pi[k] = &ti[k]; }
	for (int k = 0; k < 3; k++) { to[k] = hx_t(outs[k].data, outs[k].b, outs[k].h, outs[k].w, outs[k].d, outs[k].max_size);
		to[k].data_size = 0; po[k] = &to[k]; }
	struct nn_graph nn; memset(&nn, 0, sizeof nn); nn.scratch = hx_qb_scratch; nn.scratch_size = sz;
	struct output od = {4, {1, 1, 1, outs[0].max_size}, 1};
	struct nn_node node; memset(&node, 0, sizeof node);
	node.inputs = pi; node.outputs = po; node.n_inputs = n_in; node.n_outputs = 3; node.output_defs = &od;
	if (first) { int r = qadd_888_check(&node, &nn); if (r) return r;
		memcpy(info_blob, node.opaque, sizeof(struct qadd_888_info)); free(node.opaque); }
	node.opaque = info_blob;
	int r = qadd_888_hvx(&nn, &node);
	for (int k = 0; k < 3; k++) { outs[k].b = to[k].shape.batches; outs[k].h = to[k].shape.height;
		outs[k].w = to[k].shape.width; outs[k].d = to[k].shape.depth; outs[k].data_size = to[k].data_size; }
	return r;
}
