/*
 * Unit tests of the switch engine (switch.h) on a real plan: an AllReduce
 * of 4 ranks over leafspine:2,2,1 (two leaves of two hosts, one spine),
 * hand-made credits and requests, a fake clock. What each packet does is
 * derived from the plan's entries: a credit climbs from below and is
 * replicated to the entry's children from above; requests meet in the
 * aggregator and their aggregate climbs.
 *
 * Then the two drivers side by side: an AllReduce with values under loss
 * and a small slot pool (so credits repair and requests miss) runs in the
 * simulator, whose leaf 1.0 records every packet its engine decides on;
 * the same packets are fed, as datagrams from the same ports, to the
 * runtime's switch as leaf 1.0 of the same fabric, and its decisions must
 * be the simulator's, one for one.
 */
#define _GNU_SOURCE
#include "arbor/agg.h"
#include "arbor/plan.h"
#include "arbor/rt.h"
#include "arbor/sim.h"
#include "arbor/switch.h"
#include "arbor/topo.h"
#include "rt/rt_int.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static arb_topo *g_t;
static arb_plan *g_p;

static void make_plan(void)
{
    REQUIRE_EQ_I(arb_topo_new(&g_t, "leafspine:2,2,1", NULL, NULL, 0), 0);
    uint32_t ranks[4] = {0, 1, 2, 3};
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.ranks = ranks;
    pc.n_ranks = 4;
    pc.bytes = 4 * 8192;
    REQUIRE_EQ_I(arb_topo_plan(&g_p, g_t, &pc, NULL, 0), 0);
}

/* Tree 0's entry at level `level` that aggregates (the leaf of its
 * responder's side or the root). */
static const arb_plan_entry *entry_at(uint32_t level)
{
    const arb_plan_tree *tr = arb_plan_get_tree(g_p, 0);
    for (uint32_t x = 0; x < tr->n_entries; x++) {
        const arb_plan_entry *e = arb_plan_get_entry(g_p, tr->first_entry + x);
        if (e->level == level && e->aggregate && e->n_children == 2) return e;
    }
    return NULL;
}

static arb_switch *make_switch(const arb_plan_entry *e, int trusted)
{
    arb_switch_config c;
    arb_switch_config_default(&c);
    c.first_port = arb_topo_node(g_t, e->node)->first_port;
    c.trusted = trusted;
    arb_switch *sw = NULL;
    REQUIRE_EQ_I(arb_switch_new(&sw, &c), 0);
    return sw;
}

static arb_agg *make_agg(const arb_plan_entry *e)
{
    const arb_node *nd = arb_topo_node(g_t, e->node);
    arb_agg_config c;
    arb_agg_config_default(&c);
    c.slots = 16;
    c.ports = (uint32_t)nd->n_down + nd->n_up;
    c.header_only = 1;
    arb_agg *a = NULL;
    REQUIRE_EQ_I(arb_agg_new(&a, &c), 0);
    return a;
}

static arb_hdr credit(uint32_t offset, int depth)
{
    arb_hdr h;
    arb_hdr_init(&h, ARB_PT_RESPONSE, 1, ARB_DTYPE_F32, 1);
    h.op = ARB_OP_SUM;
    h.credit_valid = 1;
    h.agg_depth = (uint8_t)depth;
    h.offset_b = offset;
    return h;
}

/* The request answering credit c (its pushed stack), fan-in 2 at its top. */
static arb_hdr request(const arb_hdr *c)
{
    arb_hdr h;
    arb_hdr_init(&h, ARB_PT_DATA_REQUEST, c->message_id, ARB_DTYPE_F32, c->ext);
    h.op = ARB_OP_SUM;
    h.payload_valid = 1;
    h.agg_depth = c->agg_depth;
    h.offset_a = c->offset_b;
    h.offset_b = 1;
    for (int i = 0; i < c->agg_depth; i++) {
        h.agg_loc[i] = c->agg_loc[i];
        h.fanin[i] = 2;
    }
    return h;
}

