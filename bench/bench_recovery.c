/*
 * bench_recovery: the Arbor transport on a bad day, beside the good one and
 * beside the ring AllReduce over IRN (docs/results.md, "Loss, failures and
 * recovery"). Every figure is a simulation result, the same on every
 * machine; the program prints them with the goal each row is held to.
 *
 *   loss      star-32, 64 MiB AllReduce, values, defaults only, per-link loss
 *             P = 0, 0.01%, 0.1%, 1%: Arbor's goodput and the ring's algbw
 *             (scenarios/arbor-star32-ring.ini, IRN with its defaults: the
 *             timeouts derived from the fabric and RACK-TLP, the strongest
 *             ring the simulator has; docs/transports.md) at the same loss
 *   six       the six collectives at 0.1% against their loss-free time
 *   trees     leafspine:4,8,8, two subchannels, spine L2.0 dead from the start
 *             (arbor.fail) or failing 2 ms in (fabric.fail_at), dynamic and
 *             static selection; one flaky uplink at 1%; random loss alone
 *             (0.1%, 1%) over seeds 1..3 (or --seeds), each selection,
 *             against the ring
 *   loss-free the default run at 64 MiB and 1 GiB (header-only)
 *   fabrics   star:32, leafspine:4,8,8, kary:8,2, the three-level kary:4,3,
 *             pgft:2;8,4;1,2;1,2 (parallel links, 2:1) and rail:2,8,4,4 (2:1)
 *             at 16 and 64 MiB, loss 0, 0.1%, 1%: Arbor with local repair
 *             (the default), Arbor with end-to-end retries
 *             (arbor.repair=end-to-end) and the ring over IRN, side by side,
 *             with the trees declared dead and the offsets bypassed
 *
 * `--quick` runs 8 MiB instead of 64 MiB (the failure 250 us in instead of 2
 * ms, about a third of the way in either way), skips 1 GiB and the fabrics and
 * checks no goal (the goals are for 64 MiB); `--fabrics` runs the fabrics
 * table alone, and after it `--seeds N` runs each lossy row of it with
 * run.seed 1..N (Arbor with local repair and the ring; end-to-end with seed
 * 1 only), printing the mean and the lowest, and judging the goals on the
 * means (a lossy figure moves with the seed as much as with a change:
 * star:32 at 1% spans 62-76 Gb/s over six seeds), and `--fabric SPEC`
 * runs the rows of that one fabric, any topology spec (`arbor topo`). Run from the repository root.
 * Prints a line per run, each goal under its table with whether it was met, and a count.
 */
#include "arbor/scenario.h"
#include "arbor/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct outcome {
    int ok;        /* the run finished */
    double cct_us; /* completion time */
    double gbps;   /* Arbor: goodput; ring: algbw (S x 8 / time) */
    int correct;   /* values checked exactly (1), or -1 */
    uint64_t retries, repairs;
    uint64_t deaths, bypass; /* trees declared dead, offsets sent to the bypass repair */
};

static const char *g_size = "64MiB";

/* The ring's scenario, relative to the repository root. */
#define RING_FILE "scenarios/arbor-star32-ring.ini"

/* Run a scenario (the built-in one when file is NULL) with settings. */
static struct outcome run(const char *file, const char *const *sets)
{
    struct outcome o = {0, 0, 0, -1, 0, 0, 0, 0};
    arb_scenario *sc;
    char err[1024], size[64];
    if (arb_scenario_new(&sc) < 0) return o;
    int rc = file ? arb_scenario_load(sc, file, err, sizeof err)
                  : arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", ".",
                                             err, sizeof err);
    snprintf(size, sizeof size, "workload.size=%s", g_size);
    if (rc == 0) rc = arb_scenario_set(sc, size, err, sizeof err);
    if (rc == 0) rc = arb_scenario_set(sc, "run.stop=0", err, sizeof err);
    if (rc == 0) rc = arb_scenario_set(sc, "run.sample=0", err, sizeof err);
    for (size_t i = 0; rc == 0 && sets[i]; i++)
        rc = arb_scenario_set(sc, sets[i], err, sizeof err);
    arb_scenario_result *r = NULL;
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    arb_scenario_free(sc);
    if (rc < 0) { /* a setting or the ring's file: every row would fail alike */
        fprintf(stderr, "bench_recovery: %s\n", err);
        exit(2);
    }
    const arb_sim_arbor_result *a = arb_scenario_result_arbor(r);
    const arb_workload_result *w = arb_scenario_result_workload(r);
    if (arb_scenario_result_status(r, NULL) == ARB_SCN_DONE) {
        o.ok = 1;
        if (a) {
            o.cct_us = (double)a->cct / ARB_PS_PER_US;
            o.gbps = a->goodput_gbps;
            o.correct = a->correct;
            o.retries = a->retries;
            o.repairs = a->repair_commits;
            o.deaths = a->deaths;
            o.bypass = a->bypass;
        } else {
            o.cct_us = (double)(w->finish - w->start) / ARB_PS_PER_US; /* see ring_gbps */
        }
    }
    arb_scenario_result_free(r);
    return o;
}

