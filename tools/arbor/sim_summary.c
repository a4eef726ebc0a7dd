/*
 * arbor sim's text summary of a run: one screen, read back from the run's
 * JSON (arb_scenario_json) so that both say the same.
 */
#include "cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : "";
}

/* The noun for n of it: one, or many for every other count. */
static const char *noun(double n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* A figure of a fault event, or "n/a" when the JSON has null. */
static const char *fig(const cJSON *o, const char *a, char *buf, size_t len)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (!cJSON_IsNumber(x)) return "n/a";
    snprintf(buf, len, "%.3f", x->valuedouble);
    return buf;
}

/* Event e did not slow the goodput: the window from te on already carried
 * the share of the goodput before it (recover_us 0). */
static int undisturbed(const cJSON *e)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "recovered")) &&
           num(e, "recover_us", NULL) == 0;
}

/* The goodput before, during and after event e, and its recovery, as the
 * JSON has them: "goodput B / D / A Gb/s before / during / after;
 * recovered in R us" (not recovered: "B / D before / since"); an event
 * whose window from te on carried P% of the goodput before (recover_us 0)
 * had no "during" and nothing to recover from: "B / A before / after;
 * never below P% of before". A restore (`restore`) takes nothing away to
 * recover: "B / A before / after", and a slower stretch after it, if any,
 * "below P% of before for R us after it" (or "to the end"). */
static void goodput_text(const cJSON *e, double share, int restore, char *out, size_t len)
{
    char bb[32], db[32], ab[32], rb[32];
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(e, "recovered");
    double p = share * 100;
    const char *b = fig(e, "goodput_before_gbps", bb, sizeof bb);
    const char *du = fig(e, "goodput_during_gbps", db, sizeof db);
    const char *a = fig(e, "goodput_after_gbps", ab, sizeof ab);
    const char *r = fig(e, "recover_us", rb, sizeof rb);
    if (!cJSON_IsBool(rec))
        snprintf(out, len,
                 "goodput %s / %s / %s Gb/s before / during / after; recovery n/a "
                 "(outside the collective)",
                 b, du, a);
    else if (cJSON_IsFalse(rec) && restore)
        snprintf(out, len, "goodput %s / %s Gb/s before / since; below %.0f%% of before to the end",
                 b, du, p);
    else if (cJSON_IsFalse(rec))
        snprintf(out, len, "goodput %s / %s Gb/s before / since; not recovered by the end", b, du);
    else if (undisturbed(e) && restore)
        snprintf(out, len, "goodput %s / %s Gb/s before / after", b, a);
    else if (undisturbed(e))
        snprintf(out, len, "goodput %s / %s Gb/s before / after; never below %.0f%% of before", b,
                 a, p);
    else if (restore)
        snprintf(out, len,
                 "goodput %s / %s / %s Gb/s before / during / after; below %.0f%% of "
                 "before for %s us after it",
                 b, du, a, p, r);
    else
        snprintf(out, len, "goodput %s / %s / %s Gb/s before / during / after; recovered in %s us",
                 b, du, a, r);
}

/* The failure a restore undoes: the last fail event before it of the same
 * items, or NULL. */
static const cJSON *failure_of(const cJSON *events, const cJSON *restore)
{
    const cJSON *e, *found = NULL;
    cJSON_ArrayForEach(e, events)
    {
        if (e == restore) break;
        if (strcmp(str(e, "kind", NULL), "fail") == 0 &&
            strcmp(str(e, "items", NULL), str(restore, "items", NULL)) == 0 &&
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "applied")))
            found = e;
    }
    return found;
}

/* What a restore brought back: when the goodput came back to share x the
 * goodput before the failure it undoes (that failure's recovery, seen from
 * the restore), or "" when no failure of the run is undone or its figures
 * are n/a. */