static arb_switch_action feed(arb_switch *sw, arb_agg *a, const arb_plan_entry *e, arb_hdr *h,
                              uint32_t port, arb_time now)
{
    /* header-only: a request stands for a full payload, a credit has none */
    size_t len = h->packet_type == ARB_PT_DATA_REQUEST && h->payload_valid ? 8192 : 0;
    arb_switch_packet pk = {
        .hdr = h, .payload = NULL, .payload_len = len, .channel = 7, .port = port, .ce = 0};
    arb_switch_action act;
    memset(&act, 0xAB, sizeof act);
    CHECK_EQ_I(arb_switch_recv(sw, a, g_p, e, &pk, now, &act), 0);
    return act;
}

/* A credit from above at an aggregating leaf takes a slot and goes to both
 * children; from below it climbs, the aggregator untouched. */
TEST(credit_down_replicates_up_climbs)
{
    const arb_plan_entry *leaf = entry_at(1);
    REQUIRE(leaf != NULL && leaf->up_port != ARB_PLAN_NONE);
    arb_switch *sw = make_switch(leaf, 0);
    arb_agg *a = make_agg(leaf);
    arb_hdr c = credit(5, 0);
    arb_switch_action act = feed(sw, a, leaf, &c, leaf->up_port, 1);
    CHECK_EQ_I(act.verb, ARB_SWITCH_CHILDREN);
    CHECK_EQ_U(act.n_ports, leaf->n_children);
    CHECK(act.ports == arb_plan_children(g_p, leaf));
    CHECK_EQ_U(act.agg_called, 1);
    CHECK_EQ_I(act.agg.reason, ARB_AGG_R_PUSH);
    CHECK_EQ_U(c.agg_depth, 1); /* the slot pushed on the credit itself */
    CHECK_EQ_U(act.made, 0);
    arb_hdr up = credit(6, 0);
    act = feed(sw, a, leaf, &up, arb_plan_children(g_p, leaf)[0], 2);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UP);
    CHECK_EQ_U(act.port, leaf->up_port);
    CHECK_EQ_U(act.agg_called, 0);
    CHECK_EQ_U(up.agg_depth, 0);
    arb_switch_stats st;
    arb_switch_get_stats(sw, &st);
    CHECK_EQ_U(st.packets, 2);
    CHECK_EQ_U(st.verbs[ARB_SWITCH_CHILDREN], 1);
    CHECK_EQ_U(st.verbs[ARB_SWITCH_UP], 1);
    CHECK_EQ_U(st.agg_calls, 1);
    CHECK_EQ_U(st.copies, leaf->n_children - 1);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* Two requests of the slot a credit took: the first is kept, the second
 * completes it and its aggregate climbs, made by the switch, one level of
 * the stack popped. */
TEST(requests_aggregate_and_climb)
{
    const arb_plan_entry *leaf = entry_at(1);
    REQUIRE(leaf != NULL);
    arb_switch *sw = make_switch(leaf, 1);
    arb_agg *a = make_agg(leaf);
    arb_hdr c = credit(9, 1); /* one aggregating tier above already pushed */
    c.agg_loc[0] = 3;
    feed(sw, a, leaf, &c, leaf->up_port, 1);
    REQUIRE_EQ_U(c.agg_depth, 2);
    const uint32_t *kids = arb_plan_children(g_p, leaf);
    arb_hdr r0 = request(&c), r1 = request(&c);
    arb_switch_action act = feed(sw, a, leaf, &r0, kids[0], 2);
    CHECK_EQ_I(act.verb, ARB_SWITCH_CONSUMED);
    act = feed(sw, a, leaf, &r1, kids[1], 3);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UP);
    CHECK_EQ_U(act.port, leaf->up_port);
    CHECK_EQ_U(act.made, 1);
    CHECK_EQ_U(act.aggregated, 1);
    CHECK_EQ_I(act.agg.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r1.aggregated, 1);
    CHECK_EQ_U(r1.agg_depth, 1); /* on to the tier above */
    CHECK_EQ_U(r1.offset_b, 2);  /* two contributions */
    /* a duplicate from the same port: dropped */
    arb_hdr r2 = request(&c);
    act = feed(sw, a, leaf, &r2, kids[0], 4);
    CHECK_EQ_I(act.verb, ARB_SWITCH_DROP);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* At the root the aggregate whose stack is empty goes to the responder;
 * a request naming a slot another offset took becomes an AGG_MISS made by
 * the switch, unicast to the responder. */
