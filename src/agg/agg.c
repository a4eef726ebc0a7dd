/*
 * The aggregator engine (agg.h): a slot pool allocated in rotation, the
 * location-stack push of credits, and the owner check, counting, reduction
 * and pop of requests. docs/aggregator.md describes the behaviour; this file
 * follows it branch by branch.
 */
#include "arbor/agg.h"
#include "agg/agg_trusted.h"
#include "agg/agg_int.h"

#include <stdlib.h>
#include <string.h>

#include "arbor/reduce.h"

static const char *const action_names[ARB_AGG_ACTION_COUNT] = {
    "CONSUMED", "FORWARD", "EMIT_AGGREGATE", "EMIT_MISS", "DROP"};

static const char *const reason_names[ARB_AGG_REASON_COUNT] = {
    "BYPASS",    "PUSH",  "FANIN1",    "COUNTED",  "COMPLETE", "OWNER",      "BAD_SLOT",
    "DUPLICATE", "LATE",  "OVERCOUNT", "MISMATCH", "TOO_LONG", "STACK_FULL", "STACK_EXT",
    "MALFORMED", "STALE", "ADOPT",     "REPLAY",   "HELD"};

void arb_agg_config_default(arb_agg_config *cfg)
{
    if (!cfg) return;
    cfg->slots = ARB_AGG_SLOTS_DEFAULT;
    cfg->max_payload = ARB_PAYLOAD_MAX;
    cfg->header_only = 0;
    cfg->ports = ARB_AGG_PORTS_DEFAULT;
    cfg->local_repair = 1;
    cfg->recredit_min = ARB_AGG_RECREDIT_MIN_DEFAULT;
    cfg->recredit_max = ARB_AGG_RECREDIT_MAX_DEFAULT;
    cfg->recredit_tries = ARB_AGG_RECREDIT_TRIES_DEFAULT;
    cfg->recredit_order = 1;
    cfg->recredit_hold = ARB_AGG_HOLD_DEFAULT;
    cfg->logger.fn = NULL;
    cfg->logger.user = NULL;
    cfg->logger.max_level = ARB_LOG_WARN;
    cfg->mem = NULL;
}

int arb_agg_new(arb_agg **out, const arb_agg_config *cfg)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    arb_agg_config c;
    if (cfg)
        c = *cfg;
    else
        arb_agg_config_default(&c);
    if (c.slots == 0 || c.slots > ARB_AGG_SLOTS_MAX) return ARB_EINVAL;
    if (c.max_payload == 0 || c.max_payload > ARB_PAYLOAD_MAX) return ARB_EINVAL;
    if (c.ports == 0 || c.ports > ARB_AGG_PORTS_MAX) return ARB_EINVAL;
    c.header_only = c.header_only != 0;

    arb_agg *a = arb_mem_calloc(c.mem, 1, sizeof *a);
    if (!a) return ARB_ENOMEM;
    a->cfg = c;
    a->nslots = c.slots;
    a->words = (c.ports + 63) / 64;
    a->mult = 1;
    a->slots = arb_mem_calloc(c.mem, c.slots, sizeof *a->slots);
    a->bitmap = arb_mem_calloc(c.mem, (size_t)c.slots * a->words, sizeof *a->bitmap);
    if (!c.header_only) a->acc = arb_mem_malloc(c.mem, (size_t)c.slots * c.max_payload);
    c.local_repair = c.local_repair != 0;
    if (c.local_repair) {
        uint32_t n = 1;
        while (n < 2 * c.slots || n < RECENT_WAYS)
            n *= 2;
        a->recent = arb_mem_calloc(c.mem, n, sizeof *a->recent);
        a->recent_mask = n - 1;
    }
    if (c.local_repair) {
        a->expect = arb_mem_calloc(c.mem, (size_t)c.slots * a->words, sizeof *a->expect);
        if (!c.header_only) a->cpay = arb_mem_malloc(c.mem, (size_t)c.slots * c.max_payload);
        a->qcap = 2 * c.slots;
        a->q = arb_mem_malloc(c.mem, (size_t)a->qcap * sizeof *a->q);
        a->port_last = arb_mem_calloc(c.mem, c.ports, sizeof *a->port_last);
        a->port_ce = arb_mem_calloc(c.mem, c.ports, sizeof *a->port_ce);
        a->port_heard = arb_mem_calloc(c.mem, c.ports, sizeof *a->port_heard);
    }
    if (c.recredit_min == 0) c.recredit_min = ARB_AGG_RECREDIT_MIN_DEFAULT;
    if (c.recredit_max < c.recredit_min) c.recredit_max = c.recredit_min;
    a->cfg = c;
    if (!a->slots || !a->bitmap || (!c.header_only && !a->acc) ||
        (c.local_repair && (!a->recent || !a->expect || !a->q || !a->port_last || !a->port_ce ||
                            !a->port_heard || (!c.header_only && !a->cpay)))) {
        arb_agg_free(a);
        return ARB_ENOMEM;
    }
    arb_log(&c.logger, ARB_LOG_DEBUG, "agg: %u slots of %u B, %u ports, %s mode", (unsigned)c.slots,
            (unsigned)c.max_payload, (unsigned)c.ports, c.header_only ? "header-only" : "values");
    *out = a;
    return 0;
}