static void restore_text(const cJSON *events, const cJSON *e, double share, char *out, size_t len)
{
    const cJSON *f = failure_of(events, e);
    const cJSON *rec = f ? cJSON_GetObjectItemCaseSensitive(f, "recovered") : NULL;
    out[0] = '\0';
    if (!cJSON_IsBool(rec) || undisturbed(f)) return; /* (nothing to come back from) */
    double back = num(f, "at_us", NULL) + num(f, "recover_us", NULL) - num(e, "at_us", NULL);
    char level[96];
    snprintf(level, sizeof level, "%.0f%% of the %.3f Gb/s before the failure", share * 100,
             num(f, "goodput_before_gbps", NULL));
    if (cJSON_IsFalse(rec))
        snprintf(out, len, ", not back to %s by the end", level);
    else if (back >= 0)
        snprintf(out, len, ", back to %s %.3f us after it", level, back);
    else
        snprintf(out, len, ", back to %s since %.3f us before it", level, -back);
}

/* A restore: a link or switch carries packets again. Nothing is lost to
 * detect or to recover from; what it is measured by is its failure's
 * recovery, and what was sent again after it. */
static void print_restore(const cJSON *events, const cJSON *e, double share)
{
    char gp[256], back[160], det[96], d[32];
    goodput_text(e, share, 1, gp, sizeof gp);
    restore_text(events, e, share, back, sizeof back);
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "detect_us")))
        snprintf(det, sizeof det, "%.0f B repaired, the first resend %s us after it",
                 num(e, "bytes_repaired", NULL), fig(e, "detect_us", d, sizeof d));
    else if (num(e, "bytes_repaired", NULL) > 0)
        snprintf(det, sizeof det, "%.0f B repaired", num(e, "bytes_repaired", NULL));
    else
        snprintf(det, sizeof det, "nothing resent after it");
    printf("fault         restore %s at %.3f us: %s%s; %s\n", str(e, "items", NULL),
           num(e, "at_us", NULL), gp, back, det);
}

/* Fault events (fabric.fail_at, restore_at, reboot_at): a line each. */
static void print_faults(const cJSON *faults)
{
    const cJSON *e, *events = cJSON_GetObjectItemCaseSensitive(faults, "events");
    double share = num(faults, "recover_share", NULL);
    cJSON_ArrayForEach(e, events)
    {
        char lost[48] = "", d[32], gp[256];
        if (strcmp(str(e, "kind", NULL), "reboot") == 0)
            snprintf(lost, sizeof lost, " (%.0f slots lost, down %.3f us)",
                     num(e, "slots_lost", NULL), num(e, "down_us", NULL));
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "applied"))) {
            printf("fault         %s %s at %.3f us%s: after the run\n", str(e, "kind", NULL),
                   str(e, "items", NULL), num(e, "at_us", NULL), lost);
            continue;
        }
        if (strcmp(str(e, "kind", NULL), "restore") == 0) {
            print_restore(events, e, share);
            continue;
        }
        char det[64] = "nothing resent after it";
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "detect_us")))
            snprintf(det, sizeof det, "detected after %s us", fig(e, "detect_us", d, sizeof d));
        goodput_text(e, share, 0, gp, sizeof gp);
        printf("fault         %s %s at %.3f us%s: %s, %.0f B repaired; %s\n", str(e, "kind", NULL),
               str(e, "items", NULL), num(e, "at_us", NULL), lost, det,
               num(e, "bytes_repaired", NULL), gp);
    }
}

/* run.watch: per port its queue and, where its parties overlapped, their rates. */
static void print_watch(const cJSON *watch)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, watch)
    {
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(w, "overlap");
        printf("watch         %s: p99 %.0f B, max %.0f B, util %.4f", str(w, "port", NULL),
               num(w, "queue", "p99_bytes"), num(w, "queue", "max_bytes"),
               num(w, "utilisation", NULL));
        if (cJSON_IsObject(ov)) {
            printf("; %.3f-%.3f us together: p99 %.0f B, Jain %.4f,", num(ov, "from_us", NULL),
                   num(ov, "to_us", NULL), num(ov, "p99_bytes", NULL), num(ov, "jain", NULL));
            const cJSON *p;
            cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(w, "parties"))
                printf(" %s %.3f", str(p, "party", NULL), num(p, "overlap_gbps", NULL));
            printf(" Gb/s");
        }
        printf("\n");
    }
}