TEST(root_unicasts_and_miss)
{
    const arb_plan_entry *root = entry_at(2);
    REQUIRE(root != NULL && root->up_port == ARB_PLAN_NONE);
    arb_switch *sw = make_switch(root, 0);
    arb_agg *a = make_agg(root);
    arb_hdr c = credit(11, 0);
    arb_switch_action act = feed(sw, a, root, &c, arb_plan_children(g_p, root)[0], 1);
    CHECK_EQ_I(act.verb, ARB_SWITCH_CHILDREN); /* at the root a credit goes down */
    const uint32_t *kids = arb_plan_children(g_p, root);
    arb_hdr r0 = request(&c), r1 = request(&c);
    feed(sw, a, root, &r0, kids[0], 2);
    act = feed(sw, a, root, &r1, kids[1], 3);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UNICAST);
    CHECK_EQ_U(r1.agg_depth, 0);
    CHECK_EQ_U(act.made, 1);
    /* another offset's request naming the same slot: AGG_MISS */
    arb_hdr other = credit(12, 0);
    other.agg_depth = 1;
    other.agg_loc[0] = c.agg_loc[0];
    arb_hdr m = request(&other);
    act = feed(sw, a, root, &m, kids[0], 4);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UNICAST);
    CHECK_EQ_U(act.made, 1);
    CHECK_EQ_I(act.agg.action, ARB_AGG_EMIT_MISS);
    CHECK_EQ_U(m.packet_type, ARB_PT_AGG_MISS);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* A seeded credit's slot (docs/protocol.md section 5, "Seeded credits"):
 * its aggregate goes to the responder and, being the whole result, down
 * to every child as the offset's tail result; an unseeded one does not. */
TEST(seeded_result_goes_down_too)
{
    const arb_plan_entry *root = entry_at(2);
    REQUIRE(root != NULL);
    arb_switch *sw = make_switch(root, 0);
    arb_agg *a = make_agg(root);
    const uint32_t *kids = arb_plan_children(g_p, root);
    arb_hdr c = credit(21, 0);
    c.payload_kind = ARB_PK_SEED, c.offset_a = 21; /* header-only: a mark */
    arb_switch_action act = feed(sw, a, root, &c, kids[0], 1);
    CHECK_EQ_I(act.verb, ARB_SWITCH_CHILDREN);
    CHECK_EQ_U(c.payload_kind, ARB_PK_DATA); /* on bare */
    arb_hdr r0 = request(&c), r1 = request(&c);
    r0.payload_valid = r1.payload_valid = 0;
    feed(sw, a, root, &r0, kids[0], 2);
    act = feed(sw, a, root, &r1, kids[1], 3);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UNICAST);
    CHECK_EQ_U(r1.payload_kind, ARB_PK_SEED);
    CHECK_EQ_U(act.down, 1);
    CHECK(act.ports == kids);
    CHECK_EQ_U(act.n_ports, root->n_children);
    CHECK_EQ_U(act.down_hdr.packet_type, ARB_PT_RESPONSE);
    CHECK_EQ_U(act.down_hdr.credit_valid, 0);
    CHECK_EQ_U(act.down_hdr.offset_a, 21);
    CHECK_EQ_U(act.down_hdr.payload_kind, ARB_PK_COMPLETION); /* header-only */
    CHECK_EQ_I(arb_hdr_validate(&act.down_hdr, 0), 0);
    arb_hdr u = credit(22, 0);
    feed(sw, a, root, &u, kids[0], 4);
    arb_hdr u0 = request(&u), u1 = request(&u);
    feed(sw, a, root, &u0, kids[0], 5);
    act = feed(sw, a, root, &u1, kids[1], 6);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UNICAST);
    CHECK_EQ_U(act.down, 0);
    arb_switch_stats st;
    arb_switch_get_stats(sw, &st);
    CHECK_EQ_U(st.results_down, 1);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* A repair request and any other packet of a tree go to the responder
 * without the aggregator; an entry that does not aggregate passes a
 * request up. */
