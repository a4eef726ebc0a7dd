/* The software switch's job table (src/rt/switch_int.h): JOIN and its
 * checks, REJECT, JOBINFO from peers, NOTICE, and the announcements. */
#define _GNU_SOURCE
#include "rt/switch_int.h"

#include <string.h>

#include "base/alloc.h"

void rt_sw_job_reset(struct sjob *j)
{
    arb_plan_free(j->plan);
    arb_free(j->addr);
    arb_free(j->local);
    arb_free(j->joined);
    arb_free(j->counter);
    arb_free(j->seen);
    j->seen = NULL;
    j->plan = NULL;
    j->addr = NULL;
    j->local = NULL;
    j->joined = NULL;
    j->counter = NULL;
    j->size = j->base = 0;
}

struct sjob *rt_sw_find_job(arb_rt_switch *s, uint32_t id)
{
    for (uint32_t i = 0; i < s->n_jobs; i++)
        if (s->jobs[i].id == id) return &s->jobs[i];
    return NULL;
}

/* The job's hosts and plan (size ranks on hosts base ..). 0 or -1. */
static int job_learn(arb_rt_switch *s, struct sjob *j, uint32_t size, uint32_t base)
{
    if (j->size == size && j->base == base) return 0;
    if (size < 2 || size > ARB_PLAN_MAX_RANKS || base > arb_topo_n_hosts(s->t) ||
        size > arb_topo_n_hosts(s->t) - base)
        return -1;
    rt_sw_job_reset(j);
    uint32_t ranks[ARB_PLAN_MAX_RANKS];
    for (uint32_t r = 0; r < size; r++)
        ranks[r] = base + r;
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.coll = ARB_COLL_ALLREDUCE;
    pc.ranks = ranks;
    pc.n_ranks = size;
    pc.bytes = (uint64_t)size * 4;
    /* share_min 0: a channel for every rank, the trees of any call's plan */
    if (arb_topo_plan(&j->plan, s->t, &pc, NULL, 0) < 0) return -1;
    j->addr = arb_calloc(size, sizeof *j->addr);
    j->local = arb_calloc(size, sizeof *j->local);
    j->joined = arb_calloc(size, 1);
    j->counter = arb_calloc(size, sizeof *j->counter);
    j->seen = arb_calloc(size, sizeof *j->seen);
    if (!j->addr || !j->local || !j->joined || !j->counter || !j->seen) {
        rt_sw_job_reset(j);
        return -1;
    }
    j->size = size;
    j->base = base;
    return 0;
}

/* The address of ours peer i sends to (0: unknown); any thread may learn
 * it. */
uint32_t rt_sw_peer_local(const arb_rt_switch *s, uint32_t i)
{
    return __atomic_load_n(&s->peer_local[i], __ATOMIC_RELAXED);
}

/* JOBINFO for job j to every peer. */
void rt_sw_announce(struct sw_worker *wk, const struct sjob *j)
{
    arb_rt_switch *s = wk->s;
    uint8_t b[RT_JOBINFO_LEN];
    rt_hdr h = {.kind = RT_K_JOBINFO, .job = j->id, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &h);
    for (int k = 0; k < 4; k++) {
        b[16 + k] = (uint8_t)(j->size >> (24 - 8 * k));
        b[20 + k] = (uint8_t)(j->base >> (24 - 8 * k));
    }
    for (uint32_t i = 0; i < s->n_peers; i++)
        rt_tx_src(&wk->tx, &s->peer_addr[i], rt_sw_peer_local(s, i), b, sizeof b, NULL, 0, 0);
}

/* Answers to anyone (NOTICE, REJECT) share a budget of NOTICES_PER_S a
 * second: a stranger spoofing a victim's address cannot make the switch
 * send the victim more than that. 1 when one may go now. */
static int answer_allowed(arb_rt_switch *s, arb_time now)
{
    pthread_mutex_lock(&s->answer_lock);
    if (now - s->notice_window > ARB_PS_PER_S) {
        s->notice_window = now;
        s->notices = 0;
    }
    int ok = s->notices++ < NOTICES_PER_S;
    pthread_mutex_unlock(&s->answer_lock);
    return ok;
}

/* A REJECT for reason `why`; `more` (NULL: none) the 8 bytes reasons
 * RT_REJECT_SIZE and RT_REJECT_DUPLICATE add. */
static void reject_more(struct sw_worker *wk, const struct sockaddr_in *to, const rt_join *jn,
                        uint8_t why, const uint8_t *more, arb_time now)
{
    arb_rt_switch *s = wk->s;
    wk->st.join_rejected++;
    if (!answer_allowed(s, now)) return;
    uint8_t b[RT_REJECT_LEN];
    rt_hdr h = {
        .kind = RT_K_REJECT, .job = jn->job, .dst = (uint16_t)jn->rank, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &h);
    b[RT_HDR_LEN] = why;
    if (more) memcpy(b + RT_HDR_LEN + 1, more, 8);
    rt_tx_src(&wk->tx, to, wk->cur_local, b, more ? RT_REJECT_LEN : RT_HDR_LEN + 1, NULL, 0, 0);
}

static void reject(struct sw_worker *wk, const struct sockaddr_in *to, const rt_join *jn,
                   uint8_t why, arb_time now)
{
    reject_more(wk, to, jn, why, NULL, now);
}

/* Some rank of job j is live (heard from within RT_LIVE_WINDOW): its
 * size and host base hold. */
static int job_live(const struct sjob *j, arb_time now)
{
    for (uint32_t r = 0; r < j->size; r++)
        if (j->joined[r] && now - __atomic_load_n(&j->seen[r], __ATOMIC_RELAXED) < RT_LIVE_WINDOW)
            return 1;
    return 0;
}