/* The run's setup: scenario, fabric, routing, queues or transport,
 * workload. */
static void print_setup(const cJSON *j, const cJSON *wl)
{
    printf("scenario      %s\n", str(wl, "file", NULL));
    double hosts = num(j, "topology", "hosts"), switches = num(j, "topology", "switches");
    double links = num(j, "topology", "links");
    printf("fabric        %s: %.0f %s, %.0f %s, %.0f %s, %s, %s per link\n",
           str(j, "topology", "spec"), hosts, noun(hosts, "host", "hosts"), switches,
           noun(switches, "switch", "switches"), links, noun(links, "link", "links"),
           str(wl, "fabric", "link_rate"), str(wl, "fabric", "delay"));
    printf("routing       %s\n", str(j, "routing", NULL));
    const char *kind = str(wl, "workload", "kind");
    if (strcmp(kind, "arbor") == 0) /* the Arbor engines are the transport */
        printf("queues        pfc %s, ecn %s\n", str(wl, "switch", "pfc"),
               str(wl, "switch", "ecn"));
    else
        printf("transport     %s, mtu %s, pfc %s, ecn %s, dcqcn %s\n", str(wl, "transport", "kind"),
               str(wl, "transport", "mtu"), str(wl, "switch", "pfc"), str(wl, "switch", "ecn"),
               str(wl, "transport", "dcqcn"));
    if (strcmp(kind, "arbor") == 0)
        printf("workload      arbor, size %s\n", str(wl, "workload", "size"));
    else if (strcmp(kind, "trace") == 0 || strcmp(kind, "htsim") == 0 ||
             strcmp(kind, "iteration") == 0)
        printf("workload      %s, file %s, qps %s\n", kind, str(wl, "workload", "file"),
               str(wl, "workload", "qps"));
    else
        printf("workload      %s, size %s, qps %s\n", kind, str(wl, "workload", "size"),
               str(wl, "workload", "qps"));
}

/* How far it ran, its transport flows and background traffic. */
static void print_progress(const cJSON *j, const cJSON *wl, int failed, int incomplete)
{
    printf("simulated     %.3f us, %.0f events, %.0f packet-hops%s\n", num(j, "sim_time_us", NULL),
           num(j, "events", NULL), num(j, "packet_hops", NULL),
           failed       ? " (failed: an engine or a flow gave up)"
           : incomplete ? " (stopped before the workload finished)"
                        : "");
    char gave_up[48] = ""; /* flows whose sender gave up (transport.retry_limit) */
    if (num(j, "flows", "gave_up") > 0)
        snprintf(gave_up, sizeof gave_up, ", %.0f gave up", num(j, "flows", "gave_up"));
    if (num(j, "flows", "count") > 0) /* an Arbor run has no transport flows */
        printf("flows         %.0f of %.0f done%s; FCT us mean %.3f p50 %.3f p99 %.3f max %.3f\n",
               num(j, "flows", "done"), num(j, "flows", "count"), gave_up,
               num(cJSON_GetObjectItemCaseSensitive(j, "flows"), "fct_us", "mean"),
               num(cJSON_GetObjectItemCaseSensitive(j, "flows"), "fct_us", "p50"),
               num(cJSON_GetObjectItemCaseSensitive(j, "flows"), "fct_us", "p99"),
               num(cJSON_GetObjectItemCaseSensitive(j, "flows"), "fct_us", "max"));
    const cJSON *bg = cJSON_GetObjectItemCaseSensitive(j, "background");
    if (bg)
        printf("background    %.0f of %.0f flows done over %s (window %s, dcqcn %s), %.0f B, "
               "goodput %.3f Gb/s (first start to last finish)\n",
               num(bg, "done", NULL), num(bg, "flows", NULL), str(wl, "transport", "kind"),
               str(wl, "transport", "window"), str(wl, "transport", "dcqcn"),
               num(bg, "bytes", NULL), num(bg, "goodput_gbps", NULL));
}

