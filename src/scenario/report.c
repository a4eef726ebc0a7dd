/* A scenario run's report: its result as JSON (arb_scenario_json) and as
 * CSV tables (arb_scenario_csv), with fixed number formats. */
#include "scn_result.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json_out.h"

static const char *status_name(const arb_scenario_result *r)
{
    static const char *const names[] = {"done", "incomplete", "failed"};
    return names[arb_scenario_result_status(r, NULL)];
}

/* ---- JSON -------------------------------------------------------------- */

/* Jain's fairness index of x[0..n): (sum x)^2 / (n sum x^2), in [1/n, 1];
 * 1 when every x is the same, 1/n when one has everything. */
static double jain_index(const double *x, uint32_t n)
{
    double sum = 0, sq = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    return n && sq > 0 ? sum * sum / ((double)n * sq) : NAN;
}

/* Several jobs: how they fared together ("fairness"): Jain's index of
 * their goodputs, their completion times (a job's JCT is its cct: from its
 * start to its last rank done), and every job's bytes over the span from
 * the first start to the last finish. null while a job is not done. */
static void fairness_json(cJSON *o, const arb_scenario_result *r)
{
    cJSON *f = cJSON_AddObjectToObject(o, "fairness");
    double *g = arb_malloc(r->n_ar_jobs * sizeof *g);
    if (!f || !g) {
        arb_free(g);
        return;
    }
    int all = 1;
    double gmin = INFINITY, gmax = 0, jct_sum = 0;
    arb_time jct_max = 0, first = ARB_TIME_NEVER, last = 0;
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < r->n_ar_jobs; k++) {
        const arb_sim_arbor_result *a = &r->ar_jobs[k];
        if (a->finish == ARB_TIME_NEVER) {
            all = 0;
            break;
        }
        g[k] = a->goodput_gbps;
        if (g[k] < gmin) gmin = g[k];
        if (g[k] > gmax) gmax = g[k];
        jct_sum += (double)a->cct;
        if (a->cct > jct_max) jct_max = a->cct;
        if (a->start < first) first = a->start;
        if (a->finish > last) last = a->finish;
        bytes += a->bytes;
    }
    double n = r->n_ar_jobs;
    arb_json_fixed(f, "jain", all ? jain_index(g, r->n_ar_jobs) : NAN, 6);
    arb_json_fixed(f, "goodput_min_gbps", all ? gmin : NAN, 3);
    arb_json_fixed(f, "goodput_max_gbps", all ? gmax : NAN, 3);
    arb_json_fixed(f, "jct_mean_us", all ? jct_sum / n / (double)ARB_PS_PER_US : NAN, 3);
    arb_json_us(f, "jct_max_us", all ? jct_max : ARB_TIME_NEVER);
    arb_json_us(f, "makespan_us", all ? last - first : ARB_TIME_NEVER);
    arb_json_fixed(f, "makespan_gbps",
                   all && last > first ? (double)bytes * 8e3 / (double)(last - first) : NAN, 3);
    arb_free(g);
}

/* arbor.jobs > 1: "jobs", one object per job beside the whole's figures. */
static void arbor_jobs_json(cJSON *o, const arb_scenario_result *r)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "jobs");
    for (uint32_t k = 0; arr && k < r->n_ar_jobs; k++) {
        const arb_sim_arbor_result *a = &r->ar_jobs[k];
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        arb_json_u64(e, "job", k);
        arb_json_u64(e, "ranks", a->ranks);
        arb_json_u64(e, "ranks_done", a->ranks_done);
        arb_json_u64(e, "bytes", a->bytes);
        cJSON_AddBoolToObject(e, "done", a->done);
        arb_json_fixed(e, "goodput_gbps", a->finish == ARB_TIME_NEVER ? NAN : a->goodput_gbps, 3);
        arb_json_us(e, "cct_us", a->finish == ARB_TIME_NEVER ? ARB_TIME_NEVER : a->cct);
        arb_json_us(e, "start_us", a->start);
        arb_json_us(e, "finish_us", a->finish);
        arb_json_u64(e, "commits", a->commits);
        arb_json_u64(e, "repairs", a->repair_commits);
        arb_json_u64(e, "agg_miss", a->agg_miss);
        arb_json_u64(e, "timeouts", a->timeouts);
        arb_json_us(e, "rtt_mean_us", a->rtt_mean);
        arb_json_u64(e, "peak_slots", a->peak_job_slots);
        arb_json_u64(e, "invariant_errors", a->invariant_errors);
        cJSON_AddItemToArray(arr, e);
    }
    fairness_json(o, r);
}

