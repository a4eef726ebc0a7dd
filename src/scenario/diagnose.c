/*
 * Why a run could not finish, in one line (arb_scenario_result_status): a
 * flow that gave up or an Arbor engine that failed, with what failed in the
 * fabric and the hosts it cut off (a search over the links still up).
 */
#include "scn_run.h"

#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

/* Nodes reachable from `from` over links that have not failed, marked in
 * seen (n_nodes bytes); queue has room for n_nodes. */
static void reach(const arb_topo *t, uint32_t from, uint8_t *seen, uint32_t *queue)
{
    uint32_t head = 0, tail = 0;
    seen[from] = 1;
    queue[tail++] = from;
    while (head < tail) {
        const arb_node *v = arb_topo_node(t, queue[head++]);
        for (uint32_t p = v->first_port; p < v->first_up + v->n_up; p++) {
            const arb_port *pt = arb_topo_port(t, p);
            if (pt->failed || seen[pt->peer]) continue;
            seen[pt->peer] = 1;
            queue[tail++] = pt->peer;
        }
    }
}

/* The hosts of f.missing_hosts the failures cut off from the responder,
 * as "h3,h9" into buf (empty: none, or no memory to tell). */
static void cut_off(const arb_topo *t, const arb_sim_arbor_failure *f, char *buf, size_t len)
{
    uint32_t n = arb_topo_n_nodes(t);
    uint8_t *seen = arb_calloc(n, 1);
    uint32_t *queue = arb_malloc((size_t)n * sizeof *queue);
    buf[0] = 0;
    if (seen && queue) {
        reach(t, f->responder_host, seen, queue);
        size_t used = 0, cap = sizeof f->missing_hosts / sizeof *f->missing_hosts;
        /* (the record holds the first `cap` of n_missing) */
        for (uint32_t k = 0; k < f->n_missing && k < cap && used < len; k++)
            if (f->missing_hosts[k] < n && !seen[f->missing_hosts[k]])
                used += (size_t)snprintf(buf + used, len - used, "%sh%u", used ? "," : "",
                                         f->missing_hosts[k]);
    }
    arb_free(seen);
    arb_free(queue);
}

/* Is host b reachable from host a over links that have not failed? 1, 0,
 * or -1 (no memory to tell). */
static int connected(const arb_topo *t, uint32_t a, uint32_t b)
{
    uint32_t n = arb_topo_n_nodes(t);
    if (a >= n || b >= n) return -1;
    uint8_t *seen = arb_calloc(n, 1);
    uint32_t *queue = arb_malloc((size_t)n * sizeof *queue);
    int rc = -1;
    if (seen && queue) {
        reach(t, a, seen, queue);
        rc = seen[b];
    }
    arb_free(seen);
    arb_free(queue);
    return rc;
}

/* The fabric failures in force (fabric.fail, arbor.fail, the fail_at
 * entries applied so far), hosts they cut off, and packets no route could
 * carry, appended to the line in buf: what a failed engine (f), or a flow
 * from host pair[0] to pair[1] that gave up, most likely ran into. */
static void failure_context(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                            const arb_sim_arbor_failure *f, const uint32_t *pair,
                            const arb_sim_stats *st, char *buf, size_t len)
{
    size_t used = strlen(buf);
    const char *sep = "; the fabric: ";
#define CTX(...)                                                                                   \
    do {                                                                                           \
        if (used < len) used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);             \
    } while (0)
    if (*scn_str(sc, K_FAB_FAIL)) {
        CTX("%sfabric.fail %s", sep, scn_str(sc, K_FAB_FAIL));
        sep = ", ";
    }
    if (*scn_str(sc, K_AR_FAIL)) {
        CTX("%sarbor.fail %s", sep, scn_str(sc, K_AR_FAIL));
        sep = ", ";
    }
    static const char *const verb[] = {"failed", "restored", "rebooted", "back after a reboot"};
    for (unsigned i = 0; fa && i < fa->next; i++) {
        CTX("%s%s %s at %s", sep, fa->e[i].items, verb[fa->e[i].kind], fa->e[i].text);
        sep = ", ";
    }
    char cut[160] = "";
    if (f && f->failed) cut_off(t, f, cut, sizeof cut);
    const char *scheme = scn_str(sc, K_RT_SCHEME);
    int around = !strcmp(scheme, "updown") || !strcmp(scheme, "dmodc");
    if (*cut)
        CTX("; no path is left between h%u and %s", f->responder_host, cut);
    else if (pair && connected(t, pair[0], pair[1]) == 0)
        CTX("; no path is left between h%u and h%u", pair[0], pair[1]);
    else if (st->unroutable && around)
        CTX("; %llu packets found no route", (unsigned long long)st->unroutable);
    else if (st->unroutable)
        CTX("; %llu packets found no route (routing.scheme %s does not route around what failed; "
            "updown and dmodc do)",
            (unsigned long long)st->unroutable, scheme);
    else if (pair && *sep == ';') /* nothing failed: the load, or the links' loss */
        CTX("; nothing in the fabric failed: congestion or the links' loss kept it from "
            "progressing (a higher transport.retry_limit or transport.rto lets it wait longer)");