void arb_agg_free(arb_agg *a)
{
    if (!a) return;
    const arb_mem *mem = a->cfg.mem;
    arb_mem_free(mem, a->slots);
    arb_mem_free(mem, a->bitmap);
    arb_mem_free(mem, a->acc);
    arb_mem_free(mem, a->recent);
    arb_mem_free(mem, a->expect);
    arb_mem_free(mem, a->cpay);
    arb_mem_free(mem, a->q);
    arb_mem_free(mem, a->port_last);
    arb_mem_free(mem, a->port_ce);
    arb_mem_free(mem, a->port_heard);
    arb_mem_free(mem, a);
}

/* ---- helpers ------------------------------------------------------------ */

/* arb_mix64 (base), here so that arb_agg_check's scan inlines it. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

static uint64_t owner_sig(uint64_t channel, uint32_t offset, uint8_t attempt, uint64_t gen)
{
    return mix64(channel ^ mix64((uint64_t)offset << 40 ^ (uint64_t)attempt << 32 ^ gen));
}

static unsigned popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

static uint8_t *slot_acc(const arb_agg *a, uint32_t id)
{
    return a->acc + (size_t)id * a->cfg.max_payload;
}

/* A live slot stops being live (completion or reclaim): close its times. */
static void close_live(arb_agg *a, const slot *s, arb_time t)
{
    a->st.slot_time = sat_add(a->st.slot_time, since(t, s->t_alloc));
    if (s->ncontrib)
        a->st.partial_slot_time = sat_add(a->st.partial_slot_time, since(t, s->t_first));
}

/* res->hdr is written by the actions that send one (FORWARD, EMIT_*). */
static void result_init(arb_agg_result *res, int ce)
{
    res->action = ARB_AGG_DROP;
    res->reason = ARB_AGG_R_MALFORMED;
    res->payload = NULL;
    res->payload_len = 0;
    res->ce = ce != 0;
    res->slot = -1;
    res->have = NULL;
    res->down = 0;
}

static int forward(arb_agg_result *res, const arb_hdr *h, const void *payload, size_t len,
                   arb_agg_reason why)
{
    res->action = ARB_AGG_FORWARD;
    res->reason = why;
    res->hdr = *h;
    res->payload = payload;
    res->payload_len = len;
    return 0;
}

static int drop(arb_agg *a, arb_agg_result *res, const arb_hdr *h, arb_agg_reason why,
                uint64_t channel, uint32_t port)
{
    res->action = ARB_AGG_DROP;
    res->reason = why;
    arb_log(&a->cfg.logger, ARB_LOG_DEBUG,
            "agg: drop %s: type %u channel %llu offset %u count %u port %u slot %d",
            reason_names[why], (unsigned)h->packet_type, (unsigned long long)channel,
            (unsigned)h->offset_a, (unsigned)h->offset_b, (unsigned)port, (int)res->slot);
    return 0;
}

/* Remove the top of the location stack (its bytes are cleared, so the
 * result does not depend on which input completed the slot). */
static void pop(arb_hdr *h)
{
    h->agg_depth--;
    h->agg_loc[h->agg_depth] = 0;
    h->fanin[h->agg_depth] = 0;
}

/* A seeded credit's seed goes no further than the first slot: the credit
 * goes on bare (it carried no result: a seed is its own offset's). */
static void strip_seed(arb_hdr *h, const void **payload, size_t *len)
{
    if (h->payload_kind != ARB_PK_SEED) return;
    h->payload_valid = 0;
    h->payload_kind = ARB_PK_DATA;
    *payload = NULL;
    *len = 0;
}

