/* The allocator hook (base.h, arb_mem) and the process allocator every
 * other library source reaches through src/base/alloc.h. This file
 * alone calls the C library's allocator by name. */
#include <stdlib.h>
#include <string.h>

#include "arbor/base.h"

static void *std_malloc(size_t size, void *user)
{
    (void)user;
    return malloc(size);
}

static void *std_calloc(size_t n, size_t size, void *user)
{
    (void)user;
    return calloc(n, size);
}

static void *std_realloc(void *ptr, size_t size, void *user)
{
    (void)user;
    return realloc(ptr, size);
}

static void std_free(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static void *std_aligned(size_t align, size_t size, void *user)
{
    (void)user;
    return aligned_alloc(align, size);
}

static const arb_mem std_mem = {NULL, std_malloc, std_calloc, std_realloc, std_free, std_aligned};

/* The process allocator (arb_mem_set_default). */
static const arb_mem *process_mem = &std_mem;

const arb_mem *arb_mem_default(void)
{
    return process_mem;
}

int arb_mem_set_default(const arb_mem *mem)
{
    if (mem && (!mem->malloc || !mem->calloc || !mem->realloc || !mem->free || !mem->aligned))
        return ARB_EINVAL;
    process_mem = mem ? mem : &std_mem;
    return 0;
}

void *arb_mem_malloc(const arb_mem *mem, size_t size)
{
    if (!mem) mem = process_mem;
    return mem->malloc(size, mem->user);
}

void *arb_mem_calloc(const arb_mem *mem, size_t n, size_t size)
{
    if (!mem) mem = process_mem;
    return mem->calloc(n, size, mem->user);
}

void *arb_mem_realloc(const arb_mem *mem, void *ptr, size_t size)
{
    if (!mem) mem = process_mem;
    return mem->realloc(ptr, size, mem->user);
}

void arb_mem_free(const arb_mem *mem, void *ptr)
{
    if (!mem) mem = process_mem;
    mem->free(ptr, mem->user);
}

void *arb_mem_aligned_alloc(const arb_mem *mem, size_t align, size_t size)
{
    if (!mem) mem = process_mem;
    if (!mem->aligned || align == 0 || (align & (align - 1))) return NULL;
    size_t whole = (size + align - 1) / align * align; /* C11: a multiple of align */
    if (whole < size) return NULL;
    return mem->aligned(align, whole ? whole : align, mem->user);
}

char *arb_mem_strndup(const arb_mem *mem, const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = arb_mem_malloc(mem, len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *arb_mem_strdup(const arb_mem *mem, const char *s)
{
    return arb_mem_strndup(mem, s, strlen(s));
}