static int cmp_time(const void *a, const void *b)
{
    arb_time x = *(const arb_time *)a, y = *(const arb_time *)b;
    return x < y ? -1 : x > y;
}

/* arbor.calls > 1: "calls", the timed calls' CCTs as arbor lab reports
 * its calls' (mean, median, least, most, each in order). */
static void arbor_calls_json(cJSON *o, const arb_scenario_result *r)
{
    cJSON *c = cJSON_AddObjectToObject(o, "calls");
    if (!c) return;
    uint32_t n = r->calls - r->warmup;
    arb_json_u64(c, "calls", n);
    arb_json_u64(c, "warmup", r->warmup);
    arb_json_us(c, "host_call_us", r->host_call);
    arb_time *v = arb_malloc(n * sizeof *v);
    cJSON *ct = cJSON_AddObjectToObject(c, "cct_us");
    cJSON *each = ct ? cJSON_AddArrayToObject(ct, "each") : NULL;
    int all = 1;
    for (uint32_t k = 0; k < n; k++) {
        const arb_sim_arbor_result *a = &r->ar_jobs[r->warmup + k];
        if (a->finish == ARB_TIME_NEVER) all = 0;
        if (v) v[k] = a->cct;
        if (each)
            cJSON_AddItemToArray(each, a->finish == ARB_TIME_NEVER
                                           ? cJSON_CreateNull()
                                           : cJSON_CreateNumber((double)a->cct / ARB_PS_PER_US));
    }
    if (!v || !ct || !all) {
        arb_free(v);
        return;
    }
    qsort(v, n, sizeof *v, cmp_time);
    arb_json_us(ct, "mean", r->ar.cct);
    arb_json_us(ct, "p50", v[(n - 1) / 2]);
    arb_json_us(ct, "min", v[0]);
    arb_json_us(ct, "max", v[n - 1]);
    arb_free(v);
}

