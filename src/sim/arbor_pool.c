/* Arbor in the simulator: packets, their header side table and payload
 * buffers, and the switches' slot pools (arbor_int.h). */
#include "arbor_int.h"

#include <string.h>
#include "base/alloc.h"

/* A payload buffer holding one reference, or NONE (out of memory). */
uint32_t arbor_buf_get(arb_sim *s)
{
    struct bufpool *b = &s->arb->bp;
    if (b->n_free) {
        uint32_t id = b->free_ids[--b->n_free];
        b->ref[id] = 1;
        return id;
    }
    if (b->n == b->cap) {
        uint32_t ncap = b->cap ? b->cap * 2 : 256;
        uint8_t **nb = arb_realloc(b->buf, ncap * sizeof *nb);
        if (nb) b->buf = nb;
        uint32_t *nr = arb_realloc(b->ref, ncap * sizeof *nr);
        if (nr) b->ref = nr;
        uint32_t *nf = arb_realloc(b->free_ids, ncap * sizeof *nf);
        if (nf) b->free_ids = nf;
        if (!nb || !nr || !nf) return NONE;
        b->cap = ncap;
    }
    b->buf[b->n] = arb_malloc(b->size);
    if (!b->buf[b->n]) return NONE;
    b->ref[b->n] = 1;
    return b->n++;
}

void arbor_pkt_drop(arb_sim *s, uint32_t node, uint32_t i)
{
    if (s->arb) s->arb->acct[node].drops++;
    pkt_free(s, i);
}

/* Values mode: a payload buffer holding `len` bytes of `payload`, or NONE. */
uint32_t arbor_put_payload(arb_sim *s, const uint8_t *payload, size_t len)
{
    uint32_t b = arbor_buf_get(s);
    if (b != NONE) memcpy(s->arb->bp.buf[b], payload, len);
    return b;
}

/* A copy of packet i (header, payload reference), or PKT_NONE. */
uint32_t arbor_pkt_copy(arb_sim *s, uint32_t i)
{
    struct arbor_job *a = s->arb;
    uint32_t c = pkt_new(s);
    if (c == PKT_NONE) return PKT_NONE;
    *pool_get(&s->pool, c) = *pool_get(&s->pool, i);
    a->hdr[c] = a->hdr[i];
    uint32_t b = pool_get(&s->pool, c)->aux;
    if (b != NONE) a->bp.ref[b]++;
    return c;
}

uint32_t arbor_pkt_dup(arb_sim *s, uint32_t port, uint32_t i)
{
    uint32_t c = arbor_pkt_copy(s, i);
    if (c != PKT_NONE) s->arb->acct[s->owner[port]].copies++;
    return c;
}

int arb_sim_arbor_header(const arb_sim *s, uint32_t index, arb_hdr *h)
{
    const struct arbor_job *a = s->arb;
    if (!a || index >= a->cap_hdr || index >= s->pool.made ||
        !s->pool.chunks[index >> POOL_CHUNK_BITS] || pool_get(&s->pool, index)->kind != PK_ARBOR)
        return ARB_ENOENT;
    *h = a->hdr[index];
    return 0;
}

/* The engine of part `part` of switch `node`'s pool, made if it has none
 * yet: the whole pool (slots), shared by every job, or with a partitioned
 * pool (n_parts > 1) an equal share of it, used by the jobs of that part
 * only: a static partition is disjoint pools. ARB_EINVAL: a switch of more
 * than 256 ports. */
int arbor_pool_part(arb_sim *s, uint32_t node, uint32_t part)
{
    struct arbor_job *a = s->arb;
    size_t g = (size_t)node * a->n_parts + part;
    if (a->agg[g]) return 0;
    const arb_node *nd = &s->nodes[node];
    uint32_t radix = (uint32_t)nd->n_down + nd->n_up;
    if (radix > ARB_AGG_PORTS_MAX) return ARB_EINVAL;
    arb_agg_config ac;
    arb_agg_config_default(&ac);
    ac.slots = a->slots / a->n_parts;
    ac.max_payload = a->payload;
    ac.header_only = !a->values;
    ac.local_repair = a->local_repair;
    ac.recredit_min = a->recredit_min;
    ac.recredit_max = a->recredit_max;
    ac.recredit_order = a->recredit_order;
    ac.ports = radix;
    ac.logger = s->cfg.log;
    a->owner[g] = arb_calloc(ac.slots, sizeof *a->owner[g]);
    if (!a->owner[g]) return ARB_ENOMEM;
    return arb_agg_new(&a->agg[g], &ac);
}