/* The ring's algbw: the buffer S x 8 over its completion time. */
static double ring_gbps(const struct outcome *o, double bytes)
{
    return o->ok && o->cct_us > 0 ? bytes * 8 / (o->cct_us * 1e-6) / 1e9 : 0;
}

static int goals_met, goals, g_quick;
/* A failure a third of the way into a loss-free run: 64 MiB takes about
 * 5.5 ms, 8 MiB (--quick) about 0.75 ms, over which 2 ms would find the
 * run done. */
static const char *g_fail_at = "fabric.fail_at=2ms switch:L2.0";

/* A goal of this benchmark, held at 64 MiB (--quick prints the tables only). */
static void goal(const char *what, int met)
{
    if (g_quick) return;
    goals++;
    goals_met += met;
    printf("  %-4s %s\n", met ? "met" : "MISS", what);
}

static double size_bytes(void)
{
    return strcmp(g_size, "64MiB") == 0 ? 64.0 * 1024 * 1024 : 8.0 * 1024 * 1024;
}

static void loss_table(double *arbor_at, double *ring_at)
{
    static const char *const p[] = {"0", "0.0001", "0.001", "0.01"};
    printf("loss: star-32 AllReduce of %s, values, defaults; ring over IRN (derived timeouts, "
           "RACK-TLP) at the same loss\n",
           g_size);
    printf("  %-8s %12s %8s %8s %12s %8s\n", "loss", "Arbor Gb/s", "exact", "retries", "ring Gb/s",
           "ratio");
    for (int i = 0; i < 4; i++) {
        char loss[64];
        snprintf(loss, sizeof loss, "fabric.loss=%s", p[i]);
        const char *as[] = {"arbor.mode=values", loss, NULL};
        struct outcome a = run(NULL, as);
        const char *rs[] = {loss, NULL};
        struct outcome rg = run(RING_FILE, rs);
        double ring = ring_gbps(&rg, size_bytes());
        arbor_at[i] = a.ok ? a.gbps : 0;
        ring_at[i] = ring;
        printf("  %-8s %12.3f %8s %8llu %12.3f %8.2f\n", p[i], arbor_at[i],
               a.correct == 1 ? "yes" : "NO", (unsigned long long)a.retries, ring,
               ring > 0 ? arbor_at[i] / ring : 0);
    }
}

static void six_table(void)
{
    static const char *const colls[] = {"allreduce", "reduce",    "reducescatter",
                                        "broadcast", "allgather", "barrier"};
    printf("six collectives at 0.1%% loss against loss-free (values, %s)\n", g_size);
    printf("  %-14s %14s %14s %8s %6s\n", "collective", "loss-free us", "0.1% us", "ratio",
           "exact");
    for (int i = 0; i < 6; i++) {
        char c[64];
        snprintf(c, sizeof c, "arbor.collective=%s", colls[i]);
        const char *s0[] = {"arbor.mode=values", c, NULL};
        const char *s1[] = {"arbor.mode=values", c, "fabric.loss=0.001", NULL};
        struct outcome a = run(NULL, s0), b = run(NULL, s1);
        double ratio = a.ok && b.ok ? b.cct_us / a.cct_us : 0;
        printf("  %-14s %14.3f %14.3f %8.3f %6s\n", colls[i], a.cct_us, b.cct_us, ratio,
               b.correct == 1 ? "yes" : "NO");
        char what[96];
        snprintf(what, sizeof what, "%s at 0.1%%: within 1.3x of loss-free, exact", colls[i]);
        goal(what, b.ok && ratio > 0 && ratio <= 1.3 && b.correct == 1);
    }
}

