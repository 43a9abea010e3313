/*
 * Redis under libfaketime. Debian's redis-server and redis-cli allocate with jemalloc
 * (libjemalloc.so.2), whose first allocation reads the clock while libfaketime is still
 * initialising (its dlsym allocates), so libfaketime gives up and the program hangs
 * (wolfcw/libfaketime#130, open since 2017). Preloaded before libfaketime, this library sends
 * the allocation calls to glibc's malloc; jemalloc then only answers statistics (mallctl).
 * The harness loads it only when a scenario skews a Redis node's clock
 * (x-chaos.clock-skew.preload in docker-compose.yml).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

void *malloc(size_t size) { return __libc_malloc(size); }
void free(void *ptr) { __libc_free(ptr); }
void *calloc(size_t count, size_t size) { return __libc_calloc(count, size); }
void *realloc(void *ptr, size_t size) { return __libc_realloc(ptr, size); }
void *memalign(size_t align, size_t size) { return __libc_memalign(align, size); }
void *aligned_alloc(size_t align, size_t size) { return __libc_memalign(align, size); }
void *valloc(size_t size) { return __libc_valloc(size); }
void *pvalloc(size_t size) { return __libc_pvalloc(size); }

int posix_memalign(void **out, size_t align, size_t size) {
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
        return EINVAL;
    void *ptr = __libc_memalign(align, size);
    if (ptr == NULL)
        return ENOMEM;
    *out = ptr;
    return 0;
}

/* glibc's own, not jemalloc's: the pointers come from glibc. */
size_t malloc_usable_size(void *ptr) {
    static size_t (*glibc)(void *);
    if (glibc == NULL) {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        glibc = (size_t (*)(void *))dlsym(libc, "malloc_usable_size");
    }
    return ptr == NULL ? 0 : glibc(ptr);
}