/* ---- local repair: the slot of an earlier attempt -------------------------- */

/* The recent table's set of (channel, offset). Set-associative, because
 * channels advance in step: two contexts that share an entry are in flight
 * together, offset after offset, at every switch alike (one hash), and in
 * a direct-mapped table each evicted the other's every attempt (seen on
 * rail:2,8,4,4 at 1% loss: an offset's eight credits gathered anew, each
 * presumed lost before the leaves' re-credits came, and it went to the
 * bypass repair). */
static uint32_t *recent_set(const arb_agg *a, uint64_t channel, uint32_t offset)
{
    uint64_t h = mix64(channel ^ (uint64_t)offset << 40);
    return &a->recent[h & a->recent_mask & ~(uint64_t)(RECENT_WAYS - 1)];
}

/* A slot is another attempt's (or copy's) of the same context only while
 * it is fresh: taken less than the hold ago. A channel's identity and
 * offset may come round again (a runtime's message ids are 8 bits and each
 * call's offsets start at 0): much later, the same numbers are another
 * message, whose data must never be answered from an old slot. */
static int fresh(const arb_agg *a, const slot *s, arb_time now)
{
    return now - s->t_alloc <= a->cfg.recredit_hold;
}

/* The slot (channel, offset) was last given here, fresh, or -1. */
static int32_t recent_find(const arb_agg *a, uint64_t channel, uint32_t offset, arb_time now)
{
    const uint32_t *set = recent_set(a, channel, offset);
    for (unsigned w = 0; w < RECENT_WAYS; w++) {
        if (!set[w]) continue;
        const slot *s = &a->slots[set[w] - 1];
        if (s->state != SLOT_FREE && s->channel == channel && s->offset == offset &&
            fresh(a, s, now))
            return (int32_t)(set[w] - 1);
    }
    return -1;
}

/* Slot id was given to (channel, offset): its entry replaces that
 * context's own, else an empty or stale one (its slot free, not fresh, or
 * gone to a context of another set), else the oldest. */
static void recent_put(arb_agg *a, uint64_t channel, uint32_t offset, uint32_t id, arb_time now)
{
    uint32_t *set = recent_set(a, channel, offset);
    unsigned victim = 0, w;
    arb_time oldest = ARB_TIME_NEVER;
    for (w = 0; w < RECENT_WAYS; w++) {
        if (!set[w]) continue;
        const slot *s = &a->slots[set[w] - 1];
        if (s->channel == channel && s->offset == offset) break; /* slot id is one: set already */
    }
    if (w < RECENT_WAYS) {
        set[w] = id + 1;
        return;
    }
    for (w = 0; w < RECENT_WAYS; w++) {
        if (!set[w]) break;
        const slot *s = &a->slots[set[w] - 1];
        if (s->state == SLOT_FREE || !fresh(a, s, now) ||
            recent_set(a, s->channel, s->offset) != set)
            break;
        if (s->t_alloc < oldest) {
            oldest = s->t_alloc;
            victim = w;
        }
    }
    set[w < RECENT_WAYS ? w : victim] = id + 1;
}

/* The slot an earlier attempt of (channel, offset) took here and still
 * holds, fresh, or -1. */
static int32_t earlier_attempt(const arb_agg *a, uint64_t channel, uint32_t offset, uint8_t attempt,
                               arb_time now)
{
    int32_t id = recent_find(a, channel, offset, now);
    return id >= 0 && a->slots[id].attempt < attempt ? id : -1;
}

/* The live slot this very context (same attempt) holds here, fresh, or
 * -1. */
static int32_t held(const arb_agg *a, uint64_t channel, uint32_t offset, uint8_t attempt,
                    arb_time now)
{
    int32_t id = recent_find(a, channel, offset, now);
    return id >= 0 && a->slots[id].state == SLOT_LIVE && a->slots[id].attempt == attempt ? id : -1;
}

/* A later attempt's credit takes over the partial slot of an earlier one:
 * what its inputs counted stays (the same data: a requester answers every
 * attempt with the same contribution); the credit goes on only to the
 * ports that have not contributed (res->have), unless they are answering
 * the copy this switch sent them on a queued path (agg_answering): then it
 * goes no further (HELD). */