/* An Arbor run's result line and its jobs, one line each. */
static void print_arbor_jobs(const cJSON *j, const cJSON *wl, const cJSON *ar, int failed,
                             int incomplete)
{
    const cJSON *corr = cJSON_GetObjectItemCaseSensitive(j, "correct");
    /* repeated calls (arbor.calls): each a job on the same ranks, and the
     * JSON's bytes and ranks sum them */
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(ar, "calls");
    double n_calls = calls ? num(calls, "calls", NULL) + num(calls, "warmup", NULL) : 1;
    if (n_calls < 1) n_calls = 1;
    char each[64] = "";
    if (calls)
        snprintf(each, sizeof each, " x %.0f calls (%.0f warm-up)", n_calls,
                 num(calls, "warmup", NULL));
    printf("arbor         %s of %.0f B over %.0f ranks%s, %s mode, %.0f B headers\n",
           str(ar, "collective", NULL), num(ar, "bytes", NULL) / n_calls,
           num(ar, "ranks", NULL) / n_calls, each, str(ar, "mode", NULL),
           num(ar, "header_bytes", NULL));
    char cct[64];
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "cct_us")))
        snprintf(cct, sizeof cct, "CCT %.3f us, goodput %.3f Gb/s", num(j, "cct_us", NULL),
                 num(j, "goodput_gbps", NULL));
    else
        snprintf(cct, sizeof cct, "CCT n/a (not finished)");
    printf("result        %s, %.0f/%.0f %s done, correct %s\n", cct, num(ar, "ranks_done", NULL),
           num(ar, "ranks", NULL), calls ? "rank-calls" : "ranks",
           cJSON_IsTrue(corr)    ? "yes"
           : !cJSON_IsNull(corr) ? "NO"
           : failed              ? "n/a (failed)"
           : incomplete          ? "n/a (incomplete)"
                                 : "n/a (header-only)");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(ar, "jobs");
    const cJSON *jb;
    cJSON_ArrayForEach(jb, jobs)
    {
        printf("  job %-7.0f start %.3f us, %.0f ranks, %.0f B: JCT %.3f us, goodput %.3f Gb/s, "
               "peak %.0f slots, %.0f commits (%.0f by repair)%s\n",
               num(jb, "job", NULL), num(jb, "start_us", NULL), num(jb, "ranks", NULL),
               num(jb, "bytes", NULL), num(jb, "cct_us", NULL), num(jb, "goodput_gbps", NULL),
               num(jb, "peak_slots", NULL), num(jb, "commits", NULL), num(jb, "repairs", NULL),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(jb, "done")) ? "" : ", not done");
    }
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(calls, "cct_us");
    if (calls && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cc, "mean")))
        printf("calls         %.0f timed after %.0f warm-up, %.3f us apart: CCT mean %.3f us, p50 "
               "%.3f, min %.3f, max %.3f (the figures above: the whole run's, cct the mean)\n",
               num(calls, "calls", NULL), num(calls, "warmup", NULL),
               num(calls, "host_call_us", NULL), num(cc, "mean", NULL), num(cc, "p50", NULL),
               num(cc, "min", NULL), num(cc, "max", NULL));
    const cJSON *fj = cJSON_GetObjectItemCaseSensitive(ar, "fairness");
    if (fj && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(fj, "jain")))
        printf("jobs          %d, slots %s: Jain %.6f (goodput %.3f..%.3f Gb/s), JCT mean %.3f "
               "us, max %.3f us; all bytes over the makespan %.3f us: %.3f Gb/s\n",
               cJSON_GetArraySize(jobs),
               str(wl, "arbor", "slot_partition")[0] ? str(wl, "arbor", "slot_partition")
                                                     : "shared",
               num(fj, "jain", NULL), num(fj, "goodput_min_gbps", NULL),
               num(fj, "goodput_max_gbps", NULL), num(fj, "jct_mean_us", NULL),
               num(fj, "jct_max_us", NULL), num(fj, "makespan_us", NULL),
               num(fj, "makespan_gbps", NULL));
}

