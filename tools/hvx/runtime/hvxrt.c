/* hexnn-import's freestanding runtime for Linux user-mode qemu-hexagon: _start, the Linux syscalls
 * (trap0(#1), number in r6: write 64, read 63, openat 56, close 57, exit 93), memcpy / memset, a bump
 * allocator, and the integer-division helpers clang emits calls to on Hexagon. Our own code. */
#include "hvxrt.h"

static long sys3(long nr, long a, long b, long c) {
  register long r0 asm("r0") = a; register long r1 asm("r1") = b; register long r2 asm("r2") = c;
  register long r6 asm("r6") = nr;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
static long sys4(long nr, long a, long b, long c, long d) {
  register long r0 asm("r0") = a; register long r1 asm("r1") = b; register long r2 asm("r2") = c;
  register long r3 asm("r3") = d; register long r6 asm("r6") = nr;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r6) : "memory");
  return r0;
}

long rt_write(int fd, const void *buf, long n) { return sys3(64, fd, (long)buf, n); }
long rt_read(int fd, void *buf, long n) { return sys3(63, fd, (long)buf, n); }
int rt_openat(int dirfd, const char *path, int flags, int mode) { return (int)sys4(56, dirfd, (long)path, flags, mode); }
int rt_close(int fd) { return (int)sys3(57, fd, 0, 0); }
void rt_exit(int code) { sys3(93, code, 0, 0); for (;;) {} }

int rt_read_all(int fd, void *buf, long n) {
  char *p = buf;
  while (n > 0) { long k = rt_read(fd, p, n); if (k <= 0) return -1; p += k; n -= k; }
  return 0;
}
int rt_write_all(int fd, const void *buf, long n) {
  const char *p = buf;
  while (n > 0) { long k = rt_write(fd, p, n); if (k <= 0) return -1; p += k; n -= k; }
  return 0;
}
void rt_fail(const char *msg, int code) { rt_write_all(2, msg, (long)strlen(msg)); rt_write_all(2, "\n", 1); rt_exit(code); }

#define ARENA_BYTES (64u << 20)
static unsigned char arena[ARENA_BYTES] __attribute__((aligned(128)));
static size_t arena_used;
void *rt_alloc(size_t n, size_t align) {
  size_t at = (arena_used + align - 1) & ~(align - 1);
  if (at + n > ARENA_BYTES) rt_fail("hvxrt: arena exhausted", 3);
  arena_used = at + n;
  return arena + at;
}
void rt_alloc_reset(void) { arena_used = 0; }

void *memcpy(void *dst, const void *src, size_t n) {
  unsigned char *d = dst; const unsigned char *s = src;
  while (n--) *d++ = *s++;
  return dst;
}
void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst; const unsigned char *s = src;
  if (d < s) while (n--) *d++ = *s++;
  else { d += n; s += n; while (n--) *--d = *--s; }
  return dst;
}
void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}
size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }

/* Integer division helpers (shift-subtract), the names clang's Hexagon back end calls. */
static uint32_t udiv32(uint32_t n, uint32_t d, uint32_t *rem) {
  uint32_t q = 0, r = 0;
  if (d == 0) rt_fail("hvxrt: division by zero", 4);
  for (int i = 31; i >= 0; i--) { r = (r << 1) | ((n >> i) & 1); if (r >= d) { r -= d; q |= 1u << i; } }
  *rem = r; return q;
}
static uint64_t udiv64(uint64_t n, uint64_t d, uint64_t *rem) {
  uint64_t q = 0, r = 0;
  if (d == 0) rt_fail("hvxrt: division by zero", 4);
  for (int i = 63; i >= 0; i--) { r = (r << 1) | ((n >> i) & 1); if (r >= d) { r -= d; q |= 1ull << i; } }
  *rem = r; return q;
}
uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d) { uint32_t r; return udiv32(n, d, &r); }
uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d) { uint32_t r; udiv32(n, d, &r); return r; }
int32_t __hexagon_divsi3(int32_t n, int32_t d) {
  uint32_t r, q = udiv32(n < 0 ? -(uint32_t)n : (uint32_t)n, d < 0 ? -(uint32_t)d : (uint32_t)d, &r);
  return ((n < 0) != (d < 0)) ? -(int32_t)q : (int32_t)q;
}
int32_t __hexagon_modsi3(int32_t n, int32_t d) {
  uint32_t r; udiv32(n < 0 ? -(uint32_t)n : (uint32_t)n, d < 0 ? -(uint32_t)d : (uint32_t)d, &r);
  return n < 0 ? -(int32_t)r : (int32_t)r;
}
uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d) { uint64_t r; return udiv64(n, d, &r); }
uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d) { uint64_t r; udiv64(n, d, &r); return r; }
int64_t __hexagon_divdi3(int64_t n, int64_t d) {
  uint64_t r, q = udiv64(n < 0 ? -(uint64_t)n : (uint64_t)n, d < 0 ? -(uint64_t)d : (uint64_t)d, &r);
  return ((n < 0) != (d < 0)) ? -(int64_t)q : (int64_t)q;
}
int64_t __hexagon_moddi3(int64_t n, int64_t d) {
  uint64_t r; udiv64(n < 0 ? -(uint64_t)n : (uint64_t)n, d < 0 ? -(uint64_t)d : (uint64_t)d, &r);
  return n < 0 ? -(int64_t)r : (int64_t)r;
}

asm(".text\n.globl rt_setjmp\n.type rt_setjmp,@function\n.p2align 4\nrt_setjmp:\n"
    "  memd(r0+#0) = r17:16\n  memd(r0+#8) = r19:18\n  memd(r0+#16) = r21:20\n  memd(r0+#24) = r23:22\n"
    "  memd(r0+#32) = r25:24\n  memd(r0+#40) = r27:26\n  memd(r0+#48) = r29:28\n  memd(r0+#56) = r31:30\n"
    "  r0 = #0\n  jumpr r31\n.size rt_setjmp, .-rt_setjmp\n"
    ".globl rt_longjmp\n.type rt_longjmp,@function\n.p2align 4\nrt_longjmp:\n"
    "  r17:16 = memd(r0+#0)\n  r19:18 = memd(r0+#8)\n  r21:20 = memd(r0+#16)\n  r23:22 = memd(r0+#24)\n"
    "  r25:24 = memd(r0+#32)\n  r27:26 = memd(r0+#40)\n  r29:28 = memd(r0+#48)\n  r31:30 = memd(r0+#56)\n"
    "  p0 = cmp.eq(r1, #0)\n  if (p0) r1 = #1\n  r0 = r1\n  jumpr r31\n.size rt_longjmp, .-rt_longjmp\n");

void _start(void) { rt_exit(main()); }
