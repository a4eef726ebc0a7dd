/* Packet pool; see pool.h. */
#include "pool.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

int pool_init(struct pool *p)
{
    memset(p, 0, sizeof *p);
    return 0;
}

void pool_free_all(struct pool *p)
{
    for (uint32_t c = 0; c < p->n_chunks; c++)
        arb_free(p->chunks[c]);
    arb_free(p->chunks);
    arb_free(p->free_ids);
    memset(p, 0, sizeof *p);
}

static int grow(struct pool *p)
{
    if (p->n_chunks == p->cap_chunks) {
        uint32_t ncap = p->cap_chunks ? p->cap_chunks * 2 : 64;
        struct pkt **nc = arb_realloc(p->chunks, ncap * sizeof *nc);
        if (!nc) return ARB_ENOMEM;
        p->chunks = nc;
        p->cap_chunks = ncap;
    }
    if ((uint64_t)(p->n_chunks + 1) * POOL_CHUNK > PKT_NONE) return ARB_ERANGE;
    /* Cache-line aligned: a packet is one line, not two halves. */
    struct pkt *c = arb_aligned_alloc(64, POOL_CHUNK * sizeof *c);
    if (!c) return ARB_ENOMEM;
    p->chunks[p->n_chunks++] = c;
    p->made += POOL_CHUNK;
    return 0;
}

#ifdef ARB_NO_POOLS
/* Room on the side stack for every index made so far and one more, so that
 * pool_release never has to grow it. */
static int reserve_free(struct pool *p)
{
    if (p->n_chunks < p->cap_free) return 0;
    uint32_t ncap = p->cap_free ? p->cap_free * 2 : 64;
    uint32_t *nf = arb_realloc(p->free_ids, ncap * sizeof *nf);
    if (!nf) return ARB_ENOMEM;
    p->free_ids = nf;
    p->cap_free = ncap;
    return 0;
}

/* One malloc per packet (a chunk of one), freed on release, so that the
 * sanitizers see every packet; free indices wait on a side stack. */
uint32_t pool_alloc(struct pool *p)
{
    uint32_t i;
    if (p->n_free) {
        i = p->free_ids[--p->n_free];
        p->chunks[i] = arb_malloc(sizeof(struct pkt));
        if (!p->chunks[i]) {
            p->n_free++;
            return PKT_NONE;
        }
    } else {
        if (reserve_free(p) < 0 || grow(p) < 0) return PKT_NONE;
        i = p->n_chunks - 1;
    }
    struct pkt *k = pool_get(p, i);
    memset(k, 0, sizeof *k);
    k->next = PKT_NONE;
    if (++p->live > p->peak) p->peak = p->live;
    return i;
}

void pool_release(struct pool *p, uint32_t i)
{
    arb_free(p->chunks[i]);
    p->chunks[i] = NULL;
    p->free_ids[p->n_free++] = i; /* room: pool_alloc reserved it (reserve_free) */
    p->live--;
}

uint32_t pool_alloc_raw(struct pool *p)
{
    return pool_alloc(p); /* zeroed all the same: a debug build */
}
#else
/* A new chunk's packets onto the free stack, its lowest index on top. */
int pool_grow_stack(struct pool *p)
{
    if (p->cap_free < p->made + POOL_CHUNK) {
        uint32_t ncap = p->cap_free ? p->cap_free * 2 : POOL_CHUNK;
        while (ncap < p->made + POOL_CHUNK)
            ncap *= 2;
        uint32_t *nf = arb_realloc(p->free_ids, ncap * sizeof *nf);
        if (!nf) return ARB_ENOMEM;
        p->free_ids = nf;
        p->cap_free = ncap;
    }
    uint32_t base = p->made;
    int rc = grow(p);
    if (rc < 0) return rc;
    for (uint32_t k = POOL_CHUNK; k-- > 0;)
        p->free_ids[p->n_free++] = base + k;
    return 0;
}
#endif
