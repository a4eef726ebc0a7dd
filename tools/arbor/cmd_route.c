/*
 * arbor route: trace every flow of a traffic pattern hop by hop through a
 * routing engine and report the link loads (docs/routing.md); or the
 * balls-in-bins, rack and path-pinning models of docs/routing.md, "Collision figures, reproduced".
 */
#include "arbor/base.h"
#include "arbor/route.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char route_usage[] =
    "usage: arbor route --topo SPEC --routing NAME --traffic SPEC [OPTIONS]\n"
    "       arbor route --model bins --flows F --links L [--trials T] [--seed N] [--json]\n"
    "       arbor route --model rack --gpus G --qps Q --uplinks L [--routing NAME] [OPTIONS]\n"
    "       arbor route --model pinning --half K [--routing NAME] [OPTIONS]\n"
    "\n"
    "Trace every flow hop by hop through the routing engine and count, per\n"
    "directed link, flows and demand (in links of the host rate).\n"
    "\n"
    "-t, --topo SPEC     a fabric as for 'arbor topo' (kary:4,3, leafspine:2,8,16, ...)\n"
    "-r, --routing NAME  dmodk, smodk, rnca[:SEED], pinning, table[:PATH], updown,\n"
    "                 dmodc, ecmp[:polarized], eecmp[:polarized]\n"
    "-T, --traffic SPEC  shift:S, shift:all, perm:SEED, all2all, ring, bisect:SEED,\n"
    "                 file:PATH (CSV src,dst[,demand])\n"
    "--qps N          flows per pair, each 1/N of the demand (default 1)\n"
    "-n, --trials N   independent draws of switch seeds and source ports (default 1);\n"
    "                 a run past a second shows its progress on a terminal\n"
    "--seed N         the run's seed (default 1)\n"
    "-f, --fail LIST  failed links or switches, as for 'arbor topo' (repeatable)\n"
    "-j, --json       one JSON object on stdout\n"
    "-c, --csv FILE   per-link rows: port,node,peer,tier,role,flows,demand\n"
    "--plot FILE.png  per-tier link loads drawn by gnuplot\n"
    "\n"
    "Models (docs/routing.md, \"Collision figures, reproduced\"):\n"
    "  bins     F flows on L bins: p_no_collision (closed form) and expected_busiest\n"
    "           (Monte Carlo, --trials, default 10000; refused above 10^9 trials x\n"
    "           (flows + links), about 10 s)\n"
    "  rack     G hosts on leaf 0 of leafspine:2,G,L each send one link of demand\n"
    "           over Q flows to the host above them on leaf 1 (default ecmp,\n"
    "           --trials default 2000); reports the busiest uplink and the slowdown\n"
    "  pinning  leafspine:9,16,16: 16 GPUs on leaf 0 spread one link each over the\n"
    "           active GPUs of 8 racks, K of them half allocated (default pinning)\n"
    "\n"
    "-m, --model NAME  one of the models above. Options take '--opt value' or\n"
    "'--opt=value' and may be abbreviated.\n"
    "\n"
    "Bad options exit with status 2 and one line naming the field; --plot without\n"
    "gnuplot exits with status 1.\n";

#define MAX_FAILS 64
/* --model bins: the most trials x (flows + links) it runs (about 10 s). */
#define BINS_MAX_WORK 1e9

struct opts {
    const char *topo, *routing, *traffic, *model, *csv, *plot;
    const char *fails[MAX_FAILS];
    int n_fails, json;
    uint64_t qps, trials, seed, flows, links, gpus, uplinks, half;
    int has_trials, has_qps, has_flows, has_links, has_gpus, has_uplinks, has_half;
};

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static int num_opt(const char *name, const char *val, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (cli_parse_u64(val, hi, out) < 0 || *out < lo)
        return cli_error("route", "%s: '%s' is not a number in %llu..%llu", name, val,
                         (unsigned long long)lo, (unsigned long long)hi);
    return 0;
}

enum { OPT_PLOT = 256, OPT_QPS, OPT_SEED, OPT_FLOWS, OPT_LINKS, OPT_GPUS, OPT_UPLINKS, OPT_HALF };

