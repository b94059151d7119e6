/* hexnn-import's libm stand-ins for freestanding qemu-hexagon: only what the harnessed nnlib code calls.
 * fmaxf / fminf / fmax / fmin follow C99 (a NaN operand gives the other operand; +0 > -0 is not required). Our own code. */
#include <math.h>

float fmaxf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return a < b ? b : a;
}
float fminf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return b < a ? b : a;
}
double fmax(double a, double b) {
  if (a != a) return b;
  if (b != b) return a;
  return a < b ? b : a;
}
double fmin(double a, double b) {
  if (a != a) return b;
  if (b != b) return a;
  return b < a ? b : a;
}

/* float32 division, correctly rounded (ties to even, subnormals included): the helper clang's Hexagon back
 * end calls for '/'. Integer long division of the 24-bit significands with a sticky bit, then one rounding. */
#include <stdint.h>
static uint32_t f2u(float f) { union { float f; uint32_t u; } x = { f }; return x.u; }
static float u2f(uint32_t u) { union { uint32_t u; float f; } x = { u }; return x.f; }

/* value = q * 2**e (plus less than one unit of q when sticky): round to float32 with sign. */
static float round_pack(uint32_t sign, uint64_t q, int e, int sticky) {
  int len = 64 - __builtin_clzll(q);
  int s = len - 24, E = e + s + 23 + 127;
  if (E <= 0) { s += 1 - E; E = 0; }
  uint64_t m;
  if (s <= 0) {
    m = q << -s;
  } else {
    if (s > 62) s = 62;
    uint64_t rem = q & ((1ull << s) - 1), half = 1ull << (s - 1);
    m = q >> s;
    if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
  }
  uint64_t bits = (E > 0 ? ((uint64_t)(E - 1) << 23) : 0) + m;
  if (bits >= 0x7F800000u) bits = 0x7F800000u;
  return u2f(sign | (uint32_t)bits);
}

static uint32_t unpack(uint32_t u, int *e) {  /* significand with the bit 2**23 set, value = m * 2**(*e) */
  uint32_t m = u & 0x7FFFFF; int E = (u >> 23) & 0xFF;
  if (E) { *e = E - 150; return m | 0x800000; }
  int sh = __builtin_clz(m) - 8;
  *e = -149 - sh;
  return m << sh;
}

float __hexagon_divsf3(float a, float b) {
  uint32_t ua = f2u(a), ub = f2u(b), sign = (ua ^ ub) & 0x80000000u;
  uint32_t aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu;
  if (aa > 0x7F800000u || ab > 0x7F800000u) return u2f(0x7FC00000u);
  if (aa == 0x7F800000u) return ab == 0x7F800000u ? u2f(0x7FC00000u) : u2f(sign | 0x7F800000u);
  if (ab == 0x7F800000u) return u2f(sign);
  if (ab == 0) return aa == 0 ? u2f(0x7FC00000u) : u2f(sign | 0x7F800000u);
  if (aa == 0) return u2f(sign);
  int ea, eb;
  uint64_t ma = unpack(aa, &ea), mb = unpack(ab, &eb);
  uint64_t num = ma << 40, q = num / mb;
  return round_pack(sign, q, ea - eb - 40, (num - q * mb) != 0);
}

/* sqrtf, correctly rounded: integer square root of the significand scaled to 50-52 bits, the remainder as sticky. */
float sqrtf(float x) {
  uint32_t u = f2u(x);
  if (x != x || x == 0.0f || u == 0x7F800000u) return x;          /* NaN, +-0, +Inf */
  if (u >> 31) return u2f(0x7FC00000u);
  int e;
  uint64_t m = unpack(u, &e);
  if (e & 1) { m <<= 1; e -= 1; }
  m <<= 26; e -= 26;                                 /* the root has 25-26 bits: one to round on */
  uint64_t r = 0, bit = 1ull << 62, rem = m;
  while (bit > rem) bit >>= 2;
  while (bit) {
    if (rem >= r + bit) { rem -= r + bit; r = (r >> 1) + bit; } else r >>= 1;
    bit >>= 2;
  }
  return round_pack(0, r, e / 2, rem != 0);
}

/* floorf, exact: clears the fraction bits of the float32 and steps down for negative non-integers. */
float floorf(float x) {
  uint32_t u = f2u(x);
  int e = (int)((u >> 23) & 0xFF) - 127;
  if (e >= 23) return x;                               /* integral, Inf or NaN */
  if (e < 0) return (u >> 31) ? ((u << 1) ? -1.0f : x) : u2f(u & 0x80000000u);
  uint32_t frac = 0x7FFFFFu >> e;
  if ((u & frac) == 0) return x;
  if (u >> 31) u += frac;                              /* toward -inf: bump the magnitude first */
  return u2f(u & ~frac);
}

/* roundf, exact: halfway cases away from zero (C99), by adding half a unit of the kept bits to the magnitude. */
float roundf(float x) {
  uint32_t u = f2u(x);
  int e = (int)((u >> 23) & 0xFF) - 127;
  if (e >= 23) return x;                               /* integral, Inf or NaN */
  if (e < -1) return u2f(u & 0x80000000u);             /* |x| < 0.5 */
  if (e == -1) return u2f((u & 0x80000000u) | 0x3F800000u);  /* 0.5 <= |x| < 1 */
  uint32_t frac = 0x7FFFFFu >> e;
  return u2f((u + (0x400000u >> e)) & ~frac);
}

/* round (double), exact: halfway cases away from zero (C99), as roundf on the 52-bit significand. */
double round(double x) {
  union { double d; uint64_t u; } v = { x };
  int e = (int)((v.u >> 52) & 0x7FF) - 1023;
  if (e >= 52) return x;
  if (e < -1) { v.u &= 0x8000000000000000ull; return v.d; }
  if (e == -1) { v.u = (v.u & 0x8000000000000000ull) | 0x3FF0000000000000ull; return v.d; }
  uint64_t frac = 0xFFFFFFFFFFFFFull >> e;
  v.u = (v.u + (0x8000000000000ull >> e)) & ~frac;
  return v.d;
}