static void trees_table(void)
{
    printf("trees: leafspine:4,8,8, two subchannels, %s header-only (values for the flaky link)\n",
           g_size);
    const char *base[] = {"fabric.topology=leafspine:4,8,8", "arbor.subchannels=2", NULL, NULL,
                          NULL};
    struct {
        const char *name, *mode, *fail;
        double goal;
    } rows[] = {
        {"no failure, dynamic", "arbor.subchannel_mode=dynamic", NULL, 0},
        {"no failure, static", "arbor.subchannel_mode=static", NULL, 0},
        /* the figures a failed tree must still give (docs/results.md, "One tree failed"):
         * dynamic 96.6, static 85.6 Gb/s when local repair came */
        {"dead from the start, dynamic", "arbor.subchannel_mode=dynamic", "arbor.fail=switch:L2.0",
         96.6},
        {"dead from the start, static", "arbor.subchannel_mode=static", "arbor.fail=switch:L2.0",
         85.6},
        {g_quick ? "fails 250 us in, dynamic" : "fails 2 ms in, dynamic",
         "arbor.subchannel_mode=dynamic", g_fail_at, 96.6},
        {g_quick ? "fails 250 us in, static" : "fails 2 ms in, static",
         "arbor.subchannel_mode=static", g_fail_at, 85.6},
    };
    printf("  %-32s %12s %8s\n", "case", "Gb/s", "retries");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        base[2] = rows[i].mode;
        base[3] = rows[i].fail;
        struct outcome o = run(NULL, base);
        printf("  %-32s %12.3f %8llu\n", rows[i].name, o.ok ? o.gbps : 0,
               (unsigned long long)o.retries);
        if (rows[i].goal > 0) {
            char what[96];
            snprintf(what, sizeof what, "%s: >= %.1f Gb/s", rows[i].name, rows[i].goal);
            goal(what, o.ok && o.gbps >= rows[i].goal);
        }
    }
    const char *f0[] = {"fabric.topology=leafspine:4,8,8", "arbor.subchannels=2",
                        "arbor.subchannel_mode=dynamic", "arbor.mode=values", NULL};
    const char *f1[] = {"fabric.topology=leafspine:4,8,8",      "arbor.subchannels=2",
                        "arbor.subchannel_mode=dynamic",        "arbor.mode=values",
                        "fabric.link=link:L1.0-L2.0 loss=0.01", NULL};
    struct outcome a = run(NULL, f0), b = run(NULL, f1);
    printf("  %-32s %12.3f %8llu\n", "flaky uplink 1%, dynamic", b.ok ? b.gbps : 0,
           (unsigned long long)b.retries);
    goal("flaky uplink at 1%, dynamic: >= 90% of loss-free, exact",
         a.ok && b.ok && b.gbps >= 0.9 * a.gbps && b.correct == 1);
}

static int g_seeds = 1;

/* Two trees a channel under random loss alone, each selection, seeds
 * 1..g_seeds (at least 3): every run exact, no tree taken for a failed one,
 * nothing bypassed, and the mean at least 1.5x the ring's at the same loss
 * (docs/protocol.md section 9). */
static void trees_loss_rows(void)
{
    static const char *const modes[] = {"arbor.subchannel_mode=dynamic",
                                        "arbor.subchannel_mode=static"};
    static const char *const losses[] = {"fabric.loss=0.001", "fabric.loss=0.01"};
    int n = g_seeds > 3 ? g_seeds : 3;
    printf("  two trees under random loss, seeds 1..%d: mean (lowest), trees dead, bypassed, "
           "against the ring\n",
           n);
    for (int l = 0; l < 2; l++) {
        double ring = 0;
        char sd[32];
        const char *rs[] = {"fabric.topology=leafspine:4,8,8", losses[l], sd, NULL};
        for (int k = 1; k <= n; k++) {
            snprintf(sd, sizeof sd, "run.seed=%d", k);
            struct outcome r = run(RING_FILE, rs);
            ring += ring_gbps(&r, size_bytes()) / n;
        }
        for (int m = 0; m < 2; m++) {
            const char *as[] = {"fabric.topology=leafspine:4,8,8",
                                "arbor.subchannels=2",
                                modes[m],
                                "arbor.mode=values",
                                losses[l],
                                sd,
                                NULL};
            double sum = 0, low = -1;
            uint64_t dead = 0, bypass = 0;
            int exact = 1;
            for (int k = 1; k <= n; k++) {
                snprintf(sd, sizeof sd, "run.seed=%d", k);
                struct outcome o = run(NULL, as);
                double g = o.ok ? o.gbps : 0;
                sum += g;
                if (low < 0 || g < low) low = g;
                exact &= o.ok && o.correct == 1;
                dead += o.deaths;
                bypass += o.bypass;
            }
            const char *mode = strchr(modes[m], '=') + 1;
            const char *loss = l ? "1%" : "0.1%";
            char name[64], what[128];
            snprintf(name, sizeof name, "%s, %s", loss, mode);
            printf("  %-32s %12.3f (%.3f) %4llu dead %4llu bypassed, ring %.3f: %.2fx\n", name,
                   sum / n, low, (unsigned long long)dead, (unsigned long long)bypass, ring,
                   ring > 0 ? sum / n / ring : 0);
            snprintf(what, sizeof what, "two trees, %s, %s: exact, no tree dead, nothing bypassed",
                     loss, mode);
            goal(what, exact && dead == 0 && bypass == 0);
            snprintf(what, sizeof what, "two trees, %s, %s: >= 1.5x the ring", loss, mode);
            goal(what, ring > 0 && sum / n >= 1.5 * ring);
        }
    }
}

