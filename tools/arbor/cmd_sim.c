/*
 * arbor sim: run a scenario file (docs/scenarios.md) through the packet
 * simulator and report a summary, JSON or CSV time series
 * (docs/simulator.md). The wall clock and the peak memory are measured
 * here; everything else comes from the library and is deterministic.
 */
#include "arbor/scenario.h"
#include "cli.h"
#include "sim_part.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char sim_usage[] =
    "usage: arbor sim [FILE] [-s section.key=value ...] [--seed N] [-j|--json] [-c|--csv PREFIX]\n"
    "                 [-p|--pcap PORTS FILE] [-w|--wire-check] [-q|--quiet] [-k|--keys]\n"
    "\n"
    "Run a scenario through the packet simulator. Without FILE, the built-in\n"
    "default: an Arbor AllReduce of 64 MiB over star-32 (100 Gb/s, 1 us links,\n"
    "8192 B payloads, 16 B headers, header-only, f32); docs/scenarios.md and\n"
    "docs/arbor-sim.md. Examples: -s collective=broadcast -s mode=values\n"
    "-s size=1GiB -s topology=leafspine:4,8,4 -s loss=0.001 -s run.seed=7\n"
    "Sizes are bytes with an optional unit: K, M, G, T binary (1M = 1MiB =\n"
    "1048576), KB, MB, GB, TB decimal (docs/scenarios.md, Sizes).\n"
    "\n"
    "-s, --set KEY=VALUE  set a scenario key (section.key, or key when only one\n"
    "               section has it); repeatable, applied after FILE in order\n"
    "--seed N       run.seed (the run's seed)\n"
    "-w, --wire-check  arbor.wire_check=on: round-trip every Arbor header through the codec\n"
    "-j, --json     one JSON object on stdout (docs/simulator.md has the schema)\n"
    "-c, --csv PREFIX  write PREFIX-util.csv, -queue.csv, -flows.csv, and for Arbor\n"
    "               runs -ranks.csv (each rank's done time) and -slots.csv (slots live);\n"
    "               -ports.csv: the ports of -s run.sample_ports=LINKS, one by one\n"
    "-p, --pcap PORTS FILE  write the frames crossing PORTS to FILE (run.pcap_ports and\n"
    "               run.pcap): all, or links as for --fail (up:L1.0:0,down:L2.1:3,\n"
    "               link:A-B, switch:NAME) and host:hN; both directions of each\n"
    "--snaplen N    run.pcap_snaplen: keep N bytes of each captured frame (0: all)\n"
    "--partition K  one fabric split across K MPI ranks by subtree (mpirun -np K arbor sim\n"
    "               FILE --partition K): the same figures as one process; rank 0 prints,\n"
    "               and (without -q) each rank's time synchronising on stderr;\n"
    "               docs/partition.md\n"
    "-q, --quiet    no progress bar (shown on a terminal after one second)\n"
    "-k, --keys     list every key with its default and exit\n"
    "--seeds A..B   run once per seed A..B (run.seed) and summarise: mean, 95% CI\n"
    "               of the mean (Student's t), sd, min and max of each figure;\n"
    "               with --json one object (schema arbor-sim-seeds/1)\n"
    "Options take '--opt value' or '--opt=value' and may be abbreviated.\n"
    "\n"
    "Exit status: 0 the run finished (a channel that could not close after every\n"
    "rank was done is a warning on stderr), 1 it did not: run.stop came first, an\n"
    "engine gave up, or a flow's sender did (transport.retry_limit): one line on\n"
    "stderr naming what was lost and what failed in the fabric; 2 a bad option,\n"
    "file, key or value (one line on stderr: file, line and key).\n";