static int adopt(arb_agg *a, slot *s, uint32_t id, arb_hdr *h, const void *payload, size_t len,
                 uint32_t port, arb_time now, arb_agg_result *res)
{
    s->attempt = h->attempt;
    s->owner_sig = owner_sig(s->channel, s->offset, s->attempt, s->gen);
    res->slot = (int32_t)id;
    if (agg_answering(a, id, now)) {
        a->st.dup_credits++;
        return drop(a, res, h, ARB_AGG_R_HELD, s->channel, port);
    }
    a->st.adoptions++;
    s->tries = 0;
    s->resent = 1;
    s->due = ARB_TIME_NEVER; /* armed again by the driver (arb_agg_arm) */
    s->arm_seq++;
    strip_seed(h, &payload, &len); /* the slot kept its first credit's, the same bytes */
    h->agg_loc[h->agg_depth] = (uint16_t)id;
    h->agg_depth++;
    res->have = slot_bits(a, id);
    return forward(res, h, payload, len, ARB_AGG_R_ADOPT);
}

/* A later attempt's credit meets the complete slot of an earlier one: the
 * aggregate was made here and lost above, so it is sent again, as the
 * credit's attempt, on the credit's stack; nothing below is asked again. */
static int replay(arb_agg *a, slot *s, uint32_t id, const arb_hdr *h, arb_agg_result *res)
{
    s->attempt = h->attempt;
    s->owner_sig = owner_sig(s->channel, s->offset, s->attempt, s->gen);
    a->st.replays++;
    arb_hdr *o = &res->hdr;
    arb_hdr_init(o, ARB_PT_DATA_REQUEST, s->msg_id, s->dtype, s->ext);
    o->op = s->op;
    o->payload_valid = s->payload_valid;
    o->payload_kind = s->pkind;
    o->aggregated = 1;
    o->offset_a = s->offset;
    o->offset_b = s->count;
    o->attempt = h->attempt;
    o->agg_depth = h->agg_depth;
    for (unsigned i = 0; i < h->agg_depth; i++) {
        o->agg_loc[i] = h->agg_loc[i];
        o->fanin[i] = s->out_fanin[i];
    }
    res->action = ARB_AGG_EMIT_AGGREGATE;
    res->reason = ARB_AGG_R_REPLAY;
    res->slot = (int32_t)id;
    res->payload = a->cfg.header_only || !s->len ? NULL : slot_acc(a, id);
    res->payload_len = s->len;
    res->ce = s->ce;
    return 0;
}

/* ---- credits going down ------------------------------------------------- */

/* Slot id (s), just taken at the top of its stack, keeps the seed its
 * credit carries (values: as the accumulator's first input). A seed too
 * long for the accumulator, or of a header-only credit, is a mark only
 * where the mode is header-only: otherwise the slot is left unseeded and
 * the responder adds its own contribution itself. */
static void keep_seed(arb_agg *a, slot *s, uint32_t id, const arb_hdr *h, const void *payload,
                      size_t len)
{
    s->seeded = 0;
    if (h->payload_kind != ARB_PK_SEED || h->agg_depth != 0) return;
    if (a->cfg.header_only) {
        s->seeded = 1;
        return;
    }
    if (!payload || !len || len > a->cfg.max_payload) return;
    memcpy(slot_acc(a, id), payload, len);
    s->len = (uint32_t)len;
    s->dtype = h->dtype;
    s->op = h->op;
    s->seeded = 1;
}