/* A JOIN that disagrees with the job's live ranks: its size or host base
 * (REJECT_SIZE, with the job's), or its rank joined from another address
 * that is live (REJECT_DUPLICATE, with that address).
 * 1 when refused. Before, the first reset the job's table at every JOIN
 * (each side's ranks blamed the other's as dead) and the second made
 * two processes take the rank's place in turn, timing out naming no one. */
static int join_conflict(struct sw_worker *wk, const struct sockaddr_in *from, struct sjob *j,
                         const rt_join *jn, arb_time now)
{
    uint8_t more[8] = {0};
    if (j->size && (jn->size != j->size || jn->base != j->base) && job_live(j, now)) {
        for (int k = 0; k < 4; k++) {
            more[k] = (uint8_t)(j->size >> (24 - 8 * k));
            more[4 + k] = (uint8_t)(j->base >> (24 - 8 * k));
        }
        reject_more(wk, from, jn, RT_REJECT_SIZE, more, now);
        return 1;
    }
    if (j->size == jn->size && jn->rank < j->size && j->joined[jn->rank] &&
        !rt_addr_eq(from, &j->addr[jn->rank]) &&
        now - __atomic_load_n(&j->seen[jn->rank], __ATOMIC_RELAXED) < RT_LIVE_WINDOW) {
        const struct sockaddr_in *o = &j->addr[jn->rank];
        memcpy(more, &o->sin_addr.s_addr, 4); /* network order already */
        memcpy(more + 4, &o->sin_port, 2);
        reject_more(wk, from, jn, RT_REJECT_DUPLICATE, more, now);
        return 1;
    }
    return 0;
}

void rt_sw_on_join(struct sw_worker *wk, const struct sockaddr_in *from, const uint8_t *b,
                   size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    rt_join jn;
    if (rt_join_get(&jn, b, len) < 0) {
        wk->st.undecodable++;
        return;
    }
    struct sjob *j = rt_sw_find_job(s, jn.job);
    if (!j) {
        reject(wk, from, &jn, RT_REJECT_JOB, now);
        return;
    }
    if (rt_join_verify(b, len, j->key) < 0) {
        reject(wk, from, &jn, RT_REJECT_MAC, now);
        return;
    }
    if (jn.fabric != s->fabric) {
        reject(wk, from, &jn, RT_REJECT_FABRIC, now);
        return;
    }
    if (join_conflict(wk, from, j, &jn, now)) return;
    uint32_t host = jn.base + jn.rank;
    if (jn.rank >= jn.size || s->nd->level != 1 || host < jn.base ||
        host >= arb_topo_n_hosts(s->t) || !arb_pgft_below(s->g, s->nd, host) ||
        job_learn(s, j, jn.size, jn.base) < 0) {
        reject(wk, from, &jn, RT_REJECT_FIELDS, now);
        return;
    }
    /* a counter below the last one accepted is a replay; the same counter
     * from the same address is a retransmission */
    if (j->joined[jn.rank] &&
        (jn.counter < j->counter[jn.rank] ||
         (jn.counter == j->counter[jn.rank] && !rt_addr_eq(from, &j->addr[jn.rank])))) {
        reject(wk, from, &jn, RT_REJECT_REPLAY, now);
        return;
    }
    if (j->joined[jn.rank] && jn.counter != j->counter[jn.rank]) {
        if (rt_addr_eq(from, &j->addr[jn.rank]))
            wk->st.keepalive_joins++;
        else
            wk->st.rejoins++;
    }
    if (!j->joined[jn.rank] || jn.counter != j->counter[jn.rank]) wk->st.joins++;
    j->joined[jn.rank] = 1;
    __atomic_store_n(&j->seen[jn.rank], now, __ATOMIC_RELAXED);
    j->counter[jn.rank] = jn.counter;
    j->addr[jn.rank] = *from;
    j->local[jn.rank] = wk->cur_local;
    uint8_t w[RT_WELCOME_LEN];
    rt_welcome_put(w, &jn, j->key);
    rt_tx_src(&wk->tx, from, wk->cur_local, w, sizeof w, NULL, 0, 0);
    rt_sw_announce(wk, j);
}

/* The peer index of address a, or -1. */
int rt_sw_peer_of(const arb_rt_switch *s, const struct sockaddr_in *a)
{
    for (uint32_t i = 0; i < s->n_peers; i++)
        if (rt_addr_eq(&s->peer_addr[i], a)) return (int)i;
    return -1;
}

void rt_sw_on_jobinfo(struct sw_worker *wk, const struct sockaddr_in *from, const rt_hdr *h,
                      const uint8_t *b, size_t len)
{
    arb_rt_switch *s = wk->s;
    if (rt_sw_peer_of(s, from) < 0) {
        wk->st.strangers++;
        return;
    }
    struct sjob *j = rt_sw_find_job(s, h->job);
    if (len != RT_JOBINFO_LEN || !j) {
        if (!j)
            wk->st.unknown_job++;
        else
            wk->st.undecodable++;
        return;
    }
    uint32_t size = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    uint32_t base = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    if (job_learn(s, j, size, base) < 0) wk->st.undecodable++;
}

/* A NOTICE to an address the switch does not know (it restarted, or the
 * rank never joined): join again. Rate-limited. */
void rt_sw_notice(struct sw_worker *wk, const struct sockaddr_in *to, const rt_hdr *h, arb_time now)
{
    arb_rt_switch *s = wk->s;
    if (!answer_allowed(s, now)) return;
    uint8_t b[RT_HDR_LEN];
    rt_hdr n = {.kind = RT_K_NOTICE, .job = h->job, .dst = h->src, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &n);
    rt_tx_src(&wk->tx, to, wk->cur_local, b, sizeof b, NULL, 0, 0);
}