static void arbor_json(cJSON *j, const arb_scenario_result *r)
{
    const arb_sim_arbor_result *a = &r->ar;
    arb_json_fixed(j, "goodput_gbps", a->finish == ARB_TIME_NEVER ? NAN : a->goodput_gbps, 3);
    arb_json_us(j, "cct_us", a->finish == ARB_TIME_NEVER ? ARB_TIME_NEVER : a->cct);
    arb_json_u64(j, "commits", a->commits);
    arb_json_u64(j, "repairs", a->repair_commits);
    arb_json_u64(j, "agg_miss", a->agg_miss);
    if (a->correct < 0 || a->ranks_done < a->ranks) /* header-only, or outputs not final */
        cJSON_AddNullToObject(j, "correct");
    else
        cJSON_AddBoolToObject(j, "correct", a->correct == 1);
    cJSON *o = cJSON_AddObjectToObject(j, "arbor");
    cJSON_AddStringToObject(o, "collective", r->echo[K_AR_COLL]);
    cJSON_AddStringToObject(o, "mode", r->echo[K_AR_MODE]);
    arb_json_u64(o, "ranks", a->ranks);
    arb_json_u64(o, "ranks_done", a->ranks_done);
    arb_json_u64(o, "bytes", a->bytes);
    arb_json_u64(o, "header_bytes", r->arb_hdr_len);
    arb_json_us(o, "start_us", a->start);
    arb_json_us(o, "finish_us", a->finish);
    arb_json_u64(o, "credits", a->credits);
    arb_json_u64(o, "requests", a->requests);
    arb_json_u64(o, "results", a->results);
    arb_json_u64(o, "repair_credits", a->repair_credits);
    arb_json_u64(o, "repair_commits", a->repair_commits);
    arb_json_u64(o, "timeouts", a->timeouts);
    arb_json_u64(o, "late_masters", a->late_masters);
    arb_json_u64(o, "tail_replays", a->tail_replays);
    arb_json_u64(o, "registers", a->registers);
    arb_json_u64(o, "ends", a->ends);
    arb_json_u64(o, "agg_inputs", a->agg_inputs);
    arb_json_u64(o, "agg_aggregates", a->agg_aggregates);
    arb_json_u64(o, "agg_passthrough", a->agg_passthrough);
    arb_json_u64(o, "agg_drops", a->agg_drops);
    arb_json_u64(o, "peak_live_slots", a->peak_live_slots);
    arb_json_u64(o, "agg_allocations", a->agg_allocations);
    arb_json_u64(o, "agg_reclaimed", a->agg_reclaimed);
    arb_json_us(o, "slot_time_us", a->slot_time);
    arb_json_us(o, "partial_slot_time_us", a->partial_slot_time);
    arb_json_us(o, "rtt_mean_us", a->rtt_mean);
    arb_json_us(o, "rtt_max_us", a->rtt_max);
    cJSON *tb = cJSON_AddArrayToObject(o, "tier_bytes");
    for (int t = 0; tb && t < 4; t++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        arb_json_u64(e, "up", a->tier_up_bytes[t]);
        arb_json_u64(e, "down", a->tier_down_bytes[t]);
        cJSON_AddItemToArray(tb, e);
    }
    arb_json_u64(o, "copies", a->copies);
    arb_json_u64(o, "packets", a->pkts);
    arb_json_u64(o, "wire_bytes", a->wire_bytes);
    arb_json_u64(o, "bytes_per_packet", a->bytes_per_packet);
    arb_json_u64(o, "checked", a->checked);
    arb_json_u64(o, "wrong", a->wrong);
    arb_json_u64(o, "wire_checks", a->wire_checks);
    arb_json_u64(o, "wire_errors", a->wire_errors);
    cJSON *inv = cJSON_AddObjectToObject(o, "invariants");
    arb_json_u64(inv, "errors", a->invariant_errors);
    arb_json_u64(inv, "dup_commit", a->inv_dup_commit);
    arb_json_u64(inv, "count", a->inv_count);
    arb_json_u64(inv, "agg_check", a->inv_agg_check);
    arb_json_u64(inv, "missing_results", a->inv_missing);
    arb_json_u64(inv, "early_done", a->inv_early);
    arb_json_u64(inv, "conservation", a->inv_conservation);
    arb_json_u64(o, "dead_subchannels", a->dead_subchannels);
    cJSON *rec = cJSON_AddObjectToObject(o, "recovery");
    arb_json_u64(rec, "retries", a->retries);
    arb_json_u64(rec, "losses_order", a->losses_order);
    arb_json_u64(rec, "losses_timer", a->losses_timer);
    arb_json_u64(rec, "spurious", a->spurious);
    arb_json_u64(rec, "bypass", a->bypass);
    arb_json_u64(rec, "tree_deaths", a->deaths);
    arb_json_u64(rec, "probes", a->probes);
    arb_json_u64(rec, "revivals", a->revivals);
    arb_json_u64(rec, "recredits", a->recredits);
    arb_json_u64(rec, "adoptions", a->agg_adoptions);
    arb_json_u64(rec, "replays", a->agg_replays);
    arb_json_u64(rec, "held", a->agg_held);
    cJSON *cc = cJSON_AddObjectToObject(o, "cc");
    cJSON_AddStringToObject(cc, "kind", r->echo[K_AR_CC]);
    arb_json_u64(cc, "increases", a->cc_increases);
    arb_json_u64(cc, "decreases", a->cc_decreases);
    arb_json_u64(cc, "ce_samples", a->cc_ce_samples);
    arb_json_u64(cc, "stalls", a->cc_stalls);
    arb_json_fixed(cc, "window_mean", a->cc_window_mean, 3);
    if (r->calls > 1)
        arbor_calls_json(o, r);
    else if (r->n_ar_jobs)
        arbor_jobs_json(o, r);
}

/* arbor.background: the transport flows beside the collective, as one
 * party: their bytes from the first start to the last finish. */
