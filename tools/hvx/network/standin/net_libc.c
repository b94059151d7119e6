/* hexnn-import stand-ins (ours) for the C library functions nnlib's graph sources call, in the freestanding
 * whole-graph build under qemu-hexagon (the runtime, tools/hvx/runtime, has memcpy / memset / memmove / strlen
 * and the division helpers). vsnprintf formats %d %i %u %x %X %p %s %c %f %g %e %% with flags, width and
 * precision (floats in fixed point, enough for log lines: no numeric result depends on it); vprintf writes to
 * stderr (nnlib's log.c prints its errlog / logmsg lines through it under USE_OS_LINUX). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "hvxrt.h"

int memcmp(const void *a, const void *b, size_t n) {
	const unsigned char *p = a, *q = b;
	for (size_t i = 0; i < n; i++) if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
	return 0;
}
int strcmp(const char *a, const char *b) {
	while (*a && *a == *b) { a++; b++; }
	return (unsigned char)*a - (unsigned char)*b;
}
int strncmp(const char *a, const char *b, size_t n) {
	for (; n; n--, a++, b++) { if (*a != *b || !*a) return (unsigned char)*a - (unsigned char)*b; }
	return 0;
}
char *strcpy(char *dst, const char *src) { char *d = dst; while ((*d++ = *src++)) {} return dst; }
char *strncpy(char *dst, const char *src, size_t n) {
	size_t i = 0;
	for (; i < n && src[i]; i++) dst[i] = src[i];
	for (; i < n; i++) dst[i] = 0;
	return dst;
}
char *strchr(const char *s, int c) {
	for (;; s++) { if (*s == (char)c) return (char *)s; if (!*s) return 0; }
}
char *strcat(char *dst, const char *src) { strcpy(dst + strlen(dst), src); return dst; }
char *strdup(const char *s) { size_t n = strlen(s) + 1; char *p = malloc(n); memcpy(p, s, n); return p; }
void abort(void) { rt_fail("abort() called", 134); }

struct sink { char *buf; size_t cap, len; };
static void put(struct sink *s, char c) { if (s->len + 1 < s->cap) s->buf[s->len] = c; s->len++; }
static void put_padded(struct sink *s, const char *str, size_t n, int width, int left, char pad) {
	int fill = width > (int)n ? width - (int)n : 0;
	if (!left) while (fill-- > 0) put(s, pad);
	for (size_t i = 0; i < n; i++) put(s, str[i]);
	if (left) while (fill-- > 0) put(s, ' ');
}
static size_t utoa(char *out, unsigned long long v, unsigned base, int upper) {
	char tmp[24]; size_t n = 0;
	do { unsigned d = (unsigned)(v % base); tmp[n++] = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10); v /= base; } while (v);
	for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
	return n;
}
static size_t ftoa(char *out, float v, int prec) {	/* single precision: no soft double multiply */
	size_t n = 0;
	if (v != v) { memcpy(out, "nan", 3); return 3; }
	if (v < 0) { out[n++] = '-'; v = -v; }
	if (v > 1e18f) { memcpy(out + n, "inf-ish", 7); return n + 7; }
	if (prec > 6) prec = 6;
	float scale = 1; for (int i = 0; i < prec; i++) scale *= 10;
	unsigned long long whole = (unsigned long long)v, frac = (unsigned long long)((v - (float)whole) * scale + 0.5f);
	if (frac >= (unsigned long long)scale) { whole++; frac -= (unsigned long long)scale; }
	n += utoa(out + n, whole, 10, 0);
	if (prec > 0) {
		out[n++] = '.';
		char f[24]; size_t fn = utoa(f, frac, 10, 0);
		for (int i = (int)fn; i < prec; i++) out[n++] = '0';
		memcpy(out + n, f, fn); n += fn;
	}
	return n;
}

int vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
	struct sink s = {buf, cap, 0};
	for (; *fmt; fmt++) {
		if (*fmt != '%') { put(&s, *fmt); continue; }
		int left = 0, width = 0, prec = -1, lng = 0; char pad = ' ';
		for (fmt++; *fmt == '-' || *fmt == '0' || *fmt == '+' || *fmt == ' ' || *fmt == '#'; fmt++) {
			if (*fmt == '-') left = 1; else if (*fmt == '0') pad = '0';
		}
		if (*fmt == '*') { width = va_arg(ap, int); fmt++; } else while (*fmt >= '0' && *fmt <= '9') width = width * 10 + *fmt++ - '0';
		if (*fmt == '.') { prec = 0; fmt++; if (*fmt == '*') { prec = va_arg(ap, int); fmt++; } else while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + *fmt++ - '0'; }
		while (*fmt == 'l' || *fmt == 'h' || *fmt == 'z' || *fmt == 'j' || *fmt == 't') { if (*fmt == 'l') lng++; fmt++; }
		char tmp[64]; size_t n = 0; const char *str = tmp;
		switch (*fmt) {
		case 'd': case 'i': {
			long long v = lng >= 2 ? va_arg(ap, long long) : va_arg(ap, int);
			if (v < 0) { tmp[n++] = '-'; n += utoa(tmp + n, 0ULL - (unsigned long long)v, 10, 0); } else n = utoa(tmp, (unsigned long long)v, 10, 0);
			break; }
		case 'u': case 'x': case 'X': {
			unsigned long long v = lng >= 2 ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
			n = utoa(tmp, v, *fmt == 'u' ? 10 : 16, *fmt == 'X');
			break; }
		case 'p': tmp[0] = '0'; tmp[1] = 'x'; n = 2 + utoa(tmp + 2, (uintptr_t)va_arg(ap, void *), 16, 0); break;
		case 'c': tmp[0] = (char)va_arg(ap, int); n = 1; break;
		case 's': str = va_arg(ap, const char *); if (!str) str = "(null)"; n = strlen(str); if (prec >= 0 && (size_t)prec < n) n = (size_t)prec; break;
		case 'f': case 'g': case 'e': case 'F': case 'G': case 'E': n = ftoa(tmp, (float)va_arg(ap, double), prec < 0 ? 6 : prec); break;
		case '%': tmp[0] = '%'; n = 1; break;
		case 0: fmt--; break;
		default: tmp[0] = '%'; tmp[1] = *fmt; n = 2; break;
		}
		put_padded(&s, str, n, width, left, pad);
	}
	if (cap) buf[s.len < cap ? s.len : cap - 1] = 0;
	return (int)s.len;
}
int snprintf(char *buf, size_t n, const char *fmt, ...) {
	va_list ap; va_start(ap, fmt); int r = vsnprintf(buf, n, fmt, ap); va_end(ap); return r;
}
int sprintf(char *buf, const char *fmt, ...) {
	va_list ap; va_start(ap, fmt); int r = vsnprintf(buf, (size_t)1 << 30, fmt, ap); va_end(ap); return r;
}
int vprintf(const char *fmt, va_list ap) {
	char line[512];
	int r = vsnprintf(line, sizeof line, fmt, ap);
	rt_write_all(2, line, (long)strlen(line));
	return r;
}

/* Files for writing only (nnlib's print_tensor_to_file): openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC). */
struct hx_file { int fd; };
FILE *fopen(const char *path, const char *mode) {
	if (mode[0] != 'w') return 0;
	int fd = rt_openat(-100, path, 01 | 0100 | 01000, 0644);
	if (fd < 0) return 0;
	FILE *f = malloc(sizeof *f);
	f->fd = fd;
	return f;
}
size_t fwrite(const void *p, size_t size, size_t n, FILE *f) { return rt_write_all(f->fd, p, (long)(size * n)) ? 0 : n; }
int fputs(const char *s, FILE *f) { return rt_write_all(f->fd, s, (long)strlen(s)) ? -1 : 0; }
int fclose(FILE *f) { return rt_close(f->fd); }
/* ldexpf (C99 7.12.6.6): x * 2^n, exact but where the result is subnormal or out of range, then rounded once by
 * the float multiply. nnlib's qf16.c q2f calls it (the InstanceNorm ops' per-depth output ranges). Exponents past
 * the float range are applied in two steps (2^127 each, or 2^-102 = 2^-126 * 2^24 so no step lands subnormal). */
float ldexpf(float x, int n) {
	union { float f; uint32_t u; } p;
	for (int k = 0; k < 2 && n > 127; k++) { x *= 0x1p127f; n -= 127; }
	for (int k = 0; k < 2 && n < -126; k++) { x *= 0x1p-102f; n += 102; }
	n = n > 127 ? 127 : n < -126 ? -126 : n;
	p.u = (uint32_t)(0x7f + n) << 23;
	return x * p.f;
}
/* qsort (C99 7.20.5.2): a plain heap sort of ours, in place. nnlib's BoxWithNmsLimit_f / multiclass NMS /
 * proposal ops call it; the device's is the Hexagon SDK's C library, so where the comparator ranks two elements
 * alike (op_box_with_nms_limit_f.c's never returns 0) the order of those two is this sort's, not the device's:
 * a recording is the device's only where the sorted keys are distinct. */
static void qs_swap(unsigned char *a, unsigned char *b, size_t size) {
	for (size_t i = 0; i < size; i++) { unsigned char t = a[i]; a[i] = b[i]; b[i] = t; }
}
static void qs_sift(unsigned char *base, size_t root, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0) child++;
		if (cmp(base + root * size, base + child * size) >= 0) return;
		qs_swap(base + root * size, base + child * size, size);
	}
}
void qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
	unsigned char *base = v;
	for (size_t i = n / 2; i-- > 0;) qs_sift(base, i, n, size, cmp);
	for (size_t end = n; end-- > 1;) { qs_swap(base, base + end * size, size); qs_sift(base, 0, end, size, cmp); }
}
