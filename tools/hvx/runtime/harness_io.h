/* hexnn-import: the stdin / stdout framing every golden harness shares (ours, no vendor code). A harness reads
 * int32 ncases, then each case's own header and data; per case it writes what its comment says, most as
 * hx_write_result does. */
#ifndef HVX_HARNESS_IO_H
#define HVX_HARNESS_IO_H
#include "hvxrt.h"

/* Bytes for n bytes of tensor data as nnlib allocates them: rounded up to 128 and one more vector. */
static inline uint32_t hx_padded(uint32_t n) { return ((n + 127) & ~127u) + 128; }

/* "<who><what>" on stderr and exit(code). */
static inline void hx_fail(const char *who, const char *what, int code) __attribute__((noreturn));
static inline void hx_fail(const char *who, const char *what, int code) {
  rt_write_all(2, who, (long)strlen(who));
  rt_fail(what, code);
}

/* The case count at the head of stdin; without it, "<who>: no case count" and exit 2. */
static inline int32_t hx_case_count(const char *who) {
  int32_t ncases;
  if (rt_read_all(0, &ncases, 4)) hx_fail(who, ": no case count", 2);
  return ncases;
}

/* A 128-byte aligned, zeroed buffer of bytes bytes, its first n read from stdin (without them, "<who>: short
 * data" and exit 2). */
static inline void *hx_read_input(const char *who, long n, uint32_t bytes) {
  void *p = rt_alloc(bytes, 128);
  memset(p, 0, bytes);
  if (rt_read_all(0, p, n)) hx_fail(who, ": short data", 2);
  return p;
}

/* The case loop of a harness whose cases allocate afresh: one_case, then the allocator rewound. */
static inline int hx_run_cases(const char *who, void (*one_case)(void)) {
  int32_t ncases = hx_case_count(who);
  for (int i = 0; i < ncases; i++) {
    one_case();
    rt_alloc_reset();
  }
  return 0;
}

/* One result: int32 status (0 ok, 1 the C's error), float out_min, out_max, then nbytes of output. */
static inline void hx_write_result(int32_t status, float omin, float omax, const void *out, long nbytes) {
  float res[2] = {omin, omax};
  rt_write_all(1, &status, 4);
  rt_write_all(1, res, sizeof res);
  rt_write_all(1, out, nbytes);
}
#endif
