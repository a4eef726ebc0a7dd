/* The allocator hook (base.h, arb_mem). */
#include <stdlib.h>

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

static const arb_mem std_mem = {NULL, std_malloc, std_calloc, std_realloc, std_free};

const arb_mem *arb_mem_default(void)
{
    return &std_mem;
}

void *arb_mem_malloc(const arb_mem *mem, size_t size)
{
    return mem ? mem->malloc(size, mem->user) : malloc(size);
}

void *arb_mem_calloc(const arb_mem *mem, size_t n, size_t size)
{
    return mem ? mem->calloc(n, size, mem->user) : calloc(n, size);
}

void *arb_mem_realloc(const arb_mem *mem, void *ptr, size_t size)
{
    return mem ? mem->realloc(ptr, size, mem->user) : realloc(ptr, size);
}

void arb_mem_free(const arb_mem *mem, void *ptr)
{
    if (mem)
        mem->free(ptr, mem->user);
    else
        free(ptr);
}