struct progress {
    int on;
    struct timespec t0;
    int drawn;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void on_progress(void *ctx, arb_time now, arb_time stop, uint64_t done, uint64_t planned)
{
    struct progress *p = ctx;
    if (!p->on || since(&p->t0) < 1.0) return;
    double f = planned ? (double)done / (double)planned : 0;
    if (stop && (double)now / (double)stop > f) f = (double)now / (double)stop;
    if (f > 1) f = 1;
    char bar[31];
    int n = (int)(f * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < n ? '#' : ' ';
    bar[30] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%%  %.1f us simulated, flows %llu/%llu ", bar, f * 100,
            (double)now / (double)ARB_PS_PER_US, (unsigned long long)done,
            (unsigned long long)planned);
    fflush(stderr);
    p->drawn = 1;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

/* The three CSV files of --csv PREFIX, opened before the run so that an
 * unwritable path is reported before any work. */
#define N_CSV 6
static const struct {
    arb_scenario_csv_kind kind;
    const char *suffix;
} csv_files[N_CSV] = {{ARB_SCN_CSV_UTIL, "util"},   {ARB_SCN_CSV_QUEUE, "queue"},
                      {ARB_SCN_CSV_FLOWS, "flows"}, {ARB_SCN_CSV_RANKS, "ranks"},
                      {ARB_SCN_CSV_SLOTS, "slots"}, {ARB_SCN_CSV_PORTS, "ports"}};

struct csv_out {
    FILE *f[N_CSV];
    char path[N_CSV][4096];
};

static void csv_close(struct csv_out *c)
{
    for (int i = 0; i < N_CSV; i++)
        if (c->f[i]) {
            fclose(c->f[i]);
            c->f[i] = NULL;
        }
}

static int csv_open(struct csv_out *c, const char *prefix)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < N_CSV; i++) {
        int n = snprintf(c->path[i], sizeof c->path[i], "%s-%s.csv", prefix, csv_files[i].suffix);
        if (n < 0 || (size_t)n >= sizeof c->path[i]) {
            csv_close(c);
            return cli_error("sim", "--csv: '%s': path too long", prefix);
        }
        c->f[i] = fopen(c->path[i], "w");
        if (!c->f[i]) {
            int e = errno;
            csv_close(c);
            return cli_error("sim", "--csv: cannot write %s: %s", c->path[i], strerror(e));
        }
    }
    return 0;
}

static int csv_write(struct csv_out *c, const arb_scenario_result *res)
{
    int status = CLI_EXIT_OK;
    for (int i = 0; i < N_CSV && status == CLI_EXIT_OK; i++) {
        char *text = arb_scenario_csv(res, csv_files[i].kind);
        if (!text) {
            fprintf(stderr, "arbor sim: out of memory\n");
            status = CLI_EXIT_FAIL;
        } else if (fputs(text, c->f[i]) == EOF || fclose(c->f[i]) != 0) {
            c->f[i] = NULL;
            fprintf(stderr, "arbor sim: --csv: cannot write %s\n", c->path[i]);
            status = CLI_EXIT_FAIL;
        } else {
            c->f[i] = NULL;
        }
        free(text);
    }
    csv_close(c);
    return status;
}

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

/* A figure of a fault event, or "n/a" when the JSON has null. */
static const char *fig(const cJSON *o, const char *a, char *buf, size_t len)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (!cJSON_IsNumber(x)) return "n/a";
    snprintf(buf, len, "%.3f", x->valuedouble);
    return buf;
}

/* Fault events (fabric.fail_at, restore_at, reboot_at): a line each. */
static void print_faults(const cJSON *faults)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(faults, "events"))
    {
        char lost[48] = "", d[32], b[32], du[32], a[32], r[32];
        if (strcmp(str(e, "kind", NULL), "reboot") == 0)
            snprintf(lost, sizeof lost, " (%.0f slots lost, down %.3f us)",
                     num(e, "slots_lost", NULL), num(e, "down_us", NULL));
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "applied"))) {
            printf("fault         %s %s at %.3f us%s: after the run\n", str(e, "kind", NULL),
                   str(e, "items", NULL), num(e, "at_us", NULL), lost);
            continue;
        }
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(e, "recovered");
        char det[64] = "nothing resent after it";
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "detect_us")))
            snprintf(det, sizeof det, "detected after %s us", fig(e, "detect_us", d, sizeof d));
        printf("fault         %s %s at %.3f us%s: %s, %.0f B repaired; goodput "
               "%s / %s / %s Gb/s before / during / after; %s%s%s\n",
               str(e, "kind", NULL), str(e, "items", NULL), num(e, "at_us", NULL), lost, det,
               num(e, "bytes_repaired", NULL), fig(e, "goodput_before_gbps", b, sizeof b),
               fig(e, "goodput_during_gbps", du, sizeof du),
               fig(e, "goodput_after_gbps", a, sizeof a),
               cJSON_IsTrue(rec)    ? "recovered in "
               : cJSON_IsFalse(rec) ? "not recovered by the end"
                                    : "recovery n/a (outside the collective)",
               cJSON_IsTrue(rec) ? fig(e, "recover_us", r, sizeof r) : "",
               cJSON_IsTrue(rec) ? " us" : "");
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

