/* 4-ary heap event queue; see evq.h. A 4-ary heap halves the depth of a
 * binary heap and keeps a node's children in one cache line. */
#include "evq.h"

#include <stdlib.h>

int evq_init(struct evq *q, size_t cap)
{
    q->n = 0;
    q->seq = 0;
    q->cap = cap ? cap : 64;
    q->h = malloc(q->cap * sizeof *q->h);
    return q->h ? 0 : ARB_ENOMEM;
}

void evq_free(struct evq *q)
{
    free(q->h);
    q->h = NULL;
    q->n = q->cap = 0;
}

static int less(const struct evq_entry *a, const struct evq_entry *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

int64_t evq_push(struct evq *q, arb_time t, uint32_t target)
{
    if (target > EVQ_TARGET_MAX || q->seq > EVQ_SEQ_MAX) return ARB_ERANGE;
    if (q->n == q->cap) {
        size_t ncap = q->cap * 2;
        struct evq_entry *nh = realloc(q->h, ncap * sizeof *nh);
        if (!nh) return ARB_ENOMEM;
        q->h = nh;
        q->cap = ncap;
    }
    uint64_t seq = q->seq++;
    struct evq_entry e = {t, seq << EVQ_TARGET_BITS | target};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!less(&e, &q->h[parent])) break;
        q->h[i] = q->h[parent];
        i = parent;
    }
    q->h[i] = e;
    return (int64_t)seq;
}

int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq)
{
    if (q->n == 0) return 0;
    struct evq_entry top = q->h[0];
    struct evq_entry last = q->h[--q->n];
    size_t n = q->n, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (less(&q->h[k], &q->h[best])) best = k;
        if (!less(&q->h[best], &last)) break;
        q->h[i] = q->h[best];
        i = best;
    }
    if (n) q->h[i] = last;
    *t = top.t;
    *target = (uint32_t)(top.key & EVQ_TARGET_MAX);
    if (seq) *seq = top.key >> EVQ_TARGET_BITS;
    return 1;
}