static void background_json(cJSON *j, const arb_scenario_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(j, "background");
    if (!o) return;
    uint64_t bytes = 0;
    arb_time first = r->n_flows ? ARB_TIME_NEVER : 0, last = 0;
    for (uint32_t i = 0; i < r->n_flows; i++) {
        bytes += r->flows[i].bytes;
        if (r->flows[i].start < first) first = r->flows[i].start;
        if (r->flows[i].finish > last) last = r->flows[i].finish;
    }
    arb_json_u64(o, "flows", r->n_flows);
    arb_json_u64(o, "done", r->fct_n);
    arb_json_u64(o, "bytes", bytes);
    arb_json_us(o, "start_us", first);
    arb_json_us(o, "finish_us", last);
    arb_json_fixed(o, "goodput_gbps",
                   last == ARB_TIME_NEVER || last <= first
                       ? NAN
                       : (double)bytes * 8e3 / (double)(last - first),
                   3);
}

/* An iteration over Arbor: its collectives' jobs, as one whole. */
static void iter_arbor_json(cJSON *j, const arb_scenario_result *r)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(j, "iteration");
    if (!it) return;
    cJSON_AddStringToObject(it, "backend", "arbor");
    cJSON *o = cJSON_AddObjectToObject(it, "arbor");
    if (!o) return;
    const arb_sim_arbor_result *a = &r->ar;
    arb_json_u64(o, "jobs", r->iter_jobs);
    arb_json_u64(o, "ranks_done", a->ranks_done);
    arb_json_u64(o, "ranks", a->ranks);
    arb_json_u64(o, "commits", a->commits);
    arb_json_u64(o, "repairs", a->repair_commits);
    arb_json_u64(o, "agg_miss", a->agg_miss);
    arb_json_u64(o, "timeouts", a->timeouts);
    arb_json_u64(o, "peak_live_slots", a->peak_live_slots);
    arb_json_u64(o, "packets", a->pkts);
    arb_json_u64(o, "wire_bytes", a->wire_bytes);
    if (a->correct < 0 || !a->done || !r->iter_jobs)
        cJSON_AddNullToObject(o, "correct");
    else
        cJSON_AddBoolToObject(o, "correct", a->correct == 1);
    arb_json_u64(o, "invariant_errors", a->invariant_errors);
}

static const char *const sec_names[] = {"fabric",   "routing", "transport", "switch",
                                        "workload", "host",    "arbor",     "run"};

/* Keys the report's `scenario` echoes only when they differ from their
 * default, so that the reports of scenarios that do not use them stay as
 * they were before the keys existed. */
static int echo_when_set(size_t k)
{
    return k == K_AR_JOBSTART || k == K_AR_JOBSIZE || k == K_AR_JOBRANKS || k == K_AR_PARTITION ||
           k == K_AR_INNER || k == K_AR_PIECES || k == K_WL_BACKEND || k == K_FAB_RESTOREAT ||
           k == K_FAB_REBOOTAT || k == K_RUN_FAULTWIN || k == K_RUN_ORDER || k == K_AR_CALLS ||
           k == K_AR_WARMUP || k == K_AR_HCALL || k == K_AR_HPKT || k == K_AR_HWAKE ||
           k == K_AR_SPKT || k == K_AR_SWAKE || k == K_AR_SPIN || k == K_AR_HRATE ||
           k == K_AR_SRATE || k == K_AR_CORES || k == K_AR_RCMIN || k == K_AR_RCMAX ||
           k == K_AR_RCORDER;
}