/* One fabric, one size, one loss: Arbor local and end-to-end, the ring;
 * over seeds 1..g_seeds where lossy (the figures are means; low the
 * lowest of Arbor's). */
struct frow {
    struct outcome local, e2e, ring;
    double ring_gbps, low;
};
static const char *g_fabric;

static struct frow fabric_row(const char *topo, const char *size, const char *loss)
{
    char t[64], l[64], sd[64];
    snprintf(t, sizeof t, "fabric.topology=%s", topo);
    snprintf(l, sizeof l, "fabric.loss=%s", loss);
    g_size = size;
    double bytes = strcmp(size, "64MiB") == 0 ? 64.0 * 1024 * 1024 : 16.0 * 1024 * 1024;
    int lossy = strcmp(loss, "0") != 0, n = lossy ? g_seeds : 1;
    const char *as[] = {"arbor.mode=values", t, l, sd, NULL, NULL};
    const char *rs[] = {t, l, sd, NULL};
    struct frow f;
    memset(&f, 0, sizeof f);
    double sum = 0, ring_sum = 0;
    f.low = -1;
    for (int k = 1; k <= n; k++) {
        snprintf(sd, sizeof sd, "run.seed=%d", k);
        struct outcome o = run(NULL, as), r = run(RING_FILE, rs);
        double g = o.ok ? o.gbps : 0;
        sum += g;
        ring_sum += ring_gbps(&r, bytes);
        if (f.low < 0 || g < f.low) f.low = g;
        if (k == 1) {
            f.local = o;
            f.ring = r;
        } else { /* every seed must end exact, with no tree dead and nothing bypassed */
            f.local.ok &= o.ok;
            if (o.correct != 1) f.local.correct = o.correct;
            f.local.deaths += o.deaths;
            f.local.bypass += o.bypass;
        }
    }
    f.local.gbps = sum / n;
    f.ring_gbps = ring_sum / n;
    if (lossy) {
        snprintf(sd, sizeof sd, "run.seed=1");
        as[4] = "arbor.repair=end-to-end";
        f.e2e = run(NULL, as);
    } else {
        f.e2e = f.local; /* nothing to repair: the same run */
    }
    return f;
}

/* A lossy row's goals (l: 1 for 0.1%, 2 for 1%). */
static void fabric_goals(const char *topo, const char *size, int l, const struct frow *f,
                         double of0, double ratio)
{
    if (l == 0) return;
    char what[128];
    snprintf(what, sizeof what, "%s %s %s%%: exact, no tree dead, nothing bypassed", topo, size,
             l == 1 ? "0.1" : "1");
    goal(what,
         f->local.ok && f->local.correct == 1 && f->local.deaths == 0 && f->local.bypass == 0);
    snprintf(what, sizeof what, "%s %s %s%%: >= 1.5x the ring", topo, size, l == 1 ? "0.1" : "1");
    goal(what, ratio >= 1.5);
    if (l == 1) {
        snprintf(what, sizeof what, "%s %s 0.1%%: >= 85%% of loss-free", topo, size);
        goal(what, of0 >= 0.85);
    }
}

