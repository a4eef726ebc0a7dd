/* arbor lab's records, figures and report (lab_run.h). */
#include "lab_run.h"

#include "arbor/topo.h"
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lab_read_rec(const char *path, struct rank_rec *rr, uint64_t max_calls)
{
    memset(rr, 0, sizeof *rr);
    rr->start = calloc(max_calls + 1, sizeof *rr->start);
    rr->end = calloc(max_calls + 1, sizeof *rr->end);
    FILE *f = fopen(path, "r");
    if (!f || !rr->start || !rr->end) {
        if (f) fclose(f);
        return -1;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long sz, a, b;
        if (sscanf(line, "call %llu %llu %llu", &sz, &a, &b) == 3 && rr->n_calls < max_calls) {
            rr->start[rr->n_calls] = a;
            rr->end[rr->n_calls++] = b;
        } else if (strncmp(line, "wrong ", 6) == 0) {
            rr->wrong = strtoull(line + 6, NULL, 10);
        } else if (strncmp(line, "stats ", 6) == 0) {
            static const char *const names[] = {
                "retries=", "spurious=", "credits=",  "repair_credits=", "tx_pkts=",
                "rx_pkts=", "tx_bytes=", "rx_bytes=", "window="};
            uint64_t *dst[] = {&rr->retries,        &rr->spurious, &rr->credits,
                               &rr->repair_credits, &rr->tx_pkts,  &rr->rx_pkts,
                               &rr->tx_bytes,       &rr->rx_bytes, &rr->window};
            for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
                const char *p = strstr(line, names[k]);
                /* a name that is the tail of another (credits= in
                 * repair_credits=) must start a word */
                while (p && p > line && p[-1] != ' ')
                    p = strstr(p + 1, names[k]);
                if (p) *dst[k] = strtoull(p + strlen(names[k]), NULL, 10);
            }
        } else if (strncmp(line, "status ", 7) == 0) {
            rr->have_end = 1;
            snprintf(rr->status, sizeof rr->status, "%s", line + 7);
            rr->status[strcspn(rr->status, "\n")] = 0;
        }
    }
    fclose(f);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Call i's CCT: the last rank's return minus the first rank's start (one
 * clock: CLOCK_MONOTONIC is the machine's, in every namespace). */
void lab_figures(const struct rank_rec *rr, uint32_t n, const struct lab_job *j, struct lab_figs *F)
{
    uint32_t calls = UINT32_MAX, windows = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (rr[r].window) {
            F->window_mean += (double)rr[r].window;
            windows++;
        }
        if (rr[r].n_calls < calls) calls = rr[r].n_calls;
        F->retries += rr[r].retries;
        F->spurious += rr[r].spurious;
        F->credits += rr[r].credits;
        F->repair_credits += rr[r].repair_credits;
        if (rr[r].wrong > F->wrong) F->wrong = rr[r].wrong;
    }
    if (windows) F->window_mean /= windows;
    F->n_calls = calls;
    F->calls = calloc(calls + 1, sizeof *F->calls);
    F->done = calloc(n, sizeof *F->done);
    if (!F->calls || !F->done || !calls) return;
    for (uint32_t i = 0; i < calls; i++) {
        uint64_t s = UINT64_MAX, e = 0;
        for (uint32_t r = 0; r < n; r++) {
            if (rr[r].start[i] < s) s = rr[r].start[i];
            if (rr[r].end[i] > e) e = rr[r].end[i];
        }
        F->calls[i] = (double)(e - s) / 1e3;
        F->cct_mean += F->calls[i] / calls;
        for (uint32_t r = 0; r < n; r++)
            F->done[r] += (double)(rr[r].end[i] - s) / 1e3 / calls;
    }
    double *sorted = malloc(calls * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, F->calls, calls * sizeof *sorted);
    qsort(sorted, calls, sizeof *sorted, cmp_double);
    F->cct_min = sorted[0];
    F->cct_max = sorted[calls - 1];
    F->cct_p50 = calls % 2 ? sorted[calls / 2] : (sorted[calls / 2 - 1] + sorted[calls / 2]) / 2;
    free(sorted);
    F->goodput_gbps = F->cct_mean > 0 ? (double)j->bytes * 8 / (F->cct_mean * 1e3) : 0;
}

static void add_real(cJSON *o, const char *name, double v)
{
    cli_json_real(o, name, v);
}