/* "scenario": the keys it ran with, by section. */
static void scenario_json(cJSON *j, const arb_scenario_result *r)
{
    cJSON *scn = cJSON_AddObjectToObject(j, "scenario");
    cJSON_AddStringToObject(scn, "file", r->file ? r->file : "(built-in)");
    for (size_t s = 0; s < sizeof sec_names / sizeof sec_names[0]; s++) {
        /* [host] only for the kinds that read it: the others' reports stay as they were */
        if (strcmp(sec_names[s], "host") == 0 && r->wr.kind != ARB_WL_HCOLL &&
            r->wr.kind != ARB_WL_ITERATION)
            continue;
        cJSON *o = cJSON_AddObjectToObject(scn, sec_names[s]);
        for (size_t k = 0; k < K_COUNT; k++) {
            arb_scenario_key_info ki;
            arb_scenario_key(k, &ki);
            /* arbor.jobs only when there are several, so that a one-job
             * run's report is what it was before the key existed */
            if (k == K_AR_JOBS && strcmp(r->echo[k], "1") == 0) continue;
            if ((k == K_AR_BACKGROUND || k == K_RUN_WATCH) && !*r->echo[k]) continue;
            /* likewise the keys of several jobs and of Arbor in iterations */
            if (echo_when_set(k) && strcmp(r->echo[k], ki.def) == 0) continue;
            /* IRN's timers only where they act */
            if ((k == K_TR_RTOLOW || k == K_TR_RTOHIGH || k == K_TR_RTON) &&
                strcmp(r->echo[K_TR_KIND], "irn") != 0)
                continue;
            /* likewise run.pcap_snaplen when it keeps whole frames */
            if (k == K_RUN_PCAPSNAP && strcmp(r->echo[k], "0") == 0) continue;
            if (k == K_RUN_SAMPLEPORTS && !*r->echo[k]) continue;
            if (strcmp(ki.section, sec_names[s]) == 0)
                cJSON_AddStringToObject(o, ki.key, r->echo[k]);
        }
    }
}

/* The packets and bytes the run moved, lost and marked. */
static void packets_json(cJSON *j, const arb_scenario_result *r)
{
    const arb_sim_stats *st = &r->st;
    cJSON *pk = cJSON_AddObjectToObject(j, "packets");
    arb_json_u64(pk, "sent", st->pkts_sent);
    arb_json_u64(pk, "delivered", st->pkts_delivered);
    arb_json_u64(pk, "data_sent", st->data_pkts_sent);
    arb_json_u64(pk, "in_flight", st->in_flight);
    arb_json_u64(pk, "pool_size", st->pool_size);
    arb_json_u64(pk, "pool_peak", st->pool_peak);
    cJSON *by = cJSON_AddObjectToObject(j, "bytes");
    arb_json_u64(by, "wire_sent", st->bytes_sent);
    arb_json_u64(by, "payload_sent", st->payload_sent);
    arb_json_u64(by, "payload_delivered", st->payload_delivered);
    arb_json_u64(j, "drops", st->drops);
    arb_json_u64(j, "drop_bytes", st->drop_bytes);
    arb_json_u64(j, "duplicated", st->duplicated);
    arb_json_u64(j, "reordered", st->reordered);
    arb_json_u64(j, "unroutable", st->unroutable);
    arb_json_u64(j, "ecn_marks", st->ecn_marks);
    cJSON *pfc = cJSON_AddObjectToObject(j, "pfc");
    arb_json_u64(pfc, "pauses", st->pfc_pauses);
    arb_json_us(pfc, "paused_us", st->pfc_paused_ps);
    arb_json_u64(j, "ooo_pkts", st->ooo_pkts);
    arb_json_u64(j, "retx_bytes", st->retx_bytes);
    arb_json_u64(j, "timeouts", st->timeouts);
    arb_json_u64(j, "tlp_probes", st->tlp_probes);
    arb_json_u64(j, "reorder_peak_bytes", r->reorder_peak);
    if (r->has_order) {
        cJSON *qo = cJSON_AddObjectToObject(j, "qp_order");
        arb_json_u64(qo, "ooo_pkts", r->order_ooo);
        arb_json_u64(qo, "pkts", r->order_pkts);
    }
}

