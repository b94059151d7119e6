/* hexnn-import stand-in for <dlfcn.h> (interface.c's UDO library loading): a statically linked graph under
 * qemu-hexagon loads no shared library; dlopen fails, so a UDO package is refused by nnlib's own error path. */
#ifndef HXNET_DLFCN_H
#define HXNET_DLFCN_H
#define RTLD_LAZY 1
static inline void *dlopen(const char *path, int mode) { (void)path; (void)mode; return 0; }
static inline void *dlsym(void *h, const char *name) { (void)h; (void)name; return 0; }
static inline int dlclose(void *h) { (void)h; return 0; }
static inline const char *dlerror(void) { return "hexnn-import network build: no dynamic loading"; }
#endif