TEST(others_unicast)
{
    const arb_plan_entry *leaf = entry_at(1);
    REQUIRE(leaf != NULL);
    arb_switch *sw = make_switch(leaf, 0);
    arb_agg *a = make_agg(leaf);
    arb_hdr c = credit(1, 0);
    c.agg_depth = 1;
    arb_hdr r = request(&c);
    r.repair = 1;
    r.agg_depth = 0;
    r.fanin[0] = 0;
    r.agg_loc[0] = 0;
    arb_switch_action act = feed(sw, a, leaf, &r, arb_plan_children(g_p, leaf)[0], 1);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UNICAST);
    CHECK_EQ_U(act.agg_called, 0);
    arb_plan_entry plain = *leaf;
    plain.aggregate = 0;
    arb_hdr q = request(&c);
    act = feed(sw, NULL, &plain, &q, arb_plan_children(g_p, leaf)[1], 2);
    CHECK_EQ_I(act.verb, ARB_SWITCH_UP);
    CHECK_EQ_U(act.agg_called, 0);
    CHECK_EQ_U(q.agg_depth, 1);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* Untrusted (the runtime): a malformed header is dropped by the aggregator;
 * broken calls are errors. */
TEST(malformed_and_errors)
{
    const arb_plan_entry *leaf = entry_at(1);
    REQUIRE(leaf != NULL);
    arb_switch *sw = make_switch(leaf, 0);
    arb_agg *a = make_agg(leaf);
    arb_hdr c = credit(1, 0);
    c.dtype = 200; /* no such dtype */
    arb_switch_action act = feed(sw, a, leaf, &c, leaf->up_port, 1);
    CHECK_EQ_I(act.verb, ARB_SWITCH_DROP);
    CHECK_EQ_I(act.agg.reason, ARB_AGG_R_MALFORMED);
    arb_hdr ok = credit(2, 0);
    arb_switch_packet pk = {.hdr = &ok, .port = leaf->up_port};
    CHECK_EQ_I(arb_switch_recv(NULL, a, g_p, leaf, &pk, 1, &act), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_recv(sw, NULL, g_p, leaf, &pk, 1, &act), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_recv(sw, a, NULL, leaf, &pk, 1, &act), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_recv(sw, a, g_p, NULL, &pk, 1, &act), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_recv(sw, a, g_p, leaf, NULL, 1, &act), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_recv(sw, a, g_p, leaf, &pk, 1, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_switch_new(NULL, NULL), ARB_EINVAL);
    /* a port the aggregator does not know: its error, and a DROP */
    arb_hdr far = credit(3, 0);
    act = feed(sw, a, leaf, &far, leaf->up_port, 2);
    CHECK_EQ_I(act.verb, ARB_SWITCH_CHILDREN);
    arb_switch_config cfg;
    arb_switch_config_default(&cfg);
    cfg.first_port = arb_topo_node(g_t, leaf->node)->first_port + 1000; /* ports below it */
    arb_switch *off = NULL;
    REQUIRE_EQ_I(arb_switch_new(&off, &cfg), 0);
    arb_hdr r = credit(4, 0);
    act = feed(off, a, leaf, &r, leaf->up_port, 3);
    CHECK_EQ_I(act.verb, ARB_SWITCH_DROP);
    CHECK_EQ_I(act.error, ARB_EINVAL);
    arb_switch_free(off);
    CHECK(strcmp(arb_switch_verb_name(ARB_SWITCH_CHILDREN), "CHILDREN") == 0);
    CHECK(arb_switch_verb_name(ARB_SWITCH_VERB_COUNT) == NULL);
    CHECK(arb_switch_verb_name(-1) == NULL);
    arb_agg_free(a);
    arb_switch_free(sw);
}

/* ---- the simulator and the runtime, packet for packet ----------------- */

#define DIFF_MAX 4096

/* One decision: the packet as it arrived, and what the engine did. */
struct rec {
    arb_hdr in, out;
    uint8_t in_payload[ARB_PAYLOAD_MAX], out_payload[ARB_PAYLOAD_MAX];
    size_t in_len, out_len;
    uint32_t port, n_ports, up;
    uint64_t channel; /* the simulator's: the first job's channel c is c */
    uint32_t ports[8];
    int in_ce, out_ce;
    arb_switch_verb verb;
    uint8_t made, aggregated;
    arb_agg_action action;
    arb_agg_reason reason;
};

struct recs {
    struct rec *v;
    uint32_t n, node;
    int overflow;
};

/* The packets the runtime hands its engine: credits, and normal requests
 * climbing (its other packets go to the responder before the engine). */
static int runtime_sees(const arb_hdr *h)
{
    return h->packet_type == ARB_PT_RESPONSE ||
           (h->packet_type == ARB_PT_DATA_REQUEST && !h->repair && h->agg_depth > 0);
}

static void record(void *ctx, const arb_switch_event *ev)
{
    struct recs *r = ctx;
    if (ev->node != r->node || !runtime_sees(ev->in)) return;
    if (r->n == DIFF_MAX) {
        r->overflow = 1;
        return;
    }
    struct rec *x = &r->v[r->n++];
    x->in = *ev->in;
    x->in_len = ev->in_len;
    if (ev->in_payload && ev->in_len) memcpy(x->in_payload, ev->in_payload, ev->in_len);
    x->in_ce = ev->in_ce;
    x->port = ev->out->port;
    x->channel = ev->out->channel;
    x->out = *ev->out->hdr;
    x->out_len = ev->out->payload_len;
    if (ev->out->payload && ev->out->payload_len)
        memcpy(x->out_payload, ev->out->payload, ev->out->payload_len);
    x->out_ce = ev->out->ce;
    x->verb = ev->act->verb;
    x->made = ev->act->made;
    x->aggregated = ev->act->aggregated;
    x->up = ev->act->verb == ARB_SWITCH_UP ? ev->act->port : 0;
    x->n_ports = ev->act->verb == ARB_SWITCH_CHILDREN ? ev->act->n_ports : 0;
    for (uint32_t k = 0; k < x->n_ports && k < 8; k++)
        x->ports[k] = ev->act->ports[k];
    x->action = ev->act->agg_called ? ev->act->agg.action : ARB_AGG_ACTION_COUNT;
    x->reason = ev->act->agg_called ? ev->act->agg.reason : ARB_AGG_REASON_COUNT;
}

static uint32_t sim_route(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                          const arb_sim_pkt_info *f, arb_time now)
{
    (void)ctx, (void)in_port, (void)now;
    const arb_topo *t = arb_sim_topo(sim);
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *n = arb_topo_node(t, node);
    if (arb_pgft_below(g, n, f->dst)) return arb_pgft_down_port(g, n, f->dst);
    return n->first_up;
}

#define DIFF_SLOTS 4

/* The simulator's side: a 4-rank AllReduce of 256 KiB with values, 2% loss
 * on every link, 4 slots a switch; leaf 1.0's decisions into r. */
static void sim_side(struct recs *r)
{
    uint32_t ranks[4] = {0, 1, 2, 3};
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.ranks = ranks;
    pc.n_ranks = 4;
    pc.bytes = 256 * 1024;
    arb_plan *p = NULL;
    REQUIRE_EQ_I(arb_topo_plan(&p, g_t, &pc, NULL, 0), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = sim_route;
    cfg.loss = 0.02;
    cfg.seed = 5;
    cfg.switch_tap = record;
    cfg.switch_tap_ctx = r;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, g_t, &cfg), 0);
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.plan = p;
    ac.values = 1;
    ac.slots = DIFF_SLOTS;
    ac.ep.timeout = 200 * ARB_PS_PER_US;
    ac.ep.retry = 100 * ARB_PS_PER_US;
    CHECK_EQ_I(arb_sim_arbor_add(s, &ac), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_PS_PER_S), 0);
    arb_sim_arbor_result res;
    CHECK_EQ_I(arb_sim_arbor_result_get(s, &res), 0);
    CHECK_EQ_I(res.correct, 1);
    arb_sim_free(s);
    arb_plan_free(p);
}

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(0x7F000001);
    return a;
}

