/*
 * The library's allocator by name (internal). Every library source
 * allocates through these, never through the C library's malloc family
 * (only src/base/mem.c calls that, as the default process allocator):
 * each is the arb_mem call of base.h with the process allocator
 * (arb_mem_set_default), so one allocation hook covers the library and
 * a test can fail every allocation in turn (tests/unit/test_mem.c).
 * tests/cli/test_alloc.sh checks that no other library object names
 * the C library's allocator.
 */
#ifndef ARB_ALLOC_H
#define ARB_ALLOC_H

#include <stddef.h>

#include "arbor/base.h"

/** malloc through the process allocator; NULL when it fails. */
static inline void *arb_malloc(size_t size)
{
    return arb_mem_malloc(NULL, size);
}

/** calloc through the process allocator; NULL when it fails. */
static inline void *arb_calloc(size_t n, size_t size)
{
    return arb_mem_calloc(NULL, n, size);
}

/** realloc through the process allocator; NULL when it fails, ptr kept. */
static inline void *arb_realloc(void *ptr, size_t size)
{
    return arb_mem_realloc(NULL, ptr, size);
}

/** free through the process allocator; ptr may be NULL. */
static inline void arb_free(void *ptr)
{
    arb_mem_free(NULL, ptr);
}

/** aligned_alloc through the process allocator (`size` rounded up to a
 * multiple of `align`, a power of two); freed by arb_free. */
static inline void *arb_aligned_alloc(size_t align, size_t size)
{
    return arb_mem_aligned_alloc(NULL, align, size);
}

/** strdup through the process allocator; NULL when it fails. */
static inline char *arb_strdup(const char *s)
{
    return arb_mem_strdup(NULL, s);
}

/** strndup through the process allocator; NULL when it fails. */
static inline char *arb_strndup(const char *s, size_t n)
{
    return arb_mem_strndup(NULL, s, n);
}

#endif /* ARB_ALLOC_H */