/* Every scenario key as its text, by section ([lab] among them). */
static void scenario_json(cJSON *j, const arb_scenario *sc, const char *file)
{
    cJSON *s = cJSON_AddObjectToObject(j, "scenario");
    cJSON_AddStringToObject(s, "file", file);
    for (size_t i = 0; i < arb_scenario_n_keys(); i++) {
        arb_scenario_key_info ki;
        if (arb_scenario_key(i, &ki) < 0) continue;
        cJSON *sec = cJSON_GetObjectItemCaseSensitive(s, ki.section);
        if (!sec) sec = cJSON_AddObjectToObject(s, ki.section);
        const char *v = arb_scenario_get(sc, ki.section, ki.key);
        cJSON_AddStringToObject(sec, ki.key, v ? v : "");
    }
}

char *lab_report_json(const arb_scenario *sc, const char *file, const struct lab_opts *o,
                      const struct lab *L, const struct lab_job *j, const struct lab_figs *F,
                      const struct rank_rec *rr, const char *failure)
{
    const arb_topo *t = L->t;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cli_json_head(root, "arbor-lab/1");
    scenario_json(root, sc, file);
    cJSON *tp = cJSON_AddObjectToObject(root, "topology");
    cJSON_AddStringToObject(tp, "spec", arb_topo_spec(t));
    cJSON_AddNumberToObject(tp, "hosts", arb_topo_n_hosts(t));
    cJSON_AddNumberToObject(tp, "switches", arb_topo_n_nodes(t) - arb_topo_n_hosts(t));
    cJSON_AddNumberToObject(tp, "links", L->n_links);
    int done = !failure;
    cJSON_AddBoolToObject(root, "completed", done);
    cJSON_AddStringToObject(root, "status", done ? "done" : "failed");
    if (failure) cJSON_AddStringToObject(root, "failure", failure);
    if (done) {
        add_real(root, "goodput_gbps", F->goodput_gbps);
        add_real(root, "cct_us", F->cct_mean);
    } else {
        cJSON_AddNullToObject(root, "goodput_gbps");
        cJSON_AddNullToObject(root, "cct_us");
    }
    if (done && o->check)
        cJSON_AddBoolToObject(root, "correct", F->wrong == 0);
    else
        cJSON_AddNullToObject(root, "correct");
    cJSON_AddNumberToObject(root, "drops", (double)F->drops);
    cJSON *a = cJSON_AddObjectToObject(root, "arbor");
    cJSON_AddStringToObject(a, "collective", arb_coll_name(j->coll));
    cJSON_AddStringToObject(a, "mode", "values");
    cJSON_AddNumberToObject(a, "ranks", j->ranks);
    uint32_t ranks_done = 0;
    for (uint32_t r = 0; r < j->ranks; r++)
        ranks_done += rr[r].have_end && strcmp(rr[r].status, "ok") == 0;
    cJSON_AddNumberToObject(a, "ranks_done", ranks_done);
    cJSON_AddNumberToObject(a, "bytes", (double)j->bytes);
    cJSON_AddNumberToObject(a, "credits", (double)F->credits);
    cJSON_AddNumberToObject(a, "repair_credits", (double)F->repair_credits);
    cJSON_AddNumberToObject(a, "wrong", (double)F->wrong);
    cJSON *rec = cJSON_AddObjectToObject(a, "recovery");
    cJSON_AddNumberToObject(rec, "retries", (double)F->retries);
    cJSON_AddNumberToObject(rec, "spurious", (double)F->spurious);
    cJSON *cc = cJSON_AddObjectToObject(a, "cc");
    add_real(cc, "window_mean", F->window_mean);
    cJSON *lab = cJSON_AddObjectToObject(root, "lab");
    add_real(lab, "scale", j->scale);
    add_real(lab, "link_rate_gbps", (double)j->host_rate / 1e9);
    add_real(lab, "shaped_rate_gbps", (double)j->host_rate * j->scale / 1e9);
    cJSON_AddNumberToObject(lab, "mtu", LAB_MTU);
    cJSON_AddNumberToObject(lab, "calls", F->n_calls);
    cJSON_AddNumberToObject(lab, "warmup", (double)o->warmup);
    add_real(lab, "spin_us", (double)o->spin_ps / ARB_PS_PER_US);
    if (done) {
        cJSON *c = cJSON_AddObjectToObject(lab, "cct_us");
        add_real(c, "mean", F->cct_mean);
        add_real(c, "p50", F->cct_p50);
        add_real(c, "min", F->cct_min);
        add_real(c, "max", F->cct_max);
        cJSON *each = cJSON_AddArrayToObject(c, "each");
        for (uint32_t i = 0; i < F->n_calls && F->calls; i++)
            cJSON_AddItemToArray(each, cJSON_CreateNumber(round(F->calls[i] * 1e3) / 1e3));
        add_real(lab, "link_share", F->goodput_gbps / ((double)j->host_rate * j->scale / 1e9));
    }
    cJSON *ranks = cJSON_AddArrayToObject(root, "ranks");
    for (uint32_t r = 0; r < j->ranks; r++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddNumberToObject(e, "host", r);
        cJSON_AddStringToObject(e, "namespace", L->ns ? L->ns[r] : "");
        if (done && F->done)
            add_real(e, "done_us", F->done[r]);
        else
            cJSON_AddNullToObject(e, "done_us");
        cJSON_AddNumberToObject(e, "retries", (double)rr[r].retries);
        cJSON_AddNumberToObject(e, "spurious", (double)rr[r].spurious);
        cJSON_AddNumberToObject(e, "tx_pkts", (double)rr[r].tx_pkts);
        cJSON_AddNumberToObject(e, "rx_pkts", (double)rr[r].rx_pkts);
        cJSON_AddNumberToObject(e, "window", (double)rr[r].window);
        cJSON_AddItemToArray(ranks, e);
    }
    cJSON *host = cJSON_AddObjectToObject(root, "host");
    add_real(host, "wall_s", F->wall_s);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

void lab_report_text(const struct lab *L, const struct lab_job *j, const struct lab_opts *o,
                     const struct lab_figs *F)
{
    double shaped = (double)j->host_rate * j->scale / 1e9;
    printf("arbor lab: %s, %u ranks, %s %s of %llu B, %u calls after %llu warm-up\n",
           arb_topo_spec(L->t), j->ranks, arb_coll_name(j->coll), j->dtype,
           (unsigned long long)j->bytes, F->n_calls, (unsigned long long)o->warmup);
    printf("  links:   %.3g Gbit/s x scale %.6g = %.6g Gbit/s (tbf both ways), MTU %d, loss %g\n",
           (double)j->host_rate / 1e9, j->scale, shaped, LAB_MTU, j->loss);
    if (o->spin_ps || o->spin_auto)
        printf("  spin:    %g us before blocking (ranks and switches%s)\n",
               (double)o->spin_ps / ARB_PS_PER_US, o->spin_auto ? "; lab.spin = auto" : "");
    printf("  cct_us:  mean %.1f  p50 %.1f  min %.1f  max %.1f\n", F->cct_mean, F->cct_p50,
           F->cct_min, F->cct_max);
    printf("  goodput: %.3f Gbit/s (%.3f of the host link), algbw %.4f GB/s\n", F->goodput_gbps,
           F->goodput_gbps / shaped, F->goodput_gbps / 8);
    printf("  results: %s; retries %llu (spurious %llu), dropped by nftables %llu\n",
           !o->check  ? "not checked"
           : F->wrong ? "WRONG"
                      : "exact",
           (unsigned long long)F->retries, (unsigned long long)F->spurious,
           (unsigned long long)F->drops);
}

/* One CSV file PREFIX-SUFFIX.csv: opened for writing, or NULL with err. */
static FILE *csv_open(const char *prefix, const char *suffix, char *path, size_t plen, char *err,
                      size_t elen)
{
    snprintf(path, plen, "%s-%s.csv", prefix, suffix);
    FILE *f = fopen(path, "w");
    if (!f) snprintf(err, elen, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

/* Rank r of job 0 on host r: its mean done time from each call's first
 * start (empty without a finished run). */
static void ranks_csv(FILE *f, const struct lab_job *j, const struct lab_figs *F)
{
    fprintf(f, "job,rank,host,done_us\n");
    for (uint32_t r = 0; r < j->ranks; r++) {
        fprintf(f, "0,%u,%u,", r, r);
        if (F->done && F->n_calls) fprintf(f, "%.6f", F->done[r]);
        fprintf(f, "\n");
    }
}

int lab_report_csv(const char *prefix, const struct lab_job *j, const struct lab_figs *F,
                   const struct lab_sampler *S, int ranks, char *err, size_t elen)
{
    static const char *const suffix[] = {"util", "queue", "flows", "ranks"};
    for (int k = 0; k < 3 + (ranks != 0); k++) {
        char path[4096];
        FILE *f = csv_open(prefix, suffix[k], path, sizeof path, err, elen);
        if (!f) return -1;
        int rc = 0;
        if (k < 2)
            rc = lab_sample_csv(S, k == 0, f);
        else if (k == 2)
            fprintf(f, "id,src,dst,bytes,start_us,finish_us,fct_us,src_ip,dst_ip,proto,sport,"
                       "dport,qp,retx_bytes,ideal_us,slowdown,gave_up_us\n");
        else
            ranks_csv(f, j, F);
        int bad = rc < 0 || ferror(f);
        if (fclose(f) != 0 || bad) {
            snprintf(err, elen, "%s: cannot write", path);
            return -1;
        }
    }
    return 0;
}
