/*
 * The library's allocations through the process allocator (base.h,
 * arb_mem_set_default). CMake includes this header ahead of every library
 * source but src/base/mem.c: it renames malloc, calloc, realloc, free,
 * aligned_alloc, strdup and strndup to the mem_hook_* functions of
 * src/base/mem.c, which have the same types and go through the process
 * allocator. Being plain names (not function-like macros) they rename the
 * C library's declarations too and need no header before them, so each
 * source still chooses its own feature macros. Allocations made inside
 * other libraries (cJSON, inih, libpcap, libsodium, protobuf-c) and inside
 * the C library (stdio buffers) do not pass here (docs/design.md,
 * "Allocation").
 */
#ifndef ARB_MEM_HOOK_H
#define ARB_MEM_HOOK_H

#define malloc mem_hook_malloc
#define calloc mem_hook_calloc
#define realloc mem_hook_realloc
#define free mem_hook_free
#define aligned_alloc mem_hook_aligned_alloc
#define strdup mem_hook_strdup
#define strndup mem_hook_strndup

#endif /* ARB_MEM_HOOK_H */