/* An Arbor run's protocol, recovery, congestion control and switches. */
static void print_arbor_protocol(const cJSON *j, const cJSON *ar)
{
    printf("protocol      %.0f commits (%.0f by repair), %.0f repair credits, %.0f AGG_MISS, "
           "%.0f timer losses\n",
           num(j, "commits", NULL), num(ar, "repair_commits", NULL),
           num(ar, "repair_credits", NULL), num(j, "agg_miss", NULL), num(ar, "timeouts", NULL));
    double retries = num(ar, "recovery", "retries");
    printf("recovery      %.0f %s; losses %.0f by order, %.0f by timer, %.0f of them spurious; "
           "%.0f bypassed; trees %.0f dead, %.0f revived\n",
           retries, noun(retries, "retry", "retries"), num(ar, "recovery", "losses_order"),
           num(ar, "recovery", "losses_timer"), num(ar, "recovery", "spurious"),
           num(ar, "recovery", "bypass"), num(ar, "recovery", "tree_deaths"),
           num(ar, "recovery", "revivals"));
    const cJSON *ccj = cJSON_GetObjectItemCaseSensitive(ar, "cc");
    const cJSON *ccn = ccj ? cJSON_GetObjectItemCaseSensitive(ccj, "kind") : NULL;
    printf("cc            %s: %.0f decreases, %.0f increases, %.0f samples with CE, window %.3f "
           "at the end (mean)\n",
           cJSON_IsString(ccn) ? ccn->valuestring : "?", num(ar, "cc", "decreases"),
           num(ar, "cc", "increases"), num(ar, "cc", "ce_samples"), num(ar, "cc", "window_mean"));
    printf("switches      %.0f inputs aggregated into %.0f aggregates, %.0f copies, peak %.0f "
           "live slots; local repair: %.0f re-credits, %.0f adoptions, %.0f replays, %.0f held\n",
           num(ar, "agg_inputs", NULL), num(ar, "agg_aggregates", NULL), num(ar, "copies", NULL),
           num(ar, "peak_live_slots", NULL), num(ar, "recovery", "recredits"),
           num(ar, "recovery", "adoptions"), num(ar, "recovery", "replays"),
           num(ar, "recovery", "held"));
    printf("invariants    %.0f errors; %.0f wire checks, %.0f mismatches; %.0f B per packet\n",
           num(ar, "invariants", "errors"), num(ar, "wire_checks", NULL),
           num(ar, "wire_errors", NULL), num(ar, "bytes_per_packet", NULL));
}

/* A host collective, and an iteration's figures. */
static void print_collective(const cJSON *j)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "collective");
    if (c && cJSON_GetObjectItemCaseSensitive(c, "algorithm")) /* host_collective */
        printf("%-13s %s, %.0f ranks, %.0f B, %.0f messages: CCT %.3f us, algbw %.3f Gb/s, "
               "busbw %.3f Gb/s (x %.4f)\n",
               str(c, "collective", NULL), str(c, "algorithm", NULL), num(c, "ranks", NULL),
               num(c, "bytes", NULL), num(c, "messages", NULL), num(c, "cct_us", NULL),
               num(c, "algbw_gbps", NULL), num(c, "busbw_gbps", NULL),
               num(c, "busbw_factor", NULL));
    else if (c)
        printf("allreduce     %.0f ranks, %.0f B: CCT %.3f us, algbw %.3f Gb/s, busbw %.3f Gb/s\n",
               num(c, "ranks", NULL), num(c, "bytes", NULL), num(c, "cct_us", NULL),
               num(c, "algbw_gbps", NULL), num(c, "busbw_gbps", NULL));
    const cJSON *itr = cJSON_GetObjectItemCaseSensitive(j, "iteration");
    if (itr)
        printf("iteration     %.0f ranks, %.0f nodes, %.0f collectives, %.0f sends: iteration %.3f "
               "us, compute max %.3f us, exposed communication max %.3f us, mean %.3f us\n",
               num(itr, "ranks", NULL), num(itr, "nodes", NULL), num(itr, "collectives", NULL),
               num(itr, "p2p", NULL), num(itr, "iter_time_us", NULL),
               num(itr, "compute_max_us", NULL), num(itr, "exposed_max_us", NULL),
               num(itr, "exposed_mean_us", NULL));
    const cJSON *ita = itr ? cJSON_GetObjectItemCaseSensitive(itr, "arbor") : NULL;
    if (ita) /* the collectives over Arbor (workload.backend) */
        printf("collectives   over Arbor: %.0f jobs, %.0f/%.0f ranks done, %.0f commits (%.0f by "
               "repair), peak %.0f live slots, %.0f invariant errors\n",
               num(ita, "jobs", NULL), num(ita, "ranks_done", NULL), num(ita, "ranks", NULL),
               num(ita, "commits", NULL), num(ita, "repairs", NULL),
               num(ita, "peak_live_slots", NULL), num(ita, "invariant_errors", NULL));
}

