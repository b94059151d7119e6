/* HAND-WRITTEN glue (project code, not nnlib) for the Supernode output-stage rows.
 *
 * Part 0 (before the verbatim pieces): stand-ins for the types supernode_info_new names but
 * whose contents the extracted functions never touch (threading, buffers, early work), and the
 * Hexagon conversion fast_i64_roundf (nn_asm_ops.h: Q6_P_convert_sf2d_R, round-to-nearest-EVEN
 * in the default USR mode; nnlib's x86 branch would use roundf).  memset helpers as nn_asm_ops.h. */
typedef struct { int unused; } nn_checkpoint_t;
struct nn_os_bufstack_t { int unused; };
struct buffer_pool { int unused; };
struct nn_early_work { int unused; };
typedef int nn_os_workitem_t;
typedef void (*dwconv2dbbb_t)(void);
struct workitem;
static inline int64_t fast_i64_roundf(float f) { return (int64_t)nearbyintf(f); }
static inline void memset_uint32(uint32_t *p, uint32_t v, int n) { for (int i = 0; i < n; i++) p[i] = v; }
static inline void memset_float(float *p, float v, int n) { for (int i = 0; i < n; i++) p[i] = v; }
int adjust_minmax_for_zero_with_constraints(float *min_p, float *max_p, int constraint);
/*SPLIT*/
/* Part 1 (after the verbatim pieces): a model of one supernode node's life.
 *   check:   supernode_check / dwise_supernode_check (the lines that matter for the output stage:
 *            weight level & zero, gemsumb, channel scales, find_k_kinv, setup_initial_output_range)
 *   execute: loop { fill_info_minmax_basics; fill_bias_buf; per-element HVX arithmetic;
 *                   supernode_execute_workitem_check_for_retry } with the retry rules of
 *            supernode_execute_hvx (conv: at most 3 computations, the range already widened by the
 *            third's check is reported) and dwise_supernode_execute (at most 5, then an error).
 * The product sums are computed here directly (the exact integer convolution with the zero points
 * the node uses); the per-element arithmetic is the HAND-WRITTEN MODEL of asm_src
 * gvconv2dbbb_d32_v60_h.S / dwconv2dbbb_*_h.S:
 *   s = biasbuf + suma + sum(x*w)  (32-bit wrapping vadd/vrmpy; = biasbuf + gemsumb*in_offset + exact sum)
 *   s = vasl(s, recip_shamt)       (32-bit wrap)
 *   y = vmpye(s, recip.uh) + vmpyo(s, recip.h):<<1:rnd:sat  == sat32((s*recip + 2^30) >> 31)
 *   out = vpack sat -> 0..255;  minval/maxval = min/max of y (per lane, reduced). */
static int32_t hx_wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int32_t hx_y(int32_t s, int shamt, uint32_t recip) {
	int32_t a = hx_wrap32((int64_t)((uint64_t)(uint32_t)s << shamt));
	int64_t y = ((int64_t)a * (int64_t)recip + (1LL << 30)) >> 31;
	return y > INT32_MAX ? INT32_MAX : y < INT32_MIN ? INT32_MIN : (int32_t)y;
}

/* consts_out (int64): [0]=recip_shamt [1]=recip_val [2]=in_offset [3]=filt_offset, then per channel
 * recip[c] and biasbuf[c] + gemsumb[c]*in_offset (of the last computation); fl_out: prod_level_size,
 * output_level_size, then the output range and first-guess flag that computation started from. */