/* The runtime's side: leaf 1.0 of the same fabric, its ranks 0 and 1
 * joined from 40000 + r and its spine a peer at 40100, fed the recorded
 * packets; its decisions into out. */
static void rt_side(const struct recs *in, struct recs *out)
{
    arb_rt_switch_config cfg;
    arb_rt_switch_config_default(&cfg);
    cfg.listen = "127.0.0.1:0";
    cfg.slots = DIFF_SLOTS;
    cfg.jobs[0].id = 1;
    cfg.jobs[0].secret = "diff";
    cfg.n_jobs = 1;
    cfg.topo = "leafspine:2,2,1";
    cfg.peers[0].level = 2;
    cfg.peers[0].index = 0;
    cfg.peers[0].addr = "127.0.0.1:40100";
    cfg.n_peers = 1;
    arb_rt_switch *s = NULL;
    char err[160];
    int rc = arb_rt_switch_new(&s, &cfg, err, sizeof err);
    if (rc < 0) printf("  %s\n", err);
    REQUIRE_EQ_I(rc, 0);
    rt_switch_mute(s);
    rt_switch_tap(s, record, out);
    uint8_t key[RT_KEY_LEN];
    REQUIRE_EQ_I(rt_key(key, "diff"), 0);
    arb_time now = 1;
    for (uint32_t rank = 0; rank < 2; rank++) {
        rt_join j = {.job = 1,
                     .rank = rank,
                     .size = 4,
                     .base = 0,
                     .counter = 1 + rank,
                     .fabric = rt_fabric_id(arb_topo_spec(g_t))};
        memset(j.nonce, (int)rank, sizeof j.nonce);
        uint8_t b[RT_JOIN_LEN];
        rt_join_put(b, &j, key);
        struct sockaddr_in a = loopback((uint16_t)(40000 + rank));
        rt_switch_feed(s, &a, b, sizeof b, now++);
        rt_switch_flush(s);
    }
    uint8_t buf[RT_DGRAM_MAX];
    for (uint32_t i = 0; i < in->n; i++) {
        const struct rec *x = &in->v[i];
        uint32_t peer = arb_topo_port(g_t, x->port)->peer; /* the node at the far end */
        int from_host = peer < arb_topo_n_hosts(g_t);
        rt_hdr rh = {.kind = RT_K_ARBOR,
                     .flags = (uint8_t)(x->in_ce ? RT_F_CE : 0),
                     .dst_kind = x->in.packet_type == ARB_PT_RESPONSE ? 1 : 0,
                     .job = 1,
                     .channel = (uint16_t)x->channel,
                     .src = (uint16_t)(from_host ? peer : 0)};
        rt_hdr_put(buf, &rh);
        size_t hl = 0;
        REQUIRE_EQ_I(arb_hdr_encode(&x->in, x->in_len, buf + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl), 0);
        memcpy(buf + RT_HDR_LEN + hl, x->in_payload, x->in_len);
        struct sockaddr_in a = loopback((uint16_t)(from_host ? 40000 + peer : 40100));
        rt_switch_feed(s, &a, buf, RT_HDR_LEN + hl + x->in_len, now++);
        rt_switch_flush(s);
    }
    arb_rt_switch_free(s);
}