static void fabrics_table(void)
{
    static const char *const all[] = {"star:32",  "leafspine:4,8,8",    "kary:8,2",
                                      "kary:4,3", "pgft:2;8,4;1,2;1,2", "rail:2,8,4,4"};
    const char *const *topos = g_fabric ? &g_fabric : all;
    int n = g_fabric ? 1 : (int)(sizeof all / sizeof all[0]);
    static const char *const sizes[] = {"16MiB", "64MiB"};
    static const char *const losses[] = {"0", "0.001", "0.01"};
    printf("fabrics: AllReduce, values, defaults; Arbor with local repair, with end-to-end "
           "retries, and the ring over IRN (derived timeouts, RACK-TLP)");
    if (g_seeds > 1)
        printf("; lossy rows: the mean over seeds 1..%d (lowest: Arbor's lowest; e2e: seed 1)",
               g_seeds);
    printf("\n  %-18s %-6s %-6s %10s %8s %7s %6s %5s %6s %10s %10s %7s\n", "fabric", "size", "loss",
           "Arbor Gb/s", "lowest", "of 0", "exact", "dead", "bypass", "e2e Gb/s", "ring Gb/s",
           "ratio");
    for (int t = 0; t < n; t++) {
        for (int z = 0; z < 2; z++) {
            double free_gbps = 0;
            for (int l = 0; l < 3; l++) {
                struct frow f = fabric_row(topos[t], sizes[z], losses[l]);
                double a = f.local.ok ? f.local.gbps : 0;
                if (l == 0) free_gbps = a;
                double of0 = free_gbps > 0 ? a / free_gbps : 0;
                double ratio = f.ring_gbps > 0 ? a / f.ring_gbps : 0;
                printf("  %-18s %-6s %-6s %10.3f %8.3f %7.3f %6s %5llu %6llu %10.3f %10.3f "
                       "%7.2f\n",
                       topos[t], sizes[z], losses[l], a, f.low, of0,
                       f.local.correct == 1 ? "yes" : "NO", (unsigned long long)f.local.deaths,
                       (unsigned long long)f.local.bypass, f.e2e.ok ? f.e2e.gbps : 0, f.ring_gbps,
                       ratio);
                fabric_goals(topos[t], sizes[z], l, &f, of0, ratio);
            }
        }
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_recovery [--quick | --fabrics [--seeds N] [--fabric SPEC]]\n"
               "The Arbor transport under loss and failure beside the ring over IRN, each\n"
               "row with its goal (docs/results.md); --quick: 8 MiB, no goals; --fabrics:\n"
               "the fabrics table alone, --seeds N its lossy rows over seeds 1..N.\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--fabrics") != 0 &&
        (strcmp(argv[1], "--quick") != 0 || argc > 2)) {
        int bad = strcmp(argv[1], "--quick") == 0 ? 2 : 1; /* --quick takes nothing after it */
        fprintf(stderr, "bench_recovery: unknown argument '%s'\n", argv[bad]);
        usage(stderr);
        return 2;
    }
    FILE *ring = fopen(RING_FILE, "r");
    if (!ring) {
        fprintf(stderr, "bench_recovery: %s: cannot open: %s (run from the repository root)\n",
                RING_FILE, strerror(errno));
        return 2;
    }
    fclose(ring);
    if (argc > 1 && strcmp(argv[1], "--fabrics") == 0) {
        for (int i = 2; i < argc; i += 2) {
            if (i + 1 >= argc) {
                fprintf(stderr, "bench_recovery: %s needs a value\n", argv[i]);
                return 2;
            } else if (strcmp(argv[i], "--seeds") == 0 && atoi(argv[i + 1]) >= 1) {
                g_seeds = atoi(argv[i + 1]);
            } else if (strcmp(argv[i], "--fabric") == 0) {
                g_fabric = argv[i + 1];
            } else {
                fprintf(stderr, "bench_recovery: --fabrics [--seeds N] [--fabric SPEC]\n");
                return 2;
            }
        }
        fabrics_table();
        printf("goals met: %d of %d\n", goals_met, goals);
        return 0;
    }
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    g_quick = quick;
    if (quick) {
        g_size = "8MiB";
        g_fail_at = "fabric.fail_at=250us switch:L2.0";
    }
    double arbor_at[4], ring_at[4];
    loss_table(arbor_at, ring_at);
    goal("0.01%: >= 95 Gb/s (64 MiB)", arbor_at[1] >= 95);
    goal("0.1%: >= 85 Gb/s (64 MiB)", arbor_at[2] >= 85);
    goal("1%: >= 1.5x the ring", arbor_at[3] >= 1.5 * ring_at[3]);
    int all = 1;
    for (int i = 0; i < 4; i++)
        all &= arbor_at[i] >= 1.5 * ring_at[i];
    goal(">= 1.5x the ring at every loss rate", all);
    six_table();
    trees_table();
    trees_loss_rows();
    printf("loss-free: the default AllReduce, header-only\n");
    const char *none[] = {NULL};
    struct outcome o = run(NULL, none);
    printf("  %-12s %12.3f Gb/s\n", g_size, o.gbps);
    if (!quick) {
        goal("64 MiB loss-free: 96.7 Gb/s within 0.5%", o.gbps >= 96.7 * 0.995);
        g_size = "1GiB";
        o = run(NULL, none);
        printf("  %-12s %12.3f Gb/s\n", g_size, o.gbps);
        goal("1 GiB loss-free: 98.1 Gb/s within 0.5%", o.gbps >= 98.1 * 0.995);
        fabrics_table();
    }
    if (!quick) printf("goals met: %d of %d\n", goals_met, goals);
    return 0;
}