int hx_sn_run(int is_dwise, int bias32, int padding,
              const uint8_t *x, int b, int h, int w, int din,
              const uint8_t *filt, int fh, int fw, int fd, int fb, int sh, int sw,
              float in_min, float in_max, float filt_min, float filt_max,
              const void *bias, float bmin, float bmax, float omin, float omax, const float *cscale, int n_cs,
              int nruns, uint8_t *out, float *ranges, int64_t *consts_out, float *fl_out)
{
	int dout = is_dwise ? fd * fb : fb;
	int dpad = (dout + 31) & ~31;
	int oh = nn_pad_compute_outsize(h, fh, sh, padding), ow = nn_pad_compute_outsize(w, fw, sw, padding);
	int pt = nn_pad_compute_before(h, fh, sh, padding), pl = nn_pad_compute_before(w, fw, sw, padding);
	struct supernode_info_new info; memset(&info, 0, sizeof info);
	float kf[4096], kr[4096]; int32_t gsum[4096], bbuf[4096]; uint32_t rcp[4096];
	if (dpad > 4096) return -90;
	info.k_factor = kf; info.k_factor_recip = kr; info.gemsumb = gsum; info.biasbuf = bbuf; info.recip = rcp;
	info.out_depth_valid = dout;
	/* weights: level size and zero as the two check functions find them */
	int filt_offset;
	if (is_dwise) {
		filt_offset = quantize_uint8(0.0f, filt_min, filt_max);
		info.weights_level_size = (filt_max - filt_min) / (255.0f * 1.0f);
	} else {
		float lev; filt_offset = get_qu8_level_size_zero(filt_min, filt_max, &lev);
		info.weights_level_size = lev;
	}
	info.filt_offset = filt_offset;
	/* gemsumb: conv (V60, unsigned weights) = sum of the u8 weights over fh*fw*roundup32(din), the
	 * depth padding filled with filt_offset; dwise (dwise_sumb) = sum of (w - filt_offset). */
	int dinr = (din + 31) & ~31;
	for (int c = 0; c < dout; c++) {
		int32_t s = 0;
		if (is_dwise) { for (int i = 0; i < fh * fw; i++) s += filt[i * dout + c] - filt_offset; }
		else { for (int i = 0; i < fh * fw; i++) for (int d = 0; d < dinr; d++) s += d < din ? filt[(i * din + d) * dout + c] : filt_offset; }
		gsum[c] = s;
	}
	struct nn_node node; memset(&node, 0, sizeof node);
	HX_SCALAR(tinmin, in_min); HX_SCALAR(tinmax, in_max);
	HX_SCALAR(tbmin, bmin); HX_SCALAR(tbmax, bmax);
	struct tensor tbias = hx_t((void *)bias, 1, 1, 1, dout, dout * (bias32 ? 4 : 1));
	struct tensor tcs = hx_t((void *)cscale, 1, 1, 1, n_cs, n_cs * 4);   /* n_cs: dout, or 1 (a single 1.0) */
	const struct tensor *ins[13] = {0};
	ins[2] = &tinmin; ins[3] = &tinmax; ins[7] = &tbias; ins[8] = &tbmin; ins[9] = &tbmax; ins[12] = &tcs;
	node.inputs = ins; node.n_inputs = cscale ? 13 : 12; node.opaque = &info;
	struct nn_graph nn; memset(&nn, 0, sizeof nn);
	float const *csf = NULL;
	if (check_channelscale_present(&nn, &node, dout, &csf) != 0) return -2;
	if (load_channel_scales(&nn, &info, csf, dout) != 0) return -3;
	find_k_kinv(&nn, &info, dpad);
	if (setup_initial_output_range(&nn, &info, omin, omax, is_dwise ? -0.125f : 0.0f, is_dwise ? 0.125f : 0.5f)) return -4;
	int64_t *sums = malloc(sizeof(int64_t) * (size_t)b * oh * ow * dout + 8);
	int have_sums = 0;
	for (int run = 0; run < nruns; run++) {
		int loops = 0;
		info.recursion_depth = 0;
		while (1) {
			fl_out[2] = info.out_minval; fl_out[3] = info.out_maxval; fl_out[4] = info.outrange_firstguess;
			if (fill_info_minmax_basics(&nn, &node, &info) != 0) { free(sums); return -5; }
			if (fill_bias_buf(&nn, &node, &info, bias32, 0) != 0) { free(sums); return -6; }
			if (!have_sums) {   /* exact sum of (x - in_offset)(w - filt_offset); padding contributes 0 */
				int xz = info.in_offset;
				for (int n = 0; n < b; n++) for (int oy = 0; oy < oh; oy++) for (int ox = 0; ox < ow; ox++)
				for (int c = 0; c < dout; c++) {
					int64_t s = 0;
					for (int ky = 0; ky < fh; ky++) for (int kx = 0; kx < fw; kx++) {
						int iy = oy * sh - pt + ky, ix = ox * sw - pl + kx;
						if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
						const uint8_t *xp = x + (((size_t)n * h + iy) * w + ix) * din;
						if (is_dwise) s += (int64_t)(xp[c / fb] - xz) * (filt[(ky * fw + kx) * dout + c] - filt_offset);
						else for (int d = 0; d < din; d++) s += (int64_t)(xp[d] - xz) * (filt[((ky * fw + kx) * din + d) * dout + c] - filt_offset);
					}
					sums[(((size_t)n * oh + oy) * ow + ox) * dout + c] = s;
				}
				have_sums = 1;
			}
			info.minval = 1 << 24; info.maxval = -(1 << 24);
			size_t np = (size_t)b * oh * ow;
			for (size_t p = 0; p < np; p++) for (int c = 0; c < dout; c++) {
				int64_t gx = is_dwise ? (int64_t)gsum[c] * info.in_offset : (int64_t)gsum[c] * info.in_offset;
				int32_t s = hx_wrap32((int64_t)bbuf[c] + gx + sums[p * dout + c]);
				int32_t y = hx_y(s, info.recip_shamt, rcp[c]);
				if (y < info.minval) info.minval = y;
				if (y > info.maxval) info.maxval = y;
				out[p * dout + c] = y < 0 ? 0 : y > 255 ? 255 : y;
			}
			supernode_execute_workitem_check_for_retry(NULL, &node, &nn);
			if (!info.needs_retry) break;
			if (is_dwise) { if (++loops > 4) { free(sums); return -7; } }
			else if (++info.recursion_depth >= 3) break;
			info.needs_retry = 0;
		}
		info.needs_retry = 0;
		ranges[2 * run] = info.out_minval; ranges[2 * run + 1] = info.out_maxval;
	}
	free(sums);
	consts_out[0] = info.recip_shamt; consts_out[1] = info.recip_val; consts_out[2] = info.in_offset; consts_out[3] = filt_offset;
	for (int c = 0; c < dout; c++) { consts_out[4 + c] = rcp[c]; consts_out[4 + dout + c] = (int64_t)bbuf[c] + (int64_t)gsum[c] * info.in_offset; }
	fl_out[0] = info.prod_level_size; fl_out[1] = info.output_level_size;
	return 0;
}