/* The one-screen summary, read back from the JSON so both say the same. */
static void print_summary(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    if (!j) return;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(j, "scenario");
    printf("scenario      %s\n", str(wl, "file", NULL));
    printf("fabric        %s: %.0f hosts, %.0f switches, %.0f links, %s, %s per link\n",
           str(j, "topology", "spec"), num(j, "topology", "hosts"), num(j, "topology", "switches"),
           num(j, "topology", "links"), str(wl, "fabric", "link_rate"), str(wl, "fabric", "delay"));
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
    const char *status = str(j, "status", NULL);
    int failed = strcmp(status, "failed") == 0, incomplete = strcmp(status, "incomplete") == 0;
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
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(j, "arbor");
    if (ar) {
        const cJSON *corr = cJSON_GetObjectItemCaseSensitive(j, "correct");
        printf("arbor         %s of %.0f B over %.0f ranks, %s mode, %.0f B headers\n",
               str(ar, "collective", NULL), num(ar, "bytes", NULL), num(ar, "ranks", NULL),
               str(ar, "mode", NULL), num(ar, "header_bytes", NULL));
        char cct[64];
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "cct_us")))
            snprintf(cct, sizeof cct, "CCT %.3f us, goodput %.3f Gb/s", num(j, "cct_us", NULL),
                     num(j, "goodput_gbps", NULL));
        else
            snprintf(cct, sizeof cct, "CCT n/a (not finished)");
        printf("result        %s, %.0f/%.0f ranks done, correct %s\n", cct,
               num(ar, "ranks_done", NULL), num(ar, "ranks", NULL),
               cJSON_IsTrue(corr)    ? "yes"
               : !cJSON_IsNull(corr) ? "NO"
               : failed              ? "n/a (failed)"
               : incomplete          ? "n/a (incomplete)"
                                     : "n/a (header-only)");
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(ar, "jobs");
        const cJSON *jb;
        cJSON_ArrayForEach(jb, jobs)
        {
            printf(
                "  job %-7.0f start %.3f us, %.0f ranks, %.0f B: JCT %.3f us, goodput %.3f Gb/s, "
                "peak %.0f slots, %.0f commits (%.0f by repair)%s\n",
                num(jb, "job", NULL), num(jb, "start_us", NULL), num(jb, "ranks", NULL),
                num(jb, "bytes", NULL), num(jb, "cct_us", NULL), num(jb, "goodput_gbps", NULL),
                num(jb, "peak_slots", NULL), num(jb, "commits", NULL), num(jb, "repairs", NULL),
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(jb, "done")) ? "" : ", not done");
        }
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
        printf("protocol      %.0f commits (%.0f by repair), %.0f repair credits, %.0f AGG_MISS, "
               "%.0f timeouts\n",
               num(j, "commits", NULL), num(ar, "repair_commits", NULL),
               num(ar, "repair_credits", NULL), num(j, "agg_miss", NULL),
               num(ar, "timeouts", NULL));
        printf("recovery      %.0f retries; losses %.0f by order, %.0f by timer (%.0f spurious); "
               "%.0f bypassed; trees %.0f dead, %.0f revived\n",
               num(ar, "recovery", "retries"), num(ar, "recovery", "losses_order"),
               num(ar, "recovery", "losses_timer"), num(ar, "recovery", "spurious"),
               num(ar, "recovery", "bypass"), num(ar, "recovery", "tree_deaths"),
               num(ar, "recovery", "revivals"));
        const cJSON *ccj = cJSON_GetObjectItemCaseSensitive(ar, "cc");
        const cJSON *ccn = ccj ? cJSON_GetObjectItemCaseSensitive(ccj, "kind") : NULL;
        printf(
            "cc            %s: %.0f decreases, %.0f increases, %.0f samples with CE, window %.3f "
            "at the end (mean)\n",
            cJSON_IsString(ccn) ? ccn->valuestring : "?", num(ar, "cc", "decreases"),
            num(ar, "cc", "increases"), num(ar, "cc", "ce_samples"), num(ar, "cc", "window_mean"));
        printf("switches      %.0f inputs aggregated into %.0f aggregates, %.0f copies, peak %.0f "
               "live slots\n",
               num(ar, "agg_inputs", NULL), num(ar, "agg_aggregates", NULL),
               num(ar, "copies", NULL), num(ar, "peak_live_slots", NULL));
        printf("invariants    %.0f errors; %.0f wire checks, %.0f mismatches; %.0f B per packet\n",
               num(ar, "invariants", "errors"), num(ar, "wire_checks", NULL),
               num(ar, "wire_errors", NULL), num(ar, "bytes_per_packet", NULL));
    }
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
    printf("losses        %.0f drops, %.0f unroutable, %.0f timeouts, ", num(j, "drops", NULL),
           num(j, "unroutable", NULL), num(j, "timeouts", NULL));
    if (num(j, "tlp_probes", NULL) > 0)
        printf("%.0f tail-loss probes, ", num(j, "tlp_probes", NULL));
    printf("%.0f B retransmitted", num(j, "retx_bytes", NULL));
    if (num(j, "duplicated", NULL) > 0 || num(j, "reordered", NULL) > 0)
        printf("; %.0f duplicated, %.0f reordered by links", num(j, "duplicated", NULL),
               num(j, "reordered", NULL));
    printf("\n");
    printf("signals       %.0f ECN marks, %.0f PFC pauses (%.3f us paused), %.0f out of order, "
           "reorder peak %.0f B\n",
           num(j, "ecn_marks", NULL), num(j, "pfc", "pauses"), num(j, "pfc", "paused_us"),
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
    print_watch(cJSON_GetObjectItemCaseSensitive(j, "watch"));
    print_faults(cJSON_GetObjectItemCaseSensitive(j, "faults"));
    printf("host          %.3f s wall, %.1f MB peak memory\n", num(j, "host", "wall_s"),
           num(j, "host", "peak_rss_mb"));
    cJSON_Delete(j);
}