/* "queues" and "utilisation": per class of ports. */
static void queues_json(cJSON *j, const arb_scenario_result *r)
{
    cJSON *q = cJSON_AddObjectToObject(j, "queues");
    cJSON *u = cJSON_AddObjectToObject(j, "utilisation");
    for (unsigned c = 0; c < r->n_cls; c++) {
        const struct pclass *pc = &r->cls[c];
        cJSON *qo = cJSON_AddObjectToObject(q, pc->name);
        cJSON_AddStringToObject(qo, "ports_of", pc->label);
        arb_json_u64(qo, "ports", pc->ports);
        arb_json_u64(qo, "max_bytes", pc->max_q);
        arb_json_fixed(qo, "mean_bytes", pc->n_q ? pc->sum_q / (double)pc->n_q : 0, 1);
        uint64_t need = (pc->n_q * 99 + 99) / 100, seen = 0, p99 = 0;
        for (uint32_t b = 0; b < pc->n_hist && pc->n_q; b++) {
            seen += pc->hist[b];
            if (seen >= need) {
                p99 = (uint64_t)b * r->bucket;
                break;
            }
        }
        if (p99 > pc->max_q) p99 = pc->max_q;
        arb_json_u64(qo, "p99_bytes", p99);
        arb_json_u64(qo, "samples", pc->n_q);
        cJSON *uo = cJSON_AddObjectToObject(u, pc->name);
        cJSON_AddStringToObject(uo, "ports_of", pc->label);
        arb_json_fixed(uo, "mean", pc->util_mean, 6);
        arb_json_fixed(uo, "max", pc->util_max, 6);
    }
}