static int on_credit(arb_agg *a, arb_hdr *h, const void *payload, size_t len, uint64_t channel,
                     uint32_t port, arb_time t, arb_agg_result *res)
{
    a->st.credits++;
    uint8_t d = h->agg_depth;
    if (d >= ARB_MAX_DEPTH || (d >= 1 && !h->ext)) {
        a->st.stack_overflow++;
        return drop(a, res, h, d >= ARB_MAX_DEPTH ? ARB_AGG_R_STACK_FULL : ARB_AGG_R_STACK_EXT,
                    channel, port);
    }

    if (a->recent) {
        int32_t same = held(a, channel, h->offset_b & ARB_OFFSET_MASK, h->attempt, t);
        if (same >= 0) { /* a copy of a credit whose slot is live here */
            a->st.dup_credits++;
            res->slot = same;
            return drop(a, res, h, ARB_AGG_R_HELD, channel, port);
        }
    }
    if (a->recent && h->attempt > 0) {
        int32_t old = earlier_attempt(a, channel, h->offset_b & ARB_OFFSET_MASK, h->attempt, t);
        if (old >= 0) {
            slot *o = &a->slots[old];
            if (o->at_depth == d && o->state == SLOT_LIVE)
                return adopt(a, o, (uint32_t)old, h, payload, len, port, t, res);
            if (o->at_depth == d && o->out_depth == d) return replay(a, o, (uint32_t)old, h, res);
        }
    }
    uint32_t id = a->next;
    a->next = id + 1 == a->nslots ? 0 : id + 1;
    slot *s = &a->slots[id];
    if (s->state == SLOT_LIVE) {
        a->st.reclaimed_live++;
        close_live(a, s, t);
    } else {
        a->st.live++;
        if (a->st.live > a->st.peak_live) a->st.peak_live = a->st.live;
    }

    uint64_t gen = ++a->gen;
    s->channel = channel;
    s->offset = h->offset_b & ARB_OFFSET_MASK;
    s->gen = gen;
    s->attempt = h->attempt;
    s->owner_sig = owner_sig(channel, s->offset, s->attempt, gen);
    s->contrib_gen = 0;
    s->t_alloc = t;
    s->t_first = 0;
    s->count = 0;
    s->ncontrib = 0;
    s->len = 0;
    s->state = SLOT_LIVE;
    s->fanin = 0;
    s->dtype = 0;
    s->op = 0;
    s->payload_valid = 0;
    s->ce = 0;
    s->at_depth = d;
    s->tries = 0;
    s->resent = 0;
    s->due = ARB_TIME_NEVER;
    s->arm_seq++;
    /* The accumulator is not cleared: the seed or the first contribution
     * overwrites it. */
    keep_seed(a, s, id, h, payload, len);
    if (s->seeded) a->st.seeds++;
    memset(slot_bits(a, id), 0, a->words * sizeof(uint64_t));
    a->st.allocations++;
    if (a->recent) recent_put(a, channel, s->offset, id, t);

    strip_seed(h, &payload, &len);
    h->agg_loc[d] = (uint16_t)id;
    h->agg_depth = (uint8_t)(d + 1);
    res->slot = (int32_t)id;
    return forward(res, h, payload, len, ARB_AGG_R_PUSH);
}

/* ---- requests going up -------------------------------------------------- */

static int emit_miss(arb_agg *a, arb_agg_result *res, const arb_hdr *h, arb_agg_reason why,
                     uint64_t channel, uint32_t port)
{
    a->st.miss++;
    arb_hdr m;
    /* the tree's header profile; the attempt the request belonged to */
    arb_hdr_init(&m, ARB_PT_AGG_MISS, h->message_id, h->dtype, h->ext);
    m.offset_a = h->offset_a;
    m.attempt = h->attempt;
    res->action = ARB_AGG_EMIT_MISS;
    res->reason = why;
    res->hdr = m;
    arb_log(&a->cfg.logger, ARB_LOG_DEBUG,
            "agg: miss %s: channel %llu offset %u slot %u depth %u port %u", reason_names[why],
            (unsigned long long)channel, (unsigned)h->offset_a,
            (unsigned)h->agg_loc[h->agg_depth - 1], (unsigned)h->agg_depth, (unsigned)port);
    return 0;
}

/* Request h's contribution checked against slot id (s) and, in values
 * mode, reduced into its accumulator: ARB_AGG_R_COUNTED, or why it may not
 * count (the slot untouched). */
static arb_agg_reason reduce_into(arb_agg *a, slot *s, uint32_t id, const arb_hdr *h,
                                  const void *payload, size_t plen, uint8_t fanin)
{
    if (plen > a->cfg.max_payload) return ARB_AGG_R_TOO_LONG;
    if (s->ncontrib && (h->dtype != s->dtype || h->op != s->op || fanin != s->fanin ||
                        h->payload_valid != s->payload_valid || plen != s->len))
        return ARB_AGG_R_MISMATCH;
    /* a seed sets what the inputs must be (values mode) */
    if (!s->ncontrib && s->seeded && !a->cfg.header_only &&
        (h->dtype != s->dtype || h->op != s->op || !h->payload_valid || plen != s->len))
        return ARB_AGG_R_MISMATCH;
    if (h->offset_b > (uint32_t)fanin - s->count) return ARB_AGG_R_OVERCOUNT;
    if (!plen || a->cfg.header_only) return ARB_AGG_R_COUNTED;
    uint8_t *acc = slot_acc(a, id);
    if (s->ncontrib == 0 && !s->seeded)
        memcpy(acc, payload, plen);
    else if (arb_reduce_bytes((arb_op)h->op, (arb_dtype)h->dtype, acc, payload, plen) != 0)
        return ARB_AGG_R_MISMATCH; /* unreachable for a validated header */
    return ARB_AGG_R_COUNTED;
}