/* The results: JSON on stdout (or the text summary), then the CSV files
 * (closed either way). Returns `status`, or CLI_EXIT_FAIL when the JSON
 * could not be made, or the CSV's status. */
static int write_results(const arb_scenario_result *res, const arb_scenario_host *host, int json,
                         const char *csv, struct csv_out *csvo, int status)
{
    char *out = arb_scenario_json(res, host);
    if (!out) {
        fprintf(stderr, "arbor sim: out of memory\n");
        status = CLI_EXIT_FAIL;
    } else if (json) {
        puts(out);
    } else {
        print_summary(out);
    }
    free(out);
    if (status == CLI_EXIT_OK && csv) return csv_write(csvo, res);
    csv_close(csvo);
    return status;
}

static int list_keys(void)
{
    for (size_t i = 0; i < arb_scenario_n_keys(); i++) {
        arb_scenario_key_info ki;
        arb_scenario_key(i, &ki);
        printf("%s.%s = %s\n    %s\n", ki.section, ki.key, ki.def, ki.doc);
        if (ki.choices) printf("    one of: %s\n", ki.choices);
    }
    return CLI_EXIT_OK;
}

static int status_of(int rc)
{
    return rc == ARB_ENOMEM || rc == ARB_ERANGE ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

/* The scenario changes of the command line, applied in their order after
 * the file: -s, --seed, --pcap, --snaplen, --wire-check (and --partition's
 * run.order first). Each but -s is set as the option it is, so that a
 * message about its value names the option the user wrote. */
struct sim_action {
    int opt;
    const char *a, *b;
};

static int apply_action(arb_scenario *sc, const struct sim_action *x, char *err, size_t errlen)
{
    char as[64];
    switch (x->opt) {
    case 's':
        return arb_scenario_set(sc, x->a, err, errlen);
    case 'S': {
        uint64_t v;
        if (cli_parse_u64(x->a, UINT64_MAX, &v) < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "--seed: '%s' is not a number", x->a);
        snprintf(as, sizeof as, "run.seed=%llu", (unsigned long long)v);
        return arb_scenario_set_from(sc, as, "--seed", err, errlen);
    }
    case 'w':
        return arb_scenario_set_from(sc, "arbor.wire_check=on", "--wire-check", err, errlen);
    case 'P':
        return arb_scenario_set_from(sc, "run.order=local", "--partition", err, errlen);
    case 'L': {
        size_t n = strlen(x->a) + 32;
        char *buf = malloc(n);
        if (!buf) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        snprintf(buf, n, "run.pcap_snaplen=%s", x->a);
        int rc = arb_scenario_set_from(sc, buf, "--snaplen", err, errlen);
        free(buf);
        return rc;
    }
    case 'p': {
        if (!*x->b) /* (run.pcap = "" is no capture: here the user asked for one) */
            return arb_errf(err, errlen, ARB_EPARSE,
                            "--pcap %s: an empty FILE (a capture needs one)", x->a);
        size_t n = strlen(x->a) + strlen(x->b) + 32;
        char *buf = malloc(n);
        if (!buf) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        snprintf(buf, n, "run.pcap_ports=%s", x->a);
        int rc = arb_scenario_set_from(sc, buf, "--pcap", err, errlen);
        snprintf(buf, n, "run.pcap=%s", x->b);
        if (rc == 0) rc = arb_scenario_set_from(sc, buf, "--pcap", err, errlen);
        free(buf);
        return rc;
    }
    default:
        return 0;
    }
}

/* The scenario of the command line: FILE (or the built-in one), then the
 * actions in order. Prints its error when `say` (one rank of several
 * does) and returns an exit status. */
static int build_scenario(const char *file, const struct sim_action *act, int n_act,
                          arb_scenario **out, int say)
{
    arb_scenario *sc;
    if (arb_scenario_new(&sc) < 0) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    char err[1024];
    int rc = file ? arb_scenario_load(sc, file, err, sizeof err)
                  : arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", NULL,
                                             err, sizeof err);
    for (int i = 0; rc == 0 && i < n_act; i++)
        rc = apply_action(sc, &act[i], err, sizeof err);
    if (rc < 0) {
        arb_scenario_free(sc);
        char *text = file && rc == ARB_EPARSE ? cli_slurp(file) : NULL;
        int sweep = text && (strstr(text, "${") || strstr(text, "[sweep]"));
        free(text);
        if (say)
            cli_error("sim", "%s%s", err,
                      sweep ? " (a sweep: run it with 'arbor sweep FILE')" : "");
        return status_of(rc);
    }
    *out = sc;
    return CLI_EXIT_OK;
}