static int same_rec(const struct rec *a, const struct rec *b)
{
    return a->port == b->port && a->verb == b->verb && a->made == b->made &&
           a->aggregated == b->aggregated && a->action == b->action && a->reason == b->reason &&
           a->up == b->up && a->n_ports == b->n_ports &&
           memcmp(a->ports, b->ports, sizeof a->ports) == 0 && arb_hdr_equal(&a->out, &b->out) &&
           a->out_ce == b->out_ce && a->out_len == b->out_len &&
           memcmp(a->out_payload, b->out_payload, a->out_len) == 0;
}

TEST(simulator_and_runtime_decide_alike)
{
    struct recs sim = {.v = calloc(DIFF_MAX, sizeof(struct rec)),
                       .node = arb_topo_node_id(g_t, 1, 0)};
    struct recs rt = {.v = calloc(DIFF_MAX, sizeof(struct rec)), .node = sim.node};
    REQUIRE(sim.v && rt.v);
    sim_side(&sim);
    CHECK_EQ_I(sim.overflow, 0);
    /* what the sequence holds: credits down and up, repairs, requests
     * counted and completed, AGG_MISSes */
    uint32_t by_verb[ARB_SWITCH_VERB_COUNT] = {0}, miss = 0, repair = 0;
    for (uint32_t i = 0; i < sim.n; i++) {
        by_verb[sim.v[i].verb]++;
        miss += sim.v[i].action == ARB_AGG_EMIT_MISS;
        repair += sim.v[i].in.repair;
    }
    printf("  leaf 1.0: %u decisions: %u CHILDREN, %u UP, %u CONSUMED, %u UNICAST, %u DROP; "
           "%u AGG_MISS, %u repairs\n",
           sim.n, by_verb[ARB_SWITCH_CHILDREN], by_verb[ARB_SWITCH_UP],
           by_verb[ARB_SWITCH_CONSUMED], by_verb[ARB_SWITCH_UNICAST], by_verb[ARB_SWITCH_DROP],
           miss, repair);
    CHECK(by_verb[ARB_SWITCH_CHILDREN] > 0 && by_verb[ARB_SWITCH_UP] > 0);
    CHECK(by_verb[ARB_SWITCH_CONSUMED] > 0);
    CHECK(miss > 0);
    CHECK(repair > 0);
    rt_side(&sim, &rt);
    CHECK_EQ_U(rt.n, sim.n);
    uint32_t differ = 0;
    for (uint32_t i = 0; i < sim.n && i < rt.n; i++)
        if (!same_rec(&sim.v[i], &rt.v[i]) && differ++ < 3)
            printf("  decision %u differs: simulator %s (agg %d/%d), runtime %s (agg %d/%d)\n", i,
                   arb_switch_verb_name(sim.v[i].verb), sim.v[i].action, sim.v[i].reason,
                   arb_switch_verb_name(rt.v[i].verb), rt.v[i].action, rt.v[i].reason);
    CHECK_EQ_U(differ, 0);
    free(sim.v);
    free(rt.v);
}

int main(void)
{
    make_plan();
    RUN(credit_down_replicates_up_climbs);
    RUN(requests_aggregate_and_climb);
    RUN(root_unicasts_and_miss);
    RUN(seeded_result_goes_down_too);
    RUN(others_unicast);
    RUN(malformed_and_errors);
    RUN(simulator_and_runtime_decide_alike);
    arb_plan_free(g_p);
    arb_topo_free(g_t);
    return testkit_done();
}