char *arb_scenario_json(const arb_scenario_result *r, const arb_scenario_host *host)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddStringToObject(j, "schema", ARB_SCENARIO_JSON_SCHEMA);
    cJSON_AddStringToObject(j, "version", arb_version());
    scenario_json(j, r);
    cJSON *tp = cJSON_AddObjectToObject(j, "topology");
    cJSON_AddStringToObject(tp, "spec", r->topo_spec);
    arb_json_u64(tp, "hosts", r->hosts);
    arb_json_u64(tp, "switches", r->switches);
    arb_json_u64(tp, "links", r->links);
    cJSON_AddStringToObject(j, "routing", r->route_spec);
    arb_json_us(j, "sim_time_us", r->active);
    arb_json_u64(j, "events", r->st.events);
    arb_json_u64(j, "packet_hops", r->st.packet_hops);
    cJSON_AddBoolToObject(j, "completed", r->wr.done);
    cJSON_AddBoolToObject(j, "stopped", r->stopped);
    cJSON_AddStringToObject(j, "status", status_name(r));
    if (r->failed) cJSON_AddStringToObject(j, "failure", r->failure);
    if (r->warned) cJSON_AddStringToObject(j, "warning", r->failure);

    if (r->is_arbor) arbor_json(j, r);
    if (r->has_bg) background_json(j, r);
    cJSON *wl = cJSON_AddObjectToObject(j, "workload");
    cJSON_AddStringToObject(wl, "kind", r->is_arbor ? "arbor" : arb_workload_kind_name(r->wr.kind));
    arb_json_u64(wl, "flows_planned", r->wr.flows_planned);
    arb_json_u64(wl, "bytes_planned", r->wr.bytes_planned);
    arb_json_u64(wl, "phases", r->wr.phases);
    arb_json_us(wl, "finish_us", r->wr.finish);

    cJSON *fl = cJSON_AddObjectToObject(j, "flows");
    arb_json_u64(fl, "count", r->n_flows);
    arb_json_u64(fl, "done", r->fct_n);
    arb_json_u64(fl, "gave_up", r->st.flows_gave_up);
    cJSON *fct = cJSON_AddObjectToObject(fl, "fct_us");
    arb_json_fixed(fct, "mean", r->fct_mean / (double)ARB_PS_PER_US, 6);
    arb_json_us(fct, "p50", r->fct_p50);
    arb_json_us(fct, "p99", r->fct_p99);
    arb_json_us(fct, "max", r->fct_max);

    if (r->wr.kind == ARB_WL_ALLREDUCE) {
        cJSON *c = cJSON_AddObjectToObject(j, "collective");
        cJSON_AddStringToObject(c, "kind", "ring_allreduce");
        arb_json_u64(c, "ranks", r->wr.ranks);
        arb_json_u64(c, "bytes", r->wr.buffer_bytes);
        arb_json_u64(c, "steps", r->wr.steps);
        arb_json_u64(c, "slices", r->wr.slices);
        arb_json_u64(c, "qps", r->wr.qps);
        arb_json_us(c, "cct_us", r->wr.cct);
        arb_json_fixed(c, "algbw_gbps", r->wr.algbw_gbps, 6);
        arb_json_fixed(c, "busbw_gbps", r->wr.busbw_gbps, 6);
    }
    if (r->wr.kind == ARB_WL_HCOLL || r->wr.kind == ARB_WL_ITERATION)
        scn_host_json(j, &r->wr, r->iter, r->n_iter);
    if (r->iter_arbor) iter_arbor_json(j, r);

    packets_json(j, r);
    queues_json(j, r);
    arb_json_u64(j, "samples", r->n_samp);
    if (r->watch) scn_watch_json(r->watch, j);
    if (r->rec) scn_recovery_json(r->rec, j);
    if (host) {
        cJSON *h = cJSON_AddObjectToObject(j, "host");
        arb_json_fixed(h, "wall_s", host->wall_s, 3);
        arb_json_fixed(h, "peak_rss_mb", host->peak_rss_mb, 1);
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* ---- CSV --------------------------------------------------------------- */

struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) ARB_PRINTF(2, 3);

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 4096;
        while (ncap < b->n + (size_t)k + 1)
            ncap *= 2;
        char *np = arb_realloc(b->p, ncap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

static void sb_us(struct sbuf *b, arb_time ps)
{
    if (ps != ARB_TIME_NEVER)
        sb_printf(b, "%" PRIu64 ".%06" PRIu64, ps / ARB_PS_PER_US, ps % ARB_PS_PER_US);
}

/* One row of the util or queue series. */
static void csv_row(struct sbuf *b, arb_scenario_csv_kind kind, unsigned nc, arb_time t,
                    const double *util, const double *qmean, const uint32_t *qmax)
{
    sb_us(b, t);
    for (unsigned c = 0; c < nc; c++) {
        if (kind == ARB_SCN_CSV_UTIL)
            sb_printf(b, ",%.6f", util[c]);
        else
            sb_printf(b, ",%.1f,%u", qmean[c], qmax[c]);
    }
    sb_printf(b, "\n");
}

char *arb_scenario_csv(const arb_scenario_result *r, arb_scenario_csv_kind kind)
{
    struct sbuf b = {NULL, 0, 0, 0};
    if (kind == ARB_SCN_CSV_FLOWS) {
        sb_printf(&b, "id,src,dst,bytes,start_us,finish_us,fct_us,src_ip,dst_ip,proto,sport,"
                      "dport,qp,retx_bytes,ideal_us,slowdown,gave_up_us\n");
        for (uint32_t i = 0; i < r->n_flows; i++) {
            const struct flowrec *f = &r->flows[i];
            sb_printf(&b, "%u,%u,%u,%" PRIu64 ",", i, f->src, f->dst, f->bytes);
            sb_us(&b, f->start);
            sb_printf(&b, ",");
            sb_us(&b, f->finish);
            sb_printf(&b, ",");
            arb_time fct = f->finish == ARB_TIME_NEVER ? ARB_TIME_NEVER : f->finish - f->start;
            sb_us(&b, fct);
            uint32_t a = ARB_ROUTE_HOST_IP_BASE | f->src, d = ARB_ROUTE_HOST_IP_BASE | f->dst;
            sb_printf(&b, ",%u.%u.%u.%u,%u.%u.%u.%u,udp,%u,%u,%u,%" PRIu64 ",", a >> 24,
                      (a >> 16) & 255, (a >> 8) & 255, a & 255, d >> 24, (d >> 16) & 255,
                      (d >> 8) & 255, d & 255, f->sport, ARB_ROCE_UDP_PORT, f->qp, f->retx_bytes);
            sb_us(&b, f->ideal ? f->ideal : ARB_TIME_NEVER);
            if (f->ideal && fct != ARB_TIME_NEVER)
                sb_printf(&b, ",%.6f,", (double)fct / (double)f->ideal);
            else
                sb_printf(&b, ",,");
            sb_us(&b, f->gave_up);
            sb_printf(&b, "\n");
        }
    } else if (kind == ARB_SCN_CSV_UTIL || kind == ARB_SCN_CSV_QUEUE) {
        sb_printf(&b, "time_us");
        for (unsigned c = 0; c < r->n_cls; c++) {
            if (kind == ARB_SCN_CSV_UTIL)
                sb_printf(&b, ",%s", r->cls[c].name);
            else
                sb_printf(&b, ",%s_mean,%s_max", r->cls[c].name, r->cls[c].name);
        }
        sb_printf(&b, "\n");
        for (uint32_t i = 0; i < r->n_rows; i++)
            csv_row(&b, kind, r->n_cls, r->samp_t[i], r->samp_util + (size_t)i * r->n_cls,
                    r->samp_qmean + (size_t)i * r->n_cls, r->samp_qmax + (size_t)i * r->n_cls);
        if (r->pend_n) { /* the last samples, fewer than a row */
            double u[MAX_CLASSES], q[MAX_CLASSES];
            uint32_t live;
            scn_pending_row(r, u, q, &live, NULL);
            csv_row(&b, kind, r->n_cls, r->pend_t, u, q, r->pend_qmax);
        }
    } else if (kind == ARB_SCN_CSV_RANKS) {
        /* rank i of job j: the job's rank order (workload.hosts, arbor.jobs) */
        sb_printf(&b, "job,rank,host,done_us\n");
        for (uint32_t i = 0, first = 0; i < r->n_ar_ranks; i++) {
            if (i && r->ar_rank_job[i] != r->ar_rank_job[i - 1]) first = i;
            sb_printf(&b, "%u,%u,%u,", r->ar_rank_job[i], i - first, r->ar_rank_host[i]);
            sb_us(&b, r->ar_rank_done[i]);
            sb_printf(&b, "\n");
        }
    } else if (kind == ARB_SCN_CSV_PORTS) {
        sb_printf(&b, "time_us");
        for (uint32_t i = 0; i < r->n_sp; i++)
            sb_printf(&b, ",%s_util,%s_queue", r->sp_name[i], r->sp_name[i]);
        sb_printf(&b, "\n");
        for (uint32_t i = 0; r->n_sp && i < r->n_rows; i++) {
            sb_us(&b, r->samp_t[i]);
            for (uint32_t k = 0; k < r->n_sp; k++)
                sb_printf(&b, ",%.6f,%u", r->samp_port_util[(size_t)i * r->n_sp + k],
                          r->samp_port_q[(size_t)i * r->n_sp + k]);
            sb_printf(&b, "\n");
        }
        if (r->n_sp && r->pend_n) { /* the last samples, fewer than a row */
            double u[MAX_CLASSES], q[MAX_CLASSES], *pu = arb_malloc(r->n_sp * sizeof *pu);
            uint32_t live;
            if (!pu) {
                arb_free(b.p);
                return NULL;
            }
            scn_pending_row(r, u, q, &live, pu);
            sb_us(&b, r->pend_t);
            for (uint32_t k = 0; k < r->n_sp; k++)
                sb_printf(&b, ",%.6f,%u", pu[k], r->pend_port_q[k]);
            sb_printf(&b, "\n");
            arb_free(pu);
        }
    } else if (kind == ARB_SCN_CSV_SLOTS) {
        sb_printf(&b, "time_us,live_slots,max_switch_slots\n");
        for (uint32_t i = 0; r->n_ar_ranks && i < r->n_rows; i++) {
            sb_us(&b, r->samp_t[i]);
            sb_printf(&b, ",%u,%u\n", r->samp_slots[2 * (size_t)i],
                      r->samp_slots[2 * (size_t)i + 1]);
        }
        if (r->n_ar_ranks && r->pend_n) { /* the last samples, fewer than a row */
            double u[MAX_CLASSES], q[MAX_CLASSES];
            uint32_t live;
            scn_pending_row(r, u, q, &live, NULL);
            sb_us(&b, r->pend_t);
            sb_printf(&b, ",%u,%u\n", live, r->pend_most);
        }
    } else {
        return NULL;
    }
    if (b.oom || !b.p) {
        arb_free(b.p);
        return NULL;
    }
    return b.p;
}