struct seeds_ctx {
    const char *file;
    const struct sim_action *act;
    int n_act;
};

/* One run of --seeds: the scenario with run.seed = seed, its JSON. */
static int seeds_one(void *ctx, uint64_t seed, char **json)
{
    const struct seeds_ctx *x = ctx;
    arb_scenario *sc;
    int rc = build_scenario(x->file, x->act, x->n_act, &sc, 1);
    if (rc) return rc;
    char as[64], err[1024];
    snprintf(as, sizeof as, "run.seed=%llu", (unsigned long long)seed);
    arb_scenario_result *res = NULL;
    rc = arb_scenario_set_from(sc, as, "--seeds", err, sizeof err);
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &res, err, sizeof err);
    arb_scenario_free(sc);
    if (rc < 0) {
        cli_error("sim", "seed %llu: %s", (unsigned long long)seed, err);
        return status_of(rc);
    }
    *json = arb_scenario_json(res, NULL);
    arb_scenario_result_free(res);
    if (!*json) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The status lines of a run that did not finish (stderr), as status: a
 * run that failed or was cut short exits 1, after the results it did get.
 * Their time is the one the JSON reports, sim_time_us: the last event that
 * did something, not a host timer that fired after it and found nothing to
 * do (run.stop cuts a run with such timers armed, the RTO's among them). */
static int run_status(const arb_scenario_result *res, int status)
{
    const char *why = NULL;
    double at = (double)arb_scenario_result_time(res) / ARB_PS_PER_US;
    arb_scenario_status st = arb_scenario_result_status(res, &why);
    if (st == ARB_SCN_FAILED) {
        fprintf(stderr, "arbor sim: failed at %.3f us: %s\n", at, why);
        if (status == CLI_EXIT_OK) status = CLI_EXIT_FAIL;
    } else if (st == ARB_SCN_DONE && why) {
        fprintf(stderr, "arbor sim: warning at %.3f us: %s\n", at, why);
    } else if (st == ARB_SCN_INCOMPLETE) {
        const arb_workload_result *w = arb_scenario_result_workload(res);
        const arb_sim_arbor_result *a = arb_scenario_result_arbor(res);
        if (a)
            fprintf(stderr,
                    "arbor sim: incomplete: run.stop came first, %u of %u ranks done (last "
                    "activity at %.3f us)\n",
                    a->ranks_done, a->ranks, at);
        else
            fprintf(stderr,
                    "arbor sim: incomplete: run.stop came first, %llu of %llu flows done (last "
                    "activity at %.3f us)\n",
                    (unsigned long long)w->flows_done, (unsigned long long)w->flows_planned, at);
        if (status == CLI_EXIT_OK) status = CLI_EXIT_FAIL;
    }
    return status;
}

/* arbor sim --partition K: this process's part of the run; rank 0 reports. */
static int sim_partitioned(const char *file, const struct sim_action *act, int n_act,
                           const char *k_text, int json, int quiet, const char *csv, int seeds)
{
    uint64_t k;
    char err[1024];
    uint32_t me;
    sim_part_launched(&me); /* (before MPI is up: rank 0 alone says what is wrong) */
    if (cli_parse_u64(k_text, 65536, &k) < 0 || k == 0)
        return me ? CLI_EXIT_USAGE
                  : cli_error("sim", "--partition: '%s' is not a number of ranks (1 .. 65536)",
                              k_text);
    if (seeds)
        return me ? CLI_EXIT_USAGE
                  : cli_error("sim", "--seeds runs the scenario many times: not with --partition");
    struct sim_part_cli p;
    memset(&p, 0, sizeof p);
    if (sim_part_init(&p, (uint32_t)k, err, sizeof err) < 0) {
        int r0 = p.ops.rank == 0;
        sim_part_finalize(&p);
        return r0 ? cli_error("sim", "%s", err) : CLI_EXIT_USAGE;
    }
    int rank0 = p.ops.rank == 0;
    arb_scenario *sc;
    /* run.order = local first: what the file says, the -s that follow may change */
    struct sim_action *all = calloc((size_t)n_act + 1, sizeof *all);
    if (!all) {
        sim_part_finalize(&p);
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    all[0] = (struct sim_action){'P', NULL, NULL};
    if (n_act) memcpy(all + 1, act, (size_t)n_act * sizeof *act);
    int rc = build_scenario(file, all, n_act + 1, &sc, rank0); /* the same in every rank */
    free(all);
    struct csv_out csvo;
    memset(&csvo, 0, sizeof csvo);
    if (rc == 0 && rank0 && csv) rc = csv_open(&csvo, csv);
    if (!sim_part_all_ok(&p, rc == 0)) {
        if (rc == 0) arb_scenario_free(sc);
        csv_close(&csvo);
        sim_part_finalize(&p);
        return rc ? rc : CLI_EXIT_USAGE;
    }
    struct progress pg;
    memset(&pg, 0, sizeof pg);
    pg.on = rank0 && !quiet && isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &pg.t0);
    arb_scenario_result *res = NULL;
    rc = arb_scenario_run_part(sc, &p.ops, on_progress, &pg, &res, err, sizeof err);
    double run_s = since(&pg.t0);
    if (pg.drawn) fprintf(stderr, "\r%*s\r", 78, "");
    arb_scenario_free(sc);
    int status = CLI_EXIT_OK;
    if (rc < 0) {
        csv_close(&csvo);
        status = rank0 ? cli_error("sim", "%s", err) : status_of(rc);
        sim_part_finalize(&p);
        return status;
    }
    arb_sim_part_info info;
    if (!quiet && arb_scenario_result_part(res, &info) == 0) sim_part_report(&p, &info, run_s);
    if (rank0) {
        arb_scenario_host host = {run_s, peak_rss_mb()};
        status = write_results(res, &host, json, csv, &csvo, status);
        status = run_status(res, status);
    }
    arb_scenario_result_free(res);
    fflush(stdout);
    sim_part_finalize(&p);
    return status;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option opts[] = {{"set", required_argument, NULL, 's'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"pcap", required_argument, NULL, 'p'},
                                         {"wire-check", no_argument, NULL, 'w'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"keys", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"seeds", required_argument, NULL, 'E'},
                                         {"snaplen", required_argument, NULL, 'L'},
                                         {"partition", required_argument, NULL, 'P'},
                                         {0, 0, 0, 0}};
    const char *file = NULL, *csv = NULL, *seeds = NULL, *partition = NULL;
    int json = 0, quiet = 0, n_act = 0, c, has_pcap = 0, has_seed = 0;
    struct sim_action *act = calloc((size_t)argc + 1, sizeof *act);
    if (!act) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    cli_getopt_start();
    while ((c = getopt_long(argc, argv, ":s:S:jc:p:wqkh", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            free(act);
            fputs(sim_usage, stdout);
            return CLI_EXIT_OK;
        case 'k':
            free(act);
            return list_keys();
        case 'j':
            json = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'c':
            csv = optarg;
            break;
        case 'E':
            seeds = optarg;
            break;
        case 'P':
            partition = optarg;
            break;
        case 'p': /* two values: PORTS (the option's) and FILE (the next word) */
            if (optind >= argc) {
                free(act);
                return cli_error("sim", "--pcap needs PORTS and FILE");
            }
            act[n_act++] = (struct sim_action){'p', optarg, argv[optind++]};
            has_pcap = 1;
            break;
        case 's':
        case 'S':
        case 'L':
        case 'w':
            act[n_act++] = (struct sim_action){c, optarg, NULL};
            has_seed |= c == 'S';
            break;
        default:
            free(act);
            return cli_bad_option("sim", c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (file) {
            free(act);
            return cli_error("sim", "one scenario file only ('%s' and '%s')", file, argv[i]);
        }
        file = argv[i];
    }
    uint32_t me, ranks = sim_part_launched(&me);
    if (!partition && ranks > 1) { /* every rank would run the whole of it, and print it */
        free(act);
        if (me != 0) return CLI_EXIT_USAGE;
        return cli_error("sim",
                         "started as one of %u MPI ranks without --partition: each would run "
                         "the whole scenario; add --partition %u to split it across them, or "
                         "run arbor sim without mpirun",
                         ranks, ranks);
    }
    if (seeds) {
        uint64_t first, last;
        const char *clash = csv         ? "--csv"
                            : has_pcap  ? "--pcap"
                            : has_seed  ? "--seed"
                            : partition ? "--partition"
                                        : NULL;
        int st;
        if (cli_parse_seeds(seeds, &first, &last) < 0) {
            st = cli_error("sim", "--seeds: '%s' is not A..B with A <= B, at most %d runs", seeds,
                           CLI_MAX_SEEDS);
        } else if (clash) {
            st = cli_error("sim", "--seeds runs the scenario many times: not with %s", clash);
        } else {
            struct seeds_ctx x = {file, act, n_act};
            struct cli_seeds_run run = {file, first, last, json, quiet, seeds_one, &x};
            st = cli_sim_seeds(&run);
        }
        free(act);
        return st;
    }
    if (partition) {
        int st = sim_partitioned(file, act, n_act, partition, json, quiet, csv, seeds != NULL);
        free(act);
        return st;
    }
    arb_scenario *sc;
    int rc = build_scenario(file, act, n_act, &sc, 1);
    free(act);
    if (rc) return rc;
    char err[1024];
    struct csv_out csvo;
    memset(&csvo, 0, sizeof csvo);
    if (csv && (rc = csv_open(&csvo, csv)) != 0) {
        arb_scenario_free(sc);
        return rc;
    }
    struct progress pg;
    memset(&pg, 0, sizeof pg);
    pg.on = !quiet && isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &pg.t0);
    arb_scenario_result *res;
    rc = arb_scenario_run(sc, on_progress, &pg, &res, err, sizeof err);
    if (pg.drawn) fprintf(stderr, "\r%*s\r", 78, "");
    arb_scenario_free(sc);
    if (rc < 0) {
        csv_close(&csvo);
        cli_error("sim", "%s", err);
        return status_of(rc);
    }
    arb_scenario_host host = {since(&pg.t0), peak_rss_mb()};
    int status = run_status(res, write_results(res, &host, json, csv, &csvo, CLI_EXIT_OK));
    arb_scenario_result_free(res);
    return status;
}