/* Losses, congestion signals, and the ports' queues and utilisation. */
static void print_network(const cJSON *j)
{
    double drops = num(j, "drops", NULL), timeouts = num(j, "timeouts", NULL);
    double probes = num(j, "tlp_probes", NULL);
    printf("losses        %.0f %s, %.0f unroutable, %.0f %s, ", drops, noun(drops, "drop", "drops"),
           num(j, "unroutable", NULL), timeouts,
           noun(timeouts, "transport timeout", "transport timeouts"));
    if (probes > 0)
        printf("%.0f %s, ", probes, noun(probes, "tail-loss probe", "tail-loss probes"));
    printf("%.0f B retransmitted", num(j, "retx_bytes", NULL));
    if (num(j, "duplicated", NULL) > 0 || num(j, "reordered", NULL) > 0)
        printf("; %.0f duplicated, %.0f reordered by links", num(j, "duplicated", NULL),
               num(j, "reordered", NULL));
    printf("\n");
    double marks = num(j, "ecn_marks", NULL), pauses = num(j, "pfc", "pauses");
    printf("signals       %.0f %s, %.0f %s (%.3f us paused), %.0f out of order, "
           "reorder peak %.0f B\n",
           marks, noun(marks, "ECN mark", "ECN marks"), pauses,
           noun(pauses, "PFC pause", "PFC pauses"), num(j, "pfc", "paused_us"),
           num(j, "ooo_pkts", NULL), num(j, "reorder_peak_bytes", NULL));
    printf("%-12s %-16s %7s %12s %12s %12s %8s %8s\n", "ports", "", "count", "queue max", "mean",
           "p99", "util", "max");
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "queues");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "utilisation");
    const cJSON *it;
    cJSON_ArrayForEach(it, q)
    {
        const cJSON *ui = cJSON_GetObjectItemCaseSensitive(u, it->string);
        printf("%-12s %-16s %7.0f %12.0f %12.1f %12.0f %8.4f %8.4f\n", it->string,
               str(it, "ports_of", NULL), num(it, "ports", NULL), num(it, "max_bytes", NULL),
               num(it, "mean_bytes", NULL), num(it, "p99_bytes", NULL), num(ui, "mean", NULL),
               num(ui, "max", NULL));
    }
}

/* The one-screen summary, read back from the JSON so both say the same. */
void cli_sim_summary(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    if (!j) return;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(j, "scenario");
    print_setup(j, wl);
    const char *status = str(j, "status", NULL);
    int failed = strcmp(status, "failed") == 0, incomplete = strcmp(status, "incomplete") == 0;
    print_progress(j, wl, failed, incomplete);
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(j, "arbor");
    if (ar) {
        print_arbor_jobs(j, wl, ar, failed, incomplete);
        print_arbor_protocol(j, ar);
    }
    print_collective(j);
    print_network(j);
    print_watch(cJSON_GetObjectItemCaseSensitive(j, "watch"));
    print_faults(cJSON_GetObjectItemCaseSensitive(j, "faults"));
    printf("host          %.3f s wall, %.1f MB peak memory\n", num(j, "host", "wall_s"),
           num(j, "host", "peak_rss_mb"));
    cJSON_Delete(j);
}