#undef CTX
}

static const char *plural(uint32_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* A flow's sender gave up (transport.retry_limit): the run cannot finish.
 * One line naming the first to give up (by time, then index), how many
 * did, and what failed in the fabric. An Arbor engine's failure, found
 * first, keeps its line. */
void scn_describe_gave_up(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                          arb_scenario_result *r)
{
    if (r->st.flows_gave_up == 0 || r->failed) return;
    const struct flowrec *f = NULL;
    uint32_t id = 0;
    for (uint32_t i = 0; i < r->n_flows; i++)
        if (r->flows[i].gave_up != ARB_TIME_NEVER && (!f || r->flows[i].gave_up < f->gave_up)) {
            f = &r->flows[i];
            id = i;
        }
    if (!f) return;
    r->failed = 1;
    r->warned = 0; /* (an Arbor warning's line gives way) */
    uint64_t limit = scn_u64(sc, K_TR_RETRY);
    int n = snprintf(r->failure, sizeof r->failure,
                     "flow %u (h%u -> h%u, QP %u) gave up at %.3f us: %llu retransmission "
                     "timeouts in a row without progress, past transport.retry_limit = %llu",
                     id, f->src, f->dst, f->qp, (double)f->gave_up / ARB_PS_PER_US,
                     (unsigned long long)limit + 1, (unsigned long long)limit);
    if (r->st.flows_gave_up > 1 && n > 0 && (size_t)n < sizeof r->failure)
        snprintf(r->failure + n, sizeof r->failure - (size_t)n, " (%u flows gave up)",
                 r->st.flows_gave_up);
    uint32_t pair[2] = {f->src, f->dst};
    failure_context(sc, fa, t, NULL, pair, &r->st, r->failure, sizeof r->failure);
}

/* An Arbor engine gave up: one line naming the job, channel, what was lost,
 * the hosts that never answered (arb_sim_arbor_failure) and what failed in
 * the fabric. If every rank was done by then (the collective's outputs are
 * final and only a channel's closing failed), it is a warning, not a
 * failure. */
void scn_describe_failure(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                          const arb_sim *s, arb_scenario_result *r)
{
    arb_sim_arbor_failure f;
    uint32_t done = 0, ranks = 0;
    arb_sim_arbor_progress(s, &done, &ranks);
    if (ranks && done == ranks)
        r->warned = 1;
    else
        r->failed = 1;
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    if (arb_sim_arbor_failure_get(s, &f) < 0 || !f.failed) {
        snprintf(r->failure, sizeof r->failure, "an Arbor engine gave up");
        failure_context(sc, fa, t, NULL, NULL, &st, r->failure, sizeof r->failure);
        return;
    }
    char hosts[200] = "";
    size_t used = 0;
    for (uint32_t k = 0; k < f.n_missing && k < 16 && used < sizeof hosts; k++)
        used += (size_t)snprintf(hosts + used, sizeof hosts - used, "%sh%u", k ? "," : "",
                                 f.missing_hosts[k]);
    if (f.n_missing > 16 && used < sizeof hosts)
        snprintf(hosts + used, sizeof hosts - used, ",... (%u in all)", f.n_missing);
    char job[32] = "";
    if (arb_sim_arbor_jobs(s) > 1) snprintf(job, sizeof job, "job %u, ", f.job);
    const char *after = r->warned ? " (after every rank was done)" : "";
    if (f.requester)
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): the requester on %s got no answer to its "
                 "REGISTER or END%s",
                 job, f.channel, f.responder_host, hosts, after);
    else if (f.end_wait)
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): every offset committed, but %u %s sent no "
                 "END after %u tail replays (the last waited %.3f us)%s: %s",
                 job, f.channel, f.responder_host, f.n_missing,
                 plural(f.n_missing, "member", "members"), f.tries,
                 (double)f.waited / ARB_PS_PER_US, after, hosts);
    else
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): offset %u lost on tree %u after %u credits; %u "
                 "%s had not answered its %u repair credits (the last waited %.3f us)%s: %s",
                 job, f.channel, f.responder_host, f.offset, f.subchannel, f.attempts, f.n_missing,
                 plural(f.n_missing, "member", "members"), f.tries,
                 (double)f.waited / ARB_PS_PER_US, after, hosts);
    failure_context(sc, fa, t, &f, NULL, &st, r->failure, sizeof r->failure);
}