/* Slot id (s) has every contribution (h the last): it is done, and its
 * aggregate goes on in h's place. */
static int complete(arb_agg *a, slot *s, uint32_t id, const arb_hdr *h, size_t plen, arb_time t,
                    arb_agg_result *res)
{
    s->state = SLOT_DONE;
    a->st.live--;
    close_live(a, s, t);
    a->st.aggregates++;
    if (s->due != ARB_TIME_NEVER) {
        if (!s->tries) agg_loop_sample(a, t - s->t_credit); /* Karn: not a re-credited one */
        s->due = ARB_TIME_NEVER;
        agg_drop_stale(a);
    }

    arb_hdr *o = &res->hdr;
    *o = *h;
    pop(o);
    o->aggregated = 1;
    o->offset_b = s->count;
    o->attempt = s->attempt; /* the owner's: the latest attempt it counts for */
    /* a seeded slot's aggregate is the whole result; no input may claim it */
    o->payload_kind = s->seeded ? ARB_PK_SEED : ARB_PK_DATA;
    res->down = o->payload_kind == ARB_PK_SEED && o->agg_depth == 0;
    if (res->down) a->st.seeded_results++;
    s->msg_id = h->message_id;
    s->ext = h->ext;
    s->pkind = o->payload_kind;
    s->out_depth = o->agg_depth;
    memcpy(s->out_fanin, o->fanin, sizeof s->out_fanin);
    res->action = ARB_AGG_EMIT_AGGREGATE;
    res->reason = ARB_AGG_R_COMPLETE;
    res->payload = a->cfg.header_only || !plen ? NULL : slot_acc(a, id);
    res->payload_len = plen;
    res->ce = s->ce;
    return 0;
}

static int on_request(arb_agg *a, arb_hdr *h, const void *payload, size_t len, uint64_t channel,
                      uint32_t port, int ce, arb_time t, arb_agg_result *res)
{
    a->st.requests++;
    unsigned top = h->agg_depth - 1u;
    uint8_t fanin = h->fanin[top];
    uint32_t id = h->agg_loc[top];

    if (fanin == 1) {
        /* Two ranks (or a one-child branch): nothing to gather here. */
        a->st.passthrough++;
        pop(h);
        return forward(res, h, payload, len, ARB_AGG_R_FANIN1);
    }
    if (id >= a->nslots) return emit_miss(a, res, h, ARB_AGG_R_BAD_SLOT, channel, port);

    slot *s = &a->slots[id];
    res->slot = (int32_t)id;
    if (s->state == SLOT_FREE || s->channel != channel || s->offset != h->offset_a)
        return emit_miss(a, res, h, ARB_AGG_R_OWNER, channel, port);
    if (s->attempt != h->attempt && !(a->recent && h->attempt < s->attempt)) {
        /* Another attempt of the same offset owns the slot: this input
         * belongs to a context the responder has given up on, or to one it
         * has not reached yet. Neither may enter the slot, and no AGG_MISS:
         * the owner's own inputs are on their way. With local repair an
         * earlier attempt's input counts in a slot a later one adopted:
         * it is the same data. */
        a->st.stale++;
        return drop(a, res, h, ARB_AGG_R_STALE, channel, port);
    }
    if (s->state == SLOT_DONE) {
        a->st.late++;
        return drop(a, res, h, ARB_AGG_R_LATE, channel, port);
    }
    uint64_t *bits = slot_bits(a, id);
    uint64_t bit = (uint64_t)1 << (port % 64);
    if (bits[port / 64] & bit) {
        a->st.duplicate++;
        return drop(a, res, h, ARB_AGG_R_DUPLICATE, channel, port);
    }

    size_t plen = h->payload_valid ? len : 0;
    arb_agg_reason bad = reduce_into(a, s, id, h, payload, plen, fanin);
    if (bad != ARB_AGG_R_COUNTED) {
        a->st.protocol_error++;
        return drop(a, res, h, bad, channel, port);
    }

    if (s->ncontrib == 0) {
        s->fanin = fanin;
        s->dtype = h->dtype;
        s->op = h->op;
        s->payload_valid = h->payload_valid;
        s->len = (uint32_t)plen;
        s->t_first = t;
    }
    /* a re-credit waits in the same queues as the credits before it: an
     * answer within half the smoothed loop of it is the original's */
    arb_time soon = a->srtt / 2 > a->minrtt ? a->srtt / 2 : a->minrtt;
    if (s->tries && !s->judged && t - s->t_recredit < soon) {
        a->st.recredit_spurious++;
        if (a->mult < 64) a->mult = a->mult ? 2 * a->mult : 2;
        a->clean = 0;
        s->judged = 1; /* once per re-credit */
    }
    s->count += h->offset_b;
    s->ncontrib++;
    /* order: a slot sent down once tells which credit the port answered; a
     * re-credited one does not (its first copy may be what came back) */
    if (a->port_last && !s->resent && s->arm_no > a->port_last[port])
        a->port_last[port] = s->arm_no;
    if (a->port_ce) a->port_ce[port] = ce != 0;
    if (a->port_heard) a->port_heard[port] = t;
    s->contrib_gen = s->gen;
    s->ce |= ce != 0;
    bits[port / 64] |= bit;
    a->st.contributions++;

    if (s->count < fanin) {
        res->action = ARB_AGG_CONSUMED;
        res->reason = ARB_AGG_R_COUNTED;
        return 0;
    }

    return complete(a, s, id, h, plen, t, res);
}