static int parse(int argc, char **argv, struct opts *o, int *help)
{
    static const struct option lopts[] = {{"topo", required_argument, NULL, 't'},
                                          {"routing", required_argument, NULL, 'r'},
                                          {"traffic", required_argument, NULL, 'T'},
                                          {"model", required_argument, NULL, 'm'},
                                          {"csv", required_argument, NULL, 'c'},
                                          {"plot", required_argument, NULL, OPT_PLOT},
                                          {"fail", required_argument, NULL, 'f'},
                                          {"qps", required_argument, NULL, OPT_QPS},
                                          {"trials", required_argument, NULL, 'n'},
                                          {"seed", required_argument, NULL, OPT_SEED},
                                          {"flows", required_argument, NULL, OPT_FLOWS},
                                          {"links", required_argument, NULL, OPT_LINKS},
                                          {"gpus", required_argument, NULL, OPT_GPUS},
                                          {"uplinks", required_argument, NULL, OPT_UPLINKS},
                                          {"half", required_argument, NULL, OPT_HALF},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->qps = 1;
    o->trials = 1;
    o->seed = 1;
    *help = 0;
    cli_getopt_start(lopts);
    int c, idx;
    while ((c = getopt_long(argc, argv, ":t:r:T:m:c:f:n:jh", lopts, &idx)) != -1) {
        const char *v = optarg;
        int rc = 0;
        switch (c) {
        case 'h':
            *help = 1;
            return 0;
        case 'j':
            o->json = 1;
            break;
        case 't':
            o->topo = v;
            break;
        case 'r':
            o->routing = v;
            break;
        case 'T':
            o->traffic = v;
            break;
        case 'm':
            o->model = v;
            break;
        case 'c':
            o->csv = v;
            break;
        case OPT_PLOT:
            o->plot = v;
            break;
        case 'f':
            if (o->n_fails >= MAX_FAILS)
                return cli_error("route", "too many --fail options (join lists with commas)");
            o->fails[o->n_fails++] = v;
            break;
        case OPT_QPS:
            rc = num_opt("--qps", v, 1, 255, &o->qps);
            o->has_qps = 1;
            break;
        case 'n':
            rc = num_opt("--trials", v, 1, 100000000, &o->trials);
            o->has_trials = 1;
            break;
        case OPT_SEED:
            rc = num_opt("--seed", v, 0, UINT64_MAX, &o->seed);
            break;
        case OPT_FLOWS:
            rc = num_opt("--flows", v, 0, 1000000000, &o->flows);
            o->has_flows = 1;
            break;
        case OPT_LINKS:
            rc = num_opt("--links", v, 1, 1u << 24, &o->links);
            o->has_links = 1;
            break;
        case OPT_GPUS:
            rc = num_opt("--gpus", v, 1, 4096, &o->gpus);
            o->has_gpus = 1;
            break;
        case OPT_UPLINKS:
            rc = num_opt("--uplinks", v, 1, 4096, &o->uplinks);
            o->has_uplinks = 1;
            break;
        case OPT_HALF:
            rc = num_opt("--half", v, 0, 8, &o->half);
            o->has_half = 1;
            break;
        default:
            return cli_bad_option("route", c, argv);
        }
        if (rc) return rc;
    }
    if (optind < argc) return cli_error("route", "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Flow sources                                                         */
/* ------------------------------------------------------------------ */

enum source_kind { SRC_TRAFFIC, SRC_RACK, SRC_PINNING };

struct source {
    enum source_kind kind;
    arb_traffic *traffic;
    uint32_t gpus, qps, half;
};

static uint32_t source_phases(const struct source *s)
{
    return s->kind == SRC_TRAFFIC ? arb_traffic_phases(s->traffic) : 1;
}

static size_t source_max_flows(const struct source *s)
{
    if (s->kind == SRC_TRAFFIC) return arb_traffic_max_flows(s->traffic);
    if (s->kind == SRC_RACK) return (size_t)s->gpus * s->qps;
    return (size_t)16 * 8 * 16;
}

static arb_flow model_flow(uint32_t src, uint32_t dst, double demand, arb_rng *rng)
{
    arb_flow f;
    memset(&f, 0, sizeof f);
    f.src = src;
    f.dst = dst;
    f.sport = (uint16_t)(49152 + arb_rng_below(rng, 16384));
    f.qp = (uint32_t)(arb_rng_next(rng) >> 40);
    f.dport = ARB_ROCE_UDP_PORT;
    f.proto = ARB_IPPROTO_UDP;
    f.demand = demand;
    return f;
}

/* The flows of one phase: the traffic module's, or a model's (docs/routing.md). */
static long source_phase(const struct source *s, uint32_t phase, arb_rng *rng, arb_flow *out,
                         size_t cap)
{
    if (s->kind == SRC_TRAFFIC) return arb_traffic_phase(s->traffic, phase, rng, out, cap);
    size_t n = 0;
    if (s->kind == SRC_RACK) {
        for (uint32_t g = 0; g < s->gpus; g++)
            for (uint32_t q = 0; q < s->qps; q++) {
                out[n] = model_flow(g, s->gpus + g, 1.0 / s->qps, rng);
                out[n++].qp_index = (uint8_t)q;
            }
        return (long)n;
    }
    /* pinning: racks 1..8 of 16 GPUs; racks 1..half have slices 0..7 only */
    uint32_t active = 8 * (16 - s->half);
    for (uint32_t g = 0; g < 16; g++)
        for (uint32_t rk = 1; rk <= 8; rk++)
            for (uint32_t sl = 0; sl < (rk <= s->half ? 8u : 16u); sl++)
                out[n++] = model_flow(g, rk * 16 + sl, 1.0 / active, rng);
    return (long)n;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

#define N_FIG 6
static const char *const fig_name[N_FIG] = {"max_link_load",        "max_link_demand",
                                            "fabric_max_link_load", "fabric_max_link_demand",
                                            "host_max_link_load",   "host_max_link_demand"};

struct result {
    uint64_t trials;
    double mean[N_FIG], min[N_FIG], max[N_FIG];
    double mean_load, flows, unroutable, p_no_collision;
    uint64_t *hist;
    uint32_t hist_len;
    /* models: leaf 0's uplinks */
    int uplinks;
    double up_flows, up_demand, up_none, up_idle;
};

static int run(const arb_topo *t, arb_route *r, const struct source *src, const struct opts *o,
               uint64_t trials, arb_route_load *l, struct result *res)
{
    memset(res, 0, sizeof *res);
    res->trials = trials;
    size_t cap = source_max_flows(src);
    arb_flow *flows = malloc((cap ? cap : 1) * sizeof *flows);
    if (!flows) return -1;
    arb_rng master;
    arb_rng_seed(&master, o->seed);
    uint32_t phases = source_phases(src);
    const arb_node *leaf = arb_topo_node(t, arb_topo_node_id(t, 1, 0));
    /* a run longer than a second shows its trials on a terminal's stderr */
    int tty = isatty(STDERR_FILENO), drawn = 0;
    double last_draw = 0;
    struct timespec t0, tn;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t tr = 0; tr < trials; tr++) {
        if (tty && (tr & 63) == 0 && tr) {
            clock_gettime(CLOCK_MONOTONIC, &tn);
            double el = (double)(tn.tv_sec - t0.tv_sec) + (double)(tn.tv_nsec - t0.tv_nsec) / 1e9;
            if (el >= 1.0 && el - last_draw >= 0.25) {
                last_draw = el;
                fprintf(stderr, "\rtrial %llu of %llu, about %.0f s left ", (unsigned long long)tr,
                        (unsigned long long)trials, el * (double)(trials - tr) / (double)tr);
                drawn = 1;
            }
        }
        arb_rng rng;
        arb_rng_split(&master, tr, &rng);
        arb_route_reseed(r, arb_rng_next(&rng));
        arb_route_load_reset(l);
        for (uint32_t ph = 0; ph < phases; ph++) {
            long n = source_phase(src, ph, &rng, flows, cap);
            if (n < 0 || arb_route_load_phase(l, r, flows, (size_t)n) < 0) {
                free(flows);
                return -1;
            }
        }
        arb_route_stats st;
        arb_route_load_stats(l, &st);
        double fig[N_FIG] = {st.max_load,          st.max_demand,    st.fabric_max_load,
                             st.fabric_max_demand, st.host_max_load, st.host_max_demand};
        for (int i = 0; i < N_FIG; i++) {
            res->mean[i] += fig[i];
            if (tr == 0 || fig[i] < res->min[i]) res->min[i] = fig[i];
            if (tr == 0 || fig[i] > res->max[i]) res->max[i] = fig[i];
        }
        res->mean_load += st.mean_load;
        res->flows += (double)st.flows;
        res->unroutable += (double)st.unroutable;
        res->p_no_collision += st.fabric_max_load <= 1;
        if (st.hist_len > res->hist_len) {
            uint64_t *nh = realloc(res->hist, st.hist_len * sizeof *nh);
            if (!nh) {
                free(flows);
                return -1;
            }
            memset(nh + res->hist_len, 0, (st.hist_len - res->hist_len) * sizeof *nh);
            res->hist = nh;
            res->hist_len = st.hist_len;
        }
        for (uint32_t k = 0; k < st.hist_len; k++)
            res->hist[k] += st.hist[k];
        if (src->kind != SRC_TRAFFIC && leaf) {
            const uint32_t *mf = arb_route_load_max_flows(l);
            const double *md = arb_route_load_max_demand(l);
            uint32_t bf = 0;
            double bd = 0;
            int idle = 0;
            for (unsigned q = 0; q < leaf->n_up; q++) {
                uint32_t p = leaf->first_up + q;
                if (mf[p] > bf) bf = mf[p];
                if (md[p] > bd) bd = md[p];
                idle += mf[p] == 0;
            }
            res->uplinks = leaf->n_up;
            res->up_flows += bf;
            res->up_demand += bd;
            res->up_none += bf <= 1;
            res->up_idle += idle;
        }
    }
    if (drawn) fprintf(stderr, "\r%*s\r", 60, "");
    /* sums to means once, so a figure every trial shares prints exactly */
    double n = (double)trials;
    for (int i = 0; i < N_FIG; i++)
        res->mean[i] /= n;
    res->mean_load /= n;
    res->flows /= n;
    res->unroutable /= n;
    res->p_no_collision /= n;
    res->up_flows /= n;
    res->up_demand /= n;
    res->up_none /= n;
    res->up_idle /= n;
    free(flows);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

static double slowdown(const struct result *res)
{
    return res->up_demand > 1.0 ? res->up_demand : 1.0;
}

static void print_json(const arb_topo *t, const arb_route *r, const char *traffic,
                       const struct opts *o, uint32_t phases, const struct result *res,
                       const char *model)
{
    cJSON *j = cJSON_CreateObject();
    cli_json_head(j, CLI_SCHEMA_ROUTE);
    if (model) cJSON_AddStringToObject(j, "model", model);
    cJSON_AddStringToObject(j, "topo", arb_topo_spec(t));
    cJSON_AddNumberToObject(j, "hosts", arb_topo_n_hosts(t));
    cJSON_AddStringToObject(j, "routing", arb_route_spec(r));
    cJSON_AddStringToObject(j, "traffic", traffic);
    cJSON_AddNumberToObject(j, "qps", (double)o->qps);
    cJSON_AddNumberToObject(j, "phases", phases);
    cli_json_real(j, "flows", res->flows);
    cli_json_real(j, "unroutable", res->unroutable);
    cli_json_real(j, "max_link_load", res->mean[0]);
    cli_json_real(j, "max_link_demand", res->mean[1]);
    cli_json_real(j, "mean_link_load", res->mean_load);
    cJSON *f = cJSON_AddObjectToObject(j, "fabric");
    cli_json_real(f, "max_link_load", res->mean[2]);
    cli_json_real(f, "max_link_demand", res->mean[3]);
    cJSON *h = cJSON_AddObjectToObject(j, "host");
    cli_json_real(h, "max_link_load", res->mean[4]);
    cli_json_real(h, "max_link_demand", res->mean[5]);
    cJSON *hist = cJSON_AddArrayToObject(j, "histogram");
    for (uint32_t k = 0; k < res->hist_len; k++)
        cJSON_AddItemToArray(hist, cJSON_CreateNumber((double)res->hist[k]));
    cJSON *tr = cJSON_AddObjectToObject(j, "trials");
    cJSON_AddNumberToObject(tr, "n", (double)res->trials);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    cJSON_AddRawToObject(tr, "seed", seed);
    cli_json_real(tr, "p_no_collision", res->p_no_collision);
    cJSON *mn = cJSON_AddObjectToObject(tr, "min");
    cJSON *mx = cJSON_AddObjectToObject(tr, "max");
    for (int i = 0; i < N_FIG; i++) {
        cli_json_real(mn, fig_name[i], res->min[i]);
        cli_json_real(mx, fig_name[i], res->max[i]);
    }
    if (res->uplinks) {
        cJSON *u = cJSON_AddObjectToObject(j, "uplinks");
        cJSON_AddNumberToObject(u, "n", res->uplinks);
        cli_json_real(u, "busiest_flows", res->up_flows);
        cli_json_real(u, "busiest_demand", res->up_demand);
        cli_json_real(u, "slowdown", slowdown(res));
        cli_json_real(u, "p_no_collision", res->up_none);
        cli_json_real(u, "idle", res->up_idle);
    }
    char *s = cJSON_PrintUnformatted(j);
    if (s) puts(s);
    free(s);
    cJSON_Delete(j);
}

static void print_text(const arb_topo *t, const arb_route *r, const char *traffic,
                       const struct opts *o, uint32_t phases, const struct result *res)
{
    printf("topo             %s (%u hosts)\n", arb_topo_spec(t), arb_topo_n_hosts(t));
    printf("routing          %s\n", arb_route_spec(r));
    printf("traffic          %s, %u phase%s, qps %llu\n", traffic, phases, phases == 1 ? "" : "s",
           (unsigned long long)o->qps);
    printf("trials           %llu (seed %llu)\n", (unsigned long long)res->trials,
           (unsigned long long)o->seed);
    printf("flows            %g (%g unroutable)\n", res->flows, res->unroutable);
    printf("%-22s %10s %10s %10s\n", "", "mean", "min", "max");
    for (int i = 0; i < N_FIG; i++)
        printf("%-22s %10.4g %10.4g %10.4g\n", fig_name[i], res->mean[i], res->min[i], res->max[i]);
    printf("mean_link_load   %.4g\n", res->mean_load);
    if (res->trials > 1) printf("p_no_collision   %.4g (fabric, per trial)\n", res->p_no_collision);
    printf("histogram       ");
    for (uint32_t k = 0; k < res->hist_len; k++)
        printf(" %u:%llu", k, (unsigned long long)res->hist[k]);
    printf("\n");
    if (res->uplinks) {
        printf("uplinks          %d of leaf L1.0\n", res->uplinks);
        printf("busiest_flows    %.4g\n", res->up_flows);
        printf("busiest_demand   %.4g links\n", res->up_demand);
        printf("slowdown         %.4g\n", slowdown(res));
        printf("p_no_collision   %.4g (leaf uplinks)\n", res->up_none);
        printf("idle_uplinks     %.4g\n", res->up_idle);
    }
}

/* f: the --csv file, opened before the run (main). */
static int write_csv(const arb_topo *t, const arb_route_load *l, FILE *f, const char *path)
{
    fprintf(f, "port,node,peer,tier,role,flows,demand\n");
    const uint32_t *mf = arb_route_load_max_flows(l);
    const double *md = arb_route_load_max_demand(l);
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++) {
        const arb_port *pt = arb_topo_port(t, p);
        if (pt->failed) continue;
        char a[32], b[32];
        arb_topo_node_name(t, arb_topo_port_owner(t, p), a, sizeof a);
        arb_topo_node_name(t, pt->peer, b, sizeof b);
        fprintf(f, "%u,%s,%s,%u,%s,%u,%.6g\n", p, a, b, pt->tier,
                pt->role == ARB_LINK_UP ? "up" : "down", mf[p], md[p]);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "arbor route: --csv %s: write failed\n", path);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* gnuplot on PATH, found the way execvp would. */
static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    while (*path) {
        const char *c = strchr(path, ':');
        size_t n = c ? (size_t)(c - path) : strlen(path);
        if (n && n + 9 < sizeof buf) {
            memcpy(buf, path, n);
            memcpy(buf + n, "/gnuplot", 9);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

static int write_plot(const arb_topo *t, const arb_route *r, const char *traffic,
                      const arb_route_load *l, const char *png)
{
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "arbor route: --plot: cannot start gnuplot\n");
        return CLI_EXIT_FAIL;
    }
    const uint32_t *mf = arb_route_load_max_flows(l);
    unsigned h = arb_topo_height(t);
    int series = 0;
    /* one data block per (tier, direction): the flows of each live link in port order */
    for (unsigned tier = 0; tier < h; tier++)
        for (int role = 1; role >= 0; role--) {
            fprintf(g, "$d%u%d << EOD\n", tier, role);
            uint32_t x = 0;
            for (uint32_t p = 0; p < arb_topo_n_ports(t); p++) {
                const arb_port *pt = arb_topo_port(t, p);
                if (pt->tier != tier || pt->role != role || pt->failed) continue;
                fprintf(g, "%u %u\n", x++, mf[p]);
            }
            if (x == 0) fprintf(g, "0 0\n");
            fprintf(g, "EOD\n");
            series++;
        }
    fprintf(g, "set terminal pngcairo size 1000,%u\nset output '%s'\n", 220 + 260 * h, png);
    fprintf(g,
            "set multiplot layout %u,1 title \"%s, %s, %s: flows per directed link (max over "
            "phases)\" noenhanced\n",
            h, arb_topo_spec(t), arb_route_spec(r), traffic);
    fprintf(g, "set ylabel 'flows'\nset key outside right\nset yrange [0:*]\nset offsets 0.5, 0.5, "
               "0.5, 0\n");
    for (unsigned tier = h; tier-- > 0;) {
        const char *lo = arb_topo_level_name(t, tier), *hi = arb_topo_level_name(t, tier + 1);
        fprintf(g, "set xlabel 'link of tier %u (port order)'\n", tier);
        fprintf(g,
                "plot $d%u1 using 1:2 with impulses lw 3 title \"up %s->%s\" noenhanced, "
                "$d%u0 using 1:2 with points pt 7 title \"down %s->%s\" noenhanced\n",
                tier, lo, hi, tier, hi, lo);
    }
    fprintf(g, "unset multiplot");
    fprintf(g, "\n");
    int st = pclose(g);
    if (st != 0) {
        fprintf(stderr, "arbor route: --plot: gnuplot failed (status %d)\n", st);
        return CLI_EXIT_FAIL;
    }
    (void)series;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Modes                                                                */
/* ------------------------------------------------------------------ */

static int model_bins(const struct opts *o)
{
    if (!o->has_flows) return cli_error("route", "--model bins needs --flows F");
    if (!o->has_links) return cli_error("route", "--model bins needs --links L");
    uint64_t trials = o->has_trials ? o->trials : 10000;
    /* Each trial draws every flow and clears every bin: refuse what would
     * run for more than a few seconds (about 10^8 of these a second). */
    double work = (double)trials * ((double)o->flows + (double)o->links);
    if (work > BINS_MAX_WORK)
        return cli_error("route",
                         "--model bins: %.3g draws and bin clears (trials x (flows + links)), "
                         "about %.2g s; the limit is %.0g: lower --trials, --flows or --links",
                         work, work / 1e8, BINS_MAX_WORK);
    arb_rng rng;
    arb_rng_seed(&rng, o->seed);
    double busiest = 0, none = 0;
    if (arb_route_bins_busiest(o->flows, o->links, trials, &rng, &busiest, &none) < 0) {
        fprintf(stderr, "arbor route: --model bins: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    double p = arb_route_bins_p_no_collision(o->flows, o->links);
    if (o->json) {
        char fp[64], fn[64], fb[64], fm[64];
        cli_fmt_real(fp, sizeof fp, p);
        cli_fmt_real(fn, sizeof fn, none);
        cli_fmt_real(fb, sizeof fb, busiest);
        cli_fmt_real(fm, sizeof fm, (double)o->flows / (double)o->links);
        printf("{\"schema\":\"%s\",\"version\":\"%s\",\"model\":\"bins\",\"flows\":%llu,"
               "\"links\":%llu,\"trials\":%llu,\"seed\":%llu,\"p_no_collision\":%s,"
               "\"p_no_collision_simulated\":%s,\"expected_busiest\":%s,\"mean_load\":%s}\n",
               CLI_SCHEMA_ROUTE_BINS, arb_version(), (unsigned long long)o->flows,
               (unsigned long long)o->links, (unsigned long long)trials,
               (unsigned long long)o->seed, fp, fn, fb, fm);
    } else {
        printf("flows             %llu\nlinks             %llu\ntrials            %llu\n",
               (unsigned long long)o->flows, (unsigned long long)o->links,
               (unsigned long long)trials);
        printf("p_no_collision    %.6g (closed form; simulated %.4g)\n", p, none);
        printf("expected_busiest  %.4g (mean load %.4g)\n", busiest,
               (double)o->flows / (double)o->links);
    }
    return 0;
}

/* Build the fabric and apply the failures; prints its own error. */
static int build_topo(const char *spec, const struct opts *o, arb_topo **t)
{
    char err[512];
    int rc = arb_topo_new(t, spec, NULL, err, sizeof err);
    if (rc == ARB_ENOMEM) {
        fprintf(stderr, "arbor route: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    if (rc < 0) return cli_error("route", "--topo: %s", err);
    for (int i = 0; i < o->n_fails; i++) {
        rc = arb_topo_fail(*t, o->fails[i], err, sizeof err);
        if (rc < 0) {
            arb_topo_free(*t);
            *t = NULL;
            return cli_error("route", "--fail: %s", err);
        }
    }
    return 0;
}

/* What a run routes: the fabric, the traffic's name, the routing and the
 * trials, from --model or from the options. */
struct route_plan {
    const char *topo, *traffic, *routing;
    uint64_t trials;
    char topo_spec[64];
};

/* --model rack or pinning: its fabric and traffic into src and p; 0 or
 * an exit status. */
static int model_source(const struct opts *o, struct source *src, struct route_plan *p)
{
    if (o->topo || o->traffic)
        return cli_error("route", "--model %s builds its own --topo and --traffic", o->model);
    if (!o->has_trials) p->trials = 2000;
    if (strcmp(o->model, "rack") == 0) {
        if (!o->has_gpus) return cli_error("route", "--model rack needs --gpus G");
        if (!o->has_uplinks) return cli_error("route", "--model rack needs --uplinks L");
        src->kind = SRC_RACK;
        src->gpus = (uint32_t)o->gpus;
        src->qps = (uint32_t)o->qps;
        snprintf(p->topo_spec, sizeof p->topo_spec, "leafspine:2,%u,%u", src->gpus,
                 (unsigned)o->uplinks);
        p->traffic = "rack";
        if (!p->routing) p->routing = "ecmp";
    } else if (strcmp(o->model, "pinning") == 0) {
        if (!o->has_half) return cli_error("route", "--model pinning needs --half K (0..8)");
        if (o->has_qps) return cli_error("route", "--model pinning has one flow per pair");
        src->kind = SRC_PINNING;
        src->half = (uint32_t)o->half;
        snprintf(p->topo_spec, sizeof p->topo_spec, "leafspine:9,16,16");
        p->traffic = "pinning";
        if (!p->routing) p->routing = "pinning";
    } else {
        return cli_error("route", "--model: unknown model '%s' (bins, rack, pinning)", o->model);
    }
    p->topo = p->topo_spec;
    return 0;
}

/* The fabric, routing and traffic of the options (--model's, or --topo,
 * --routing, --traffic): 0 or an exit status. */
static int plan_of(const struct opts *o, struct source *src, struct route_plan *p)
{
    p->topo = o->topo;
    p->traffic = o->traffic;
    p->routing = o->routing;
    p->trials = o->trials;
    if (o->model) return model_source(o, src, p);
    if (!o->topo) return cli_error("route", "missing --topo SPEC; see 'arbor route --help'");
    if (!o->routing) return cli_error("route", "missing --routing NAME");
    if (!o->traffic) return cli_error("route", "missing --traffic SPEC");
    return 0;
}

/* An error of the library: out of memory is a failure (1), the rest the
 * option's (2). */
static int lib_error(int rc, const char *option, const char *err)
{
    if (rc == ARB_ENOMEM) {
        fprintf(stderr, "arbor route: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    /* the library's message may start with the option's own name
     * ("routing: ..."): said once */
    size_t n = strlen(option + 2);
    if (strncmp(err, option + 2, n) == 0 && strncmp(err + n, ": ", 2) == 0) err += n + 2;
    return cli_error("route", "%s: %s", option, err);
}

/* The engines arbor route takes: the static ones (adaptive chooses as
 * packets flow, in the simulator). */
#define ROUTE_ENGINES                                                                              \
    "dmodk, smodk, rnca[:SEED], pinning, table[:PATH], updown, dmodc, ecmp[:polarized], "          \
    "eecmp[:polarized]"

/* --routing's engine name (before any ':') checked against those route
 * takes: 0 or an exit status. */
static int check_engine(const char *spec)
{
    size_t n = strcspn(spec, ":");
    int kind = -1;
    for (int i = 0; i < ARB_ROUTE_KIND_COUNT; i++) {
        const char *name = arb_route_kind_name(i);
        if (name && strlen(name) == n && strncmp(spec, name, n) == 0) kind = i;
    }
    if (kind == ARB_ROUTE_ADAPTIVE)
        return cli_error("route",
                         "--routing: adaptive chooses as packets flow: the simulator's (routing = "
                         "adaptive in a scenario); route takes " ROUTE_ENGINES);
    if (kind < 0)
        return cli_error("route", "--routing: unknown engine '%.*s' (" ROUTE_ENGINES ")", (int)n,
                         spec);
    return 0;
}

/* The traffic source on fabric t: --traffic's generator, or the model's
 * check. 0 or an exit status. */
static int open_traffic(const struct opts *o, const arb_topo *t, struct source *src,
                        struct route_plan *p)
{
    char err[512];
    if (src->kind == SRC_TRAFFIC) {
        arb_traffic_config tc;
        arb_traffic_config_default(&tc);
        tc.qps = (uint32_t)o->qps;
        int rc =
            arb_traffic_new(&src->traffic, o->traffic, arb_topo_n_hosts(t), &tc, err, sizeof err);
        if (rc < 0) return lib_error(rc, "--traffic", err);
        p->traffic = arb_traffic_spec(src->traffic);
    } else if (src->kind == SRC_RACK && arb_topo_n_hosts(t) < 2) {
        return cli_error("route", "--gpus: too few hosts");
    }
    return 0;
}

/* The trials, the report and the files (--csv opened as csv_f, --plot). */
static int route_and_report(const arb_topo *t, arb_route *r, const struct source *src,
                            const struct opts *o, const struct route_plan *p, FILE *csv_f)
{
    arb_route_load *l = NULL;
    struct result res;
    memset(&res, 0, sizeof res);
    int out = CLI_EXIT_OK;
    if (arb_route_load_new(&l, t) < 0 || run(t, r, src, o, p->trials, l, &res) < 0) {
        fprintf(stderr, "arbor route: out of memory\n");
        out = CLI_EXIT_FAIL;
    } else {
        if (o->json)
            print_json(t, r, p->traffic, o, source_phases(src), &res, o->model);
        else
            print_text(t, r, p->traffic, o, source_phases(src), &res);
        if (o->csv) {
            out = write_csv(t, l, csv_f, o->csv);
            csv_f = NULL;
        }
        if (out == CLI_EXIT_OK && o->plot) out = write_plot(t, r, p->traffic, l, o->plot);
    }
    if (csv_f) fclose(csv_f); /* the run failed before writing it */
    free(res.hist);
    arb_route_load_free(l);
    return out;
}

int cmd_route(int argc, char **argv)
{
    struct opts o;
    int help;
    int rc = parse(argc, argv, &o, &help);
    if (rc) return rc;
    if (help) {
        fputs(route_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (o.plot && !have_gnuplot()) {
        fprintf(stderr, "arbor route: --plot needs gnuplot (Debian package gnuplot-nox), "
                        "not found on PATH\n");
        return CLI_EXIT_FAIL;
    }
    if (o.plot && (strchr(o.plot, '\'') || strchr(o.plot, '"') || strchr(o.plot, '\n')))
        return cli_error("route", "--plot: a file name with a quote or newline");
    if (o.model && strcmp(o.model, "bins") == 0) return model_bins(&o);
    struct source src;
    memset(&src, 0, sizeof src);
    struct route_plan p;
    if ((rc = plan_of(&o, &src, &p)) != 0) return rc;
    if ((rc = check_engine(p.routing)) != 0) return rc;
    arb_topo *t = NULL;
    rc = build_topo(p.topo, &o, &t);
    if (rc) return rc;
    char err[512];
    arb_route *r = NULL;
    rc = arb_route_new(&r, t, p.routing, NULL, err, sizeof err);
    if (rc < 0) {
        arb_topo_free(t);
        return lib_error(rc, "--routing", err);
    }
    if (!arb_route_is_hashed(r) && !o.has_trials) p.trials = 1;
    /* the output file before the work, so that a bad path costs nothing */
    FILE *csv_f = NULL;
    if ((rc = open_traffic(&o, t, &src, &p)) == 0 && o.csv && !(csv_f = fopen(o.csv, "w")))
        rc = cli_error("route", "--csv: cannot write %s: %s", o.csv, strerror(errno));
    if (rc == 0) rc = route_and_report(t, r, &src, &o, &p, csv_f);
    arb_traffic_free(src.traffic);
    arb_route_free(r);
    arb_topo_free(t);
    return rc;
}
