/* hexnn-import runtime self-test (ours): the helpers that stand in for the Hexagon toolchain's libraries,
 * run under qemu-hexagon and checked by golden_hvx.py --selftest against numpy / Python (IEEE float32
 * division, floorf, roundf, round, fmaxf / fminf, sqrtf, 32- and 64-bit signed / unsigned division and remainder).
 * stdin: int32 n, then n records of (float a, float b, int32 i, int32 j, int64 k, int64 l).
 * stdout: n records of (float a/b, floorf(a), roundf(a), fmaxf(a,b), fminf(a,b), int32 i/j, i%j, uint32 i/j, i%j,
 * int64 k/l, k%l, uint64 k/l, k%l, round((double)a), sqrtf(a)). */
#include "hvxrt.h"
#include <math.h>

int main(void) {
  int32_t n;
  if (rt_read_all(0, &n, 4)) rt_fail("selftest: no count", 2);
  for (int r = 0; r < n; r++) {
    struct { float a, b; int32_t i, j; int64_t k, l; } in;
    struct { float q, fl, rd, mx, mn; int32_t qi, ri; uint32_t qu, ru; int64_t qk, rk; uint64_t qv, rv; double rdd; float sq; } out;
    if (rt_read_all(0, &in, sizeof in)) rt_fail("selftest: short record", 2);
    volatile float a = in.a, b = in.b;   /* keep the division a run-time call */
    volatile int32_t i = in.i, j = in.j;
    volatile int64_t k = in.k, l = in.l;
    out.q = a / b; out.fl = floorf(a); out.rd = roundf(a); out.mx = fmaxf(a, b); out.mn = fminf(a, b);
    out.qi = i / j; out.ri = i % j; out.qu = (uint32_t)i / (uint32_t)j; out.ru = (uint32_t)i % (uint32_t)j;
    out.qk = k / l; out.rk = k % l; out.qv = (uint64_t)k / (uint64_t)l; out.rv = (uint64_t)k % (uint64_t)l;
    out.rdd = round((double)a);
    out.sq = sqrtf(a);
    rt_write_all(1, &out, sizeof out);
  }
  return 0;
}