/* ---- entry points ------------------------------------------------------- */

/* The calling contract (agg.h): errors are for it only. */
static int bad_call(const arb_agg *a, const arb_hdr *h, const void *payload, size_t payload_len,
                    uint32_t port, const arb_agg_result *res)
{
    return !a || !h || !res || port >= a->cfg.ports ||
           (!a->cfg.header_only && !payload && payload_len);
}

int arb_agg_recv(arb_agg *a, arb_hdr *h, const void *payload, size_t payload_len, uint64_t channel,
                 uint32_t port, int ce, arb_time now, arb_agg_result *res)
{
    if (bad_call(a, h, payload, payload_len, port, res)) return ARB_EINVAL;
    if (arb_hdr_validate(h, payload_len) != 0) {
        result_init(res, ce);
        a->st.packets++;
        a->st.malformed++;
        return drop(a, res, h, ARB_AGG_R_MALFORMED, channel, port);
    }
    return arb_agg_recv_trusted(a, h, payload, payload_len, channel, port, ce, now, res);
}

/* Everything but the validation and the pointer checks; arb_agg_recv's only
 * path for a valid header. */
int arb_agg_recv_trusted(arb_agg *a, arb_hdr *h, const void *payload, size_t payload_len,
                         uint64_t channel, uint32_t port, int ce, arb_time now, arb_agg_result *res)
{
    if (port >= a->cfg.ports) return ARB_EINVAL; /* the rest of the contract: agg_trusted.h */
    result_init(res, ce);
    a->st.packets++;
    if (!h->repair && h->packet_type == ARB_PT_DATA_REQUEST && h->agg_depth > 0)
        return on_request(a, h, payload, payload_len, channel, port, ce, now, res);
    if (!h->repair && h->packet_type == ARB_PT_RESPONSE && h->credit_valid)
        return on_credit(a, h, payload, payload_len, channel, port, now, res);
    a->st.bypass++;
    return forward(res, h, payload, payload_len, ARB_AGG_R_BYPASS);
}

int arb_agg_reset(arb_agg *a, arb_time now)
{
    if (!a) return ARB_EINVAL;
    uint32_t lost = 0;
    for (uint32_t i = 0; i < a->nslots; i++) {
        slot *s = &a->slots[i];
        if (s->state == SLOT_LIVE) {
            close_live(a, s, now);
            lost++;
        }
    }
    memset(a->slots, 0, (size_t)a->nslots * sizeof *a->slots);
    memset(a->bitmap, 0, (size_t)a->nslots * a->words * sizeof *a->bitmap);
    if (a->recent) memset(a->recent, 0, ((size_t)a->recent_mask + 1) * sizeof *a->recent);
    a->qhead = a->qlen = 0;
    if (a->port_last) memset(a->port_last, 0, a->cfg.ports * sizeof *a->port_last);
    if (a->port_ce) memset(a->port_ce, 0, a->cfg.ports * sizeof *a->port_ce);
    if (a->port_heard) memset(a->port_heard, 0, a->cfg.ports * sizeof *a->port_heard);
    a->mult = 1;
    a->clean = 0;
    a->next = 0;
    a->st.live = 0;
    a->st.resets++;
    a->st.reset_live += lost;
    arb_log(&a->cfg.logger, ARB_LOG_DEBUG, "agg: reset: %u live slots lost", (unsigned)lost);
    return (int)lost;
}

