/* extra area glue (project code): definitions of the two models declared in extra_pad_models.c */
static void do_pad_batch(struct nn_graph *nn, void *vinfo) {
	struct tdata_pad_batch *t = vinfo; uint8_t *out = t->optr;
	memset(out, t->padval & 0xff, (size_t)t->pad_b_before * t->non_batch_outsize);
	memset(out + (size_t)(t->pad_b_before + t->b_in) * t->non_batch_outsize, t->padval & 0xff,
	       (size_t)t->pad_b_after * t->non_batch_outsize);
}
static void do_pad_edge_hvx(struct nn_graph *nn, void *vinfo) {
	struct tdata_pad *t = vinfo; const uint8_t *in = t->iptr; uint8_t *out = t->optr; int es = t->element_size;
	int h_out = t->h_in + t->pad_h_before + t->pad_h_after, w_out = t->w_in + t->pad_w_before + t->pad_w_after;
	int d_out = t->d_in + t->pad_d_before + t->pad_d_after;
	memset(out, t->padval & 0xff, (size_t)h_out * w_out * d_out * es);
	for (int y = 0; y < t->h_in; y++)
		for (int x = 0; x < t->w_in; x++)
			memcpy(out + (((size_t)(y + t->pad_h_before) * w_out + x + t->pad_w_before) * d_out + t->pad_d_before) * es,
			       in + (((size_t)y * t->w_in + x) * t->d_in) * es, (size_t)t->d_in * es);
}
