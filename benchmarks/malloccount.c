// SPDX-License-Identifier: GPL-3.0-or-later
//
// LD_PRELOAD allocation counter for benchmarks/playback.py: counts calls of malloc, calloc, realloc,
// posix_memalign, aligned_alloc and memalign per thread, in a file that the benchmark maps and reads
// while the process runs (one slot per thread: kernel thread id, count). The thread ids are matched
// with /proc/PID/task/TID/comm, so the counts can be read per thread name ("decoder", "output:...").
//
// Build: cc -O2 -shared -fPIC -ftls-model=initial-exec -o malloccount.so malloccount.c -ldl
// Use:   MALLOC_COUNT_FILE=counts.bin LD_PRELOAD=./malloccount.so program

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 4096

struct slot {
    _Atomic long tid;
    _Atomic long count;
};

struct table {
    _Atomic long used;
    long reserved;
    struct slot slots[SLOTS];
};

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static struct table *table;
static __thread struct slot *mine;

__attribute__((constructor)) static void open_table(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (path == NULL) return;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof(struct table)) == 0) {
        void *map = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) table = map;
    }
    close(fd);
}

static inline void count(void) {
    if (table == NULL) return;
    if (mine == NULL) {
        long index = atomic_fetch_add(&table->used, 1);
        if (index >= SLOTS) return;  // counted nowhere (the benchmark reports a full table)
        mine = &table->slots[index];
        atomic_store(&mine->tid, (long)syscall(SYS_gettid));
    }
    atomic_fetch_add_explicit(&mine->count, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    count();
    return __libc_realloc(p, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return 12;  // ENOMEM
    *out = p;
    return 0;
}