void arbor_slots_live(const arb_sim *s, uint32_t *sum, uint32_t *most)
{
    const struct arbor_job *a = s->arb;
    *sum = *most = 0;
    /* a switch's pool may be cut into n_parts parts (a static partition):
     * its slots are those of every part */
    for (uint32_t n = 0; n < arb_topo_n_nodes(s->topo); n++) {
        if (!owns_node(s, n)) continue; /* another part's: it sees none of its packets */
        uint32_t here = 0;
        for (uint32_t k = 0; k < a->n_parts; k++) {
            const arb_agg *g = a->agg[(size_t)n * a->n_parts + k];
            if (!g) continue;
            arb_agg_stats st;
            arb_agg_get_stats(g, s->now, &st);
            here += st.live;
        }
        *sum += here;
        if (here > *most) *most = here;
    }
}

int arb_sim_arbor_slots(const arb_sim *s, uint32_t *live, uint32_t *max_live)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a) return ARB_EINVAL;
    if (s->part && !s->in_run) { /* every part's switches, after the last run */
        if (live) *live = a->g_live;
        if (max_live) *max_live = a->g_most;
        return 0;
    }
    uint32_t sum, mx;
    arbor_slots_live(s, &sum, &mx);
    if (live) *live = sum;
    if (max_live) *max_live = mx;
    return 0;
}

int arb_sim_arbor_reboot(arb_sim *s, uint32_t node)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a || node >= arb_topo_n_nodes(s->topo) || s->nodes[node].kind != ARB_NODE_SWITCH)
        return ARB_EINVAL;
    sim_to_run_end(s); /* between runs: at the end of the last */
    int lost = 0, err = 0;
    for (uint32_t k = 0; k < a->n_parts; k++) {
        size_t g = (size_t)node * a->n_parts + k;
        if (!a->agg[g]) continue;
        int n = arb_agg_reset(a->agg[g], s->now);
        if (n < 0) {
            err = n;
            break;
        }
        lost += n;
        /* the owners go with the slots: each job holds none there now */
        for (uint32_t slot = 0; slot < a->slots / a->n_parts; slot++)
            slot_freed(a, node, a->owner[g], slot);
    }
    /* partitioned: the switch's part alone has live slots; every part
     * returns the whole's count, or an error if any part met one
     * (arb_agg_reset's only error is ARB_EINVAL) */
    uint64_t v[2] = {(uint64_t)lost, err != 0};
    int rc = part_allsum(s, v, 2);
    if (rc < 0) return rc;
    return err ? err : v[1] ? ARB_EINVAL : (int)v[0];
}

void arbor_cut_parts(const arb_sim *s, uint32_t i, const void **hdr, size_t *hlen, const void **pl,
                     size_t *plen)
{
    const struct arbor_job *a = s->arb;
    const struct pkt *k = pool_get(&s->pool, i);
    *hdr = &a->hdr[i];
    *hlen = sizeof a->hdr[i];
    *pl = k->aux != NONE ? a->bp.buf[k->aux] : NULL;
    *plen = k->aux != NONE ? k->payload : 0;
}

int arbor_cut_land(arb_sim *s, uint32_t i, const uint8_t *hdr, size_t hlen, const uint8_t *pl,
                   size_t plen)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    k->aux = NONE;
    if (!a || hlen != sizeof *a->hdr || plen > a->bp.size || (plen && plen != k->payload))
        return ARB_EINVAL; /* not a record this simulator's jobs make */
    if (hdr_room(s, i) < 0) return ARB_ENOMEM;
    memcpy(&a->hdr[i], hdr, hlen);
    if (plen && (k->aux = arbor_put_payload(s, pl, plen)) == NONE) return ARB_ENOMEM;
    return 0;
}

void arbor_pkt_release(arb_sim *s, uint32_t i)
{
    pkt_free(s, i);
}
