/* hexnn-import's freestanding runtime for Linux user-mode qemu-hexagon (no libc): syscalls, a bump
 * allocator and the output helpers the golden harnesses use. Our own code, no vendor arithmetic. */
#ifndef HVXRT_H
#define HVXRT_H
#include <stddef.h>
#include <stdint.h>

long rt_write(int fd, const void *buf, long n);
long rt_read(int fd, void *buf, long n);
int rt_openat(int dirfd, const char *path, int flags, int mode);
int rt_close(int fd);
void rt_exit(int code) __attribute__((noreturn));

/* Reads exactly n bytes from fd (returns 0) or fails (-1). */
int rt_read_all(int fd, void *buf, long n);
/* Writes exactly n bytes to fd (returns 0) or fails (-1). */
int rt_write_all(int fd, const void *buf, long n);
/* A message on stderr and exit(code). */
void rt_fail(const char *msg, int code) __attribute__((noreturn));

/* Bump allocator over a static arena; never frees. */
void *rt_alloc(size_t n, size_t align);
void rt_alloc_reset(void);

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
size_t strlen(const char *s);

/* setjmp / longjmp for a harness that must leave a vendor function which would not return (our own, Hexagon ABI:
 * saves the callee-saved r16-r27, sp, fp and lr). rt_longjmp makes rt_setjmp return val (1 if val is 0). */
typedef long long rt_jmp_buf[8];
int rt_setjmp(rt_jmp_buf buf) __attribute__((returns_twice));
void rt_longjmp(rt_jmp_buf buf, int val) __attribute__((noreturn));

/* The harness's entry point; the runtime's _start calls it and exits with its return value. */
int main(void);
#endif