void arb_agg_get_stats(const arb_agg *a, arb_time now, arb_agg_stats *out)
{
    if (!a || !out) return;
    *out = a->st;
    for (uint32_t i = 0; i < a->nslots; i++) {
        const slot *s = &a->slots[i];
        if (s->state != SLOT_LIVE) continue;
        out->slot_time = sat_add(out->slot_time, since(now, s->t_alloc));
        if (s->ncontrib)
            out->partial_slot_time = sat_add(out->partial_slot_time, since(now, s->t_first));
    }
}

static int broken(const arb_agg *a, const char *what, long long id)
{
    arb_log(&a->cfg.logger, ARB_LOG_ERROR, "agg: invariant broken: %s (slot %lld)", what, id);
    return ARB_ESTATE;
}

int arb_agg_check(const arb_agg *a)
{
    if (!a) return ARB_EINVAL;
    uint32_t live = 0, done = 0;
    for (uint32_t i = 0; i < a->nslots; i++) {
        const slot *s = &a->slots[i];
        const uint64_t *bits = slot_bits(a, i);
        unsigned ports = 0;
        for (uint32_t w = 0; w < a->words; w++)
            ports += popcount64(bits[w]);
        if (s->state == SLOT_FREE) {
            if (s->gen || s->count || s->ncontrib || ports)
                return broken(a, "free slot holds state", i);
            continue;
        }
        if (s->state != SLOT_LIVE && s->state != SLOT_DONE) return broken(a, "slot state", i);
        if (s->gen == 0 || s->gen > a->gen) return broken(a, "slot never allocated", i);
        if (s->owner_sig != owner_sig(s->channel, s->offset, s->attempt, s->gen) ||
            s->offset > ARB_OFFSET_MASK)
            return broken(a, "owner changed without an allocation", i);
        if (s->ncontrib && s->contrib_gen != s->gen)
            return broken(a, "contributions of two contexts in one slot", i);
        if (ports != s->ncontrib) return broken(a, "a port contributed twice", i);
        if (s->count < s->ncontrib) return broken(a, "count below contributions", i);
        if (s->ncontrib == 0) {
            if (s->count || s->fanin || s->state != SLOT_LIVE)
                return broken(a, "empty slot with a count", i);
        } else {
            if (s->fanin < 2) return broken(a, "slot with fan-in below 2", i);
            if (s->count > s->fanin) return broken(a, "count above fan-in", i);
            if ((s->count == s->fanin) != (s->state == SLOT_DONE))
                return broken(a, "completion does not match the count", i);
            if (s->len > a->cfg.max_payload || s->dtype >= ARB_DTYPE_COUNT)
                return broken(a, "slot payload description", i);
        }
        if (s->state == SLOT_LIVE)
            live++;
        else
            done++;
    }
    const arb_agg_stats *st = &a->st;
    if (live != st->live) return broken(a, "live count", -1);
    if (st->peak_live < live || st->peak_live > a->nslots) return broken(a, "peak live", -1);
    if (st->packets != st->malformed + st->bypass + st->credits + st->requests)
        return broken(a, "packets do not add up", -1);
    if (st->credits !=
        st->allocations + st->stack_overflow + st->adoptions + st->replays + st->dup_credits)
        return broken(a, "credits do not add up", -1);
    if (st->requests != st->passthrough + st->miss + st->contributions + st->duplicate + st->late +
                            st->protocol_error + st->stale)
        return broken(a, "requests do not add up", -1);
    if (st->allocations != a->gen || st->reclaimed_live + st->reset_live > st->allocations)
        return broken(a, "allocations", -1);
    if (st->aggregates < done || st->aggregates > st->contributions)
        return broken(a, "aggregates", -1);
    if (!a->recent && (st->adoptions || st->replays)) return broken(a, "local repair off", -1);
    return 0;
}

const char *arb_agg_action_name(int action)
{
    return action >= 0 && action < ARB_AGG_ACTION_COUNT ? action_names[action] : NULL;
}

const char *arb_agg_reason_name(int reason)
{
    return reason >= 0 && reason < ARB_AGG_REASON_COUNT ? reason_names[reason] : NULL;
}
