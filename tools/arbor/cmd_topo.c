/*
 * arbor topo describe | dot | ports: build a fabric from its spec and show
 * its counts, its drawing or one node's ports.
 */
#include "arbor/base.h"
#include "arbor/topo.h"
#include "cli.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Graphviz output is refused above this many nodes unless --force. */
#define DOT_MAX_NODES 512

static const char topo_usage[] =
    "usage: arbor topo describe SPEC [OPTIONS] [--json]\n"
    "       arbor topo dot SPEC [OPTIONS] [--force]\n"
    "       arbor topo ports SPEC NODE [OPTIONS]\n"
    "\n"
    "describe  counts per level (nodes, ports) and per link tier (links, parallel\n"
    "          links, rate, failures), the oversubscription of every switch level\n"
    "          and the shape: rlft (m_l p_l = w_{l+1} p_{l+1} everywhere), slimmed\n"
    "          or undersubscribed. --json prints one JSON object.\n"
    "dot       Graphviz (undirected graph, hosts at the bottom, failed links\n"
    "          dashed red). Refused above 512 nodes unless --force.\n"
    "ports     every port of one node (h12, L1.5): role, number, parallel link,\n"
    "          peer, rate, delay, failure.\n"
    "\n"
    "SPEC      star:N\n"
    "          leafspine:LEAVES,DOWN,UP[,UPRATE]\n"
    "          kary:K,N\n"
    "          pgft:H;m1,..,mH;w1,..,wH;p1,..,pH\n"
    "          dualplane:PAIRS,HOSTS,AGGS[,PODS,CORES]\n"
    "          rail:GROUPS,SERVERS,RAILS,SPINES\n"
    "          (docs/topology.md gives the wiring of each)\n"
    "\n"
    "OPTIONS   -f, --fail LIST fail links or switches; LIST is items separated by\n"
    "                          commas or blanks: switch:NAME, link:A-B[/K],\n"
    "                          up:NAME:Q, down:NAME:D, port:NAME:P (repeatable)\n"
    "          -r, --rate RATE host links (default 100G)\n"
    "          -u, --up-rate RATE  switch-to-switch links (default: --rate)\n"
    "          -d, --delay TIME    every link (default 1us)\n"
    "          -j, --json (describe), -F, --force (dot); '--opt=value' works too\n"
    "\n"
    "Names: hosts h<j>, switches L<level>.<index>. Bad specs or lists exit with\n"
    "status 2 and one line naming the field.\n";

struct topo_opts {
    const char *spec;
    const char *node; /* ports: the node name */
    int json, force;
    arb_topo_config cfg;
    const char *fails[64];
    int n_fails;
};

/* Parse the options shared by the subcommands; positional arguments fill spec then node. */
static int parse_opts(const char *cmd, int argc, char **argv, int want_node, struct topo_opts *o,
                      int *help)
{
    memset(o, 0, sizeof *o);
    o->cfg = arb_topo_config_default();
    *help = 0;
    static const struct option lopts[] = {
        {"fail", required_argument, NULL, 'f'},    {"rate", required_argument, NULL, 'r'},
        {"up-rate", required_argument, NULL, 'u'}, {"delay", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},          {"force", no_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},          {0, 0, 0, 0}};
    cli_getopt_start(lopts);
    int c, idx;
    while ((c = getopt_long(argc, argv, ":f:r:u:d:jFh", lopts, &idx)) != -1) {
        switch (c) {
        case 'h':
            *help = 1;
            return 0;
        case 'j':
            o->json = 1;
            break;
        case 'F':
            o->force = 1;
            break;
        case 'f':
            if (o->n_fails >= (int)(sizeof o->fails / sizeof o->fails[0]))
                return cli_error(cmd, "too many --fail options (join lists with commas)");
            o->fails[o->n_fails++] = optarg;
            break;
        case 'r':
        case 'u': {
            uint64_t r;
            if (arb_topo_parse_rate(optarg, &r) < 0)
                return cli_error(cmd, "--%s: '%s' is not a rate in 1..10T b/s (e.g. 400G)",
                                 c == 'r' ? "rate" : "up-rate", optarg);
            if (c == 'r')
                o->cfg.rate = r;
            else
                o->cfg.up_rate = r;
            break;
        }
        case 'd': {
            arb_time d;
            if (arb_topo_parse_time(optarg, &d) < 0)
                return cli_error(cmd, "--delay: '%s' is not a duration (e.g. 1us, 500ns)", optarg);
            o->cfg.delay = d;
            break;
        }
        default:
            return cli_bad_option(cmd, c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (!o->spec)
            o->spec = argv[i];
        else if (want_node && !o->node)
            o->node = argv[i];
        else
            return cli_error(cmd, "unexpected argument '%s'", argv[i]);
    }
    if (!o->spec) return cli_error(cmd, "missing SPEC (e.g. kary:4,3); see 'arbor topo --help'");
    if (want_node && !o->node) return cli_error(cmd, "missing NODE (e.g. L1.0 or h3)");
    return 0;
}

/* Build the fabric and apply every --fail list; prints the error itself. */
static int build(const char *cmd, const struct topo_opts *o, arb_topo **out)
{
    char err[512];
    int rc = arb_topo_new(out, o->spec, &o->cfg, err, sizeof err);
    if (rc == ARB_ENOMEM) {
        fprintf(stderr, "arbor %s: %s\n", cmd, err);
        return CLI_EXIT_FAIL;
    }
    if (rc < 0) return cli_error(cmd, "%s", err);
    for (int i = 0; i < o->n_fails; i++) {
        rc = arb_topo_fail(*out, o->fails[i], err, sizeof err);
        if (rc < 0) {
            arb_topo_free(*out);
            *out = NULL;
            if (rc == ARB_ENOMEM) {
                fprintf(stderr, "arbor %s: %s\n", cmd, err);
                return CLI_EXIT_FAIL;
            }
            return cli_error(cmd, "%s", err);
        }
    }
    return 0;
}

static void fmt_rate(char *buf, size_t len, uint64_t r)
{
    static const struct {
        uint64_t div;
        const char *unit;
    } u[] = {{1000000000000, "T"}, {1000000000, "G"}, {1000000, "M"}, {1000, "K"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (r >= u[i].div && r % u[i].div == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(r / u[i].div), u[i].unit);
            return;
        }
    snprintf(buf, len, "%llu", (unsigned long long)r);
}

static void fmt_time(char *buf, size_t len, arb_time t)
{
    static const struct {
        arb_time div;
        const char *unit;
    } u[] = {
        {ARB_PS_PER_S, "s"}, {ARB_PS_PER_MS, "ms"}, {ARB_PS_PER_US, "us"}, {ARB_PS_PER_NS, "ns"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (t >= u[i].div && t % u[i].div == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / u[i].div), u[i].unit);
            return;
        }
    snprintf(buf, len, t ? "%llups" : "%llu", (unsigned long long)t);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* ------------------------------------------------------------------ */
/* describe                                                             */
/* ------------------------------------------------------------------ */

/* Everything describe prints, gathered once for the text and JSON forms. */
struct summary {
    unsigned h;
    uint32_t failed_nodes[ARB_TOPO_MAX_HEIGHT + 1];
    uint32_t links[ARB_TOPO_MAX_HEIGHT];  /* per tier */
    uint32_t failed[ARB_TOPO_MAX_HEIGHT]; /* per tier */
    uint64_t rate[ARB_TOPO_MAX_HEIGHT];   /* per tier: the rate of its first link */
    int mixed_rate[ARB_TOPO_MAX_HEIGHT];  /* links of the tier do not all share that rate */
    uint32_t links_total, failed_links, failed_switches;
    const char *shape;
};

static void summarise(const arb_topo *t, struct summary *s)
{
    memset(s, 0, sizeof *s);
    s->h = arb_topo_height(t);
    const arb_port *ports = arb_topo_ports(t);
    const arb_node *nodes = arb_topo_nodes(t);
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++) {
        if (ports[p].role != ARB_LINK_UP) continue;
        unsigned tier = ports[p].tier;
        if (s->links[tier] == 0)
            s->rate[tier] = ports[p].rate;
        else if (ports[p].rate != s->rate[tier])
            s->mixed_rate[tier] = 1;
        s->links[tier]++;
        s->failed[tier] += ports[p].failed;
    }
    for (uint32_t i = 0; i < arb_topo_n_nodes(t); i++)
        s->failed_nodes[nodes[i].level] += nodes[i].failed;
    arb_topo_count_failed(t, &s->failed_links, &s->failed_switches);
    for (unsigned l = 0; l < s->h; l++)
        s->links_total += s->links[l];
    const arb_pgft *g = arb_topo_pgft(t);
    int slim = 0, under = 0;
    for (unsigned l = 1; l < s->h; l++) {
        uint64_t dn = (uint64_t)g->m[l] * g->p[l], upn = (uint64_t)g->w[l + 1] * g->p[l + 1];
        slim |= upn < dn;
        under |= upn > dn;
    }
    s->shape = slim ? "slimmed" : under ? "undersubscribed" : "rlft";
}

static void class_name(const arb_topo *t, unsigned tier, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s", arb_topo_level_name(t, tier), arb_topo_level_name(t, tier + 1));
}

static int describe_json(const arb_topo *t, const struct summary *s)
{
    const arb_pgft *g = arb_topo_pgft(t);
    cJSON *o = cJSON_CreateObject();
    if (!o) return -1;
    cli_json_head(o, CLI_SCHEMA_TOPO);
    cJSON_AddStringToObject(o, "spec", arb_topo_spec(t));
    cJSON_AddStringToObject(o, "kind", arb_topo_kind_name(arb_topo_get_kind(t)));
    cJSON *pg = cJSON_AddObjectToObject(o, "pgft");
    cJSON_AddNumberToObject(pg, "h", g->h);
    const uint32_t *lists[3] = {g->m, g->w, g->p};
    static const char *const lname[3] = {"m", "w", "p"};
    for (int li = 0; li < 3; li++) {
        cJSON *a = cJSON_AddArrayToObject(pg, lname[li]);
        for (unsigned l = 1; l <= g->h; l++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(lists[li][l]));
    }
    cJSON_AddNumberToObject(o, "hosts", arb_topo_n_hosts(t));
    cJSON_AddNumberToObject(o, "switches", arb_topo_n_nodes(t) - arb_topo_n_hosts(t));
    cJSON_AddNumberToObject(o, "nodes", arb_topo_n_nodes(t));
    cJSON_AddNumberToObject(o, "links", s->links_total);
    cJSON_AddNumberToObject(o, "ports", arb_topo_n_ports(t));
    cJSON *levels = cJSON_AddArrayToObject(o, "levels");
    for (unsigned l = 0; l <= g->h; l++) {
        const arb_node *n = arb_topo_node(t, arb_topo_level_first(t, l));
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "level", l);
        cJSON_AddStringToObject(e, "name", arb_topo_level_name(t, l));
        cJSON_AddNumberToObject(e, "nodes", g->size[l]);
        cJSON_AddNumberToObject(e, "down_ports", n->n_down);
        cJSON_AddNumberToObject(e, "up_ports", n->n_up);
        cJSON_AddNumberToObject(e, "ports", (double)g->size[l] * (n->n_down + n->n_up));
        cJSON_AddNumberToObject(e, "failed", s->failed_nodes[l]);
        cJSON_AddItemToArray(levels, e);
    }
    cJSON *tiers = cJSON_AddArrayToObject(o, "tiers");
    for (unsigned l = 0; l < g->h; l++) {
        char cls[48];
        class_name(t, l, cls, sizeof cls);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "tier", l);
        cJSON_AddStringToObject(e, "class", cls);
        cJSON_AddNumberToObject(e, "links", s->links[l]);
        cJSON_AddNumberToObject(e, "parallel", g->p[l + 1]);
        cJSON_AddNumberToObject(e, "rate", (double)s->rate[l]);
        cJSON_AddBoolToObject(e, "mixed_rate", s->mixed_rate[l]);
        cJSON_AddNumberToObject(e, "failed", s->failed[l]);
        cJSON_AddItemToArray(tiers, e);
    }
    cJSON *ov = cJSON_AddArrayToObject(o, "oversubscription");
    for (unsigned l = 1; l < g->h; l++) {
        uint64_t dn = (uint64_t)g->m[l] * g->p[l], upn = (uint64_t)g->w[l + 1] * g->p[l + 1];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "level", l);
        cJSON_AddNumberToObject(e, "down", (double)dn);
        cJSON_AddNumberToObject(e, "up", (double)upn);
        cli_json_real(e, "ratio", (double)dn / (double)upn);
        cli_json_real(e, "capacity_ratio",
                      (double)dn * (double)s->rate[l - 1] / ((double)upn * (double)s->rate[l]));
        cJSON_AddItemToArray(ov, e);
    }
    cJSON_AddStringToObject(o, "shape", s->shape);
    cJSON *f = cJSON_AddObjectToObject(o, "failed");
    cJSON_AddNumberToObject(f, "links", s->failed_links);
    cJSON_AddNumberToObject(f, "switches", s->failed_switches);
    char *txt = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!txt) return -1;
    puts(txt);
    cJSON_free(txt);
    return 0;
}

static void describe_text(const arb_topo *t, const struct summary *s)
{
    const arb_pgft *g = arb_topo_pgft(t);
    printf("spec      %s\n", arb_topo_spec(t));
    printf("kind      %s\n", arb_topo_kind_name(arb_topo_get_kind(t)));
    printf("pgft      PGFT(%u", g->h);
    const uint32_t *lists[3] = {g->m, g->w, g->p};
    for (int li = 0; li < 3; li++)
        for (unsigned l = 1; l <= g->h; l++)
            printf("%s%u", l == 1 ? "; " : ",", lists[li][l]);
    printf(")\n");
    printf("hosts     %u\n", arb_topo_n_hosts(t));
    printf("switches  %u\n", arb_topo_n_nodes(t) - arb_topo_n_hosts(t));
    printf("links     %u\n", s->links_total);
    printf("ports     %u\n", arb_topo_n_ports(t));
    printf("\nlevel  name      nodes   down     up       ports  failed\n");
    for (unsigned l = 0; l <= g->h; l++) {
        const arb_node *n = arb_topo_node(t, arb_topo_level_first(t, l));
        printf("%-5u  %-6s %8u %6u %6u %11llu %7u\n", l, arb_topo_level_name(t, l), g->size[l],
               n->n_down, n->n_up, (unsigned long long)g->size[l] * (n->n_down + n->n_up),
               s->failed_nodes[l]);
    }
    printf("\ntier   class          links  parallel    rate  failed\n");
    for (unsigned l = 0; l < g->h; l++) {
        char cls[48], rate[32];
        class_name(t, l, cls, sizeof cls);
        fmt_rate(rate, sizeof rate, s->rate[l]);
        printf("%-5u  %-12s %7u %9u %6s%s %7u\n", l, cls, s->links[l], g->p[l + 1], rate,
               s->mixed_rate[l] ? "*" : " ", s->failed[l]);
    }
    if (g->h > 1) {
        printf("\nlevel  down     up   ratio  capacity\n");
        for (unsigned l = 1; l < g->h; l++) {
            uint64_t dn = (uint64_t)g->m[l] * g->p[l], upn = (uint64_t)g->w[l + 1] * g->p[l + 1];
            uint64_t c = gcd(dn, upn);
            char ratio[48];
            snprintf(ratio, sizeof ratio, "%llu:%llu", (unsigned long long)(dn / c),
                     (unsigned long long)(upn / c));
            printf("%-5u  %4llu %6llu %7s %9.2f\n", l, (unsigned long long)dn,
                   (unsigned long long)upn, ratio,
                   (double)dn * (double)s->rate[l - 1] / ((double)upn * (double)s->rate[l]));
        }
    }
    printf("\nshape     %s\n", s->shape);
    printf("failed    %u link%s, %u switch%s\n", s->failed_links, s->failed_links == 1 ? "" : "s",
           s->failed_switches, s->failed_switches == 1 ? "" : "es");
}

static int topo_describe(int argc, char **argv)
{
    const char *cmd = "topo describe";
    struct topo_opts o;
    int help;
    int rc = parse_opts(cmd, argc, argv, 0, &o, &help);
    if (help) {
        fputs(topo_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    arb_topo *t;
    if ((rc = build(cmd, &o, &t)) != 0) return rc;
    struct summary s;
    summarise(t, &s);
    if (o.json) {
        if (describe_json(t, &s) < 0) {
            arb_topo_free(t);
            fprintf(stderr, "arbor %s: out of memory\n", cmd);
            return CLI_EXIT_FAIL;
        }
    } else {
        describe_text(t, &s);
    }
    arb_topo_free(t);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* dot                                                                  */
/* ------------------------------------------------------------------ */

static int topo_dot(int argc, char **argv)
{
    const char *cmd = "topo dot";
    struct topo_opts o;
    int help;
    int rc = parse_opts(cmd, argc, argv, 0, &o, &help);
    if (help) {
        fputs(topo_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if (o.json) return cli_error(cmd, "--json is for describe");
    arb_topo *t;
    if ((rc = build(cmd, &o, &t)) != 0) return rc;
    if (arb_topo_n_nodes(t) > DOT_MAX_NODES && !o.force) {
        uint32_t n = arb_topo_n_nodes(t);
        arb_topo_free(t);
        return cli_error(cmd, "%u nodes is above %d, too many to draw (--force draws anyway)", n,
                         DOT_MAX_NODES);
    }
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    printf("graph \"%s\" {\n", arb_topo_spec(t));
    printf("  rankdir=BT;\n  node [shape=box, fontsize=10];\n");
    for (unsigned l = 0; l <= arb_topo_height(t); l++) {
        printf("  { rank=same;");
        uint32_t first = arb_topo_level_first(t, l);
        for (uint32_t i = 0; i < arb_topo_level_size(t, l); i++) {
            char name[16];
            arb_topo_node_name(t, first + i, name, sizeof name);
            const arb_node *n = &nodes[first + i];
            printf(" \"%s\"%s", name,
                   n->failed                  ? " [color=red, style=dashed]"
                   : n->kind == ARB_NODE_HOST ? " [shape=ellipse]"
                                              : "");
            putchar(';');
        }
        printf(" }\n");
    }
    for (uint32_t i = 0; i < arb_topo_n_nodes(t); i++) {
        const arb_node *n = &nodes[i];
        char a[16], b[16];
        arb_topo_node_name(t, i, a, sizeof a);
        for (uint32_t q = 0; q < n->n_up; q++) {
            const arb_port *p = &ports[n->first_up + q];
            arb_topo_node_name(t, p->peer, b, sizeof b);
            printf("  \"%s\" -- \"%s\"%s;\n", a, b, p->failed ? " [color=red, style=dashed]" : "");
        }
    }
    printf("}\n");
    arb_topo_free(t);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* ports                                                                */
/* ------------------------------------------------------------------ */

static int topo_ports(int argc, char **argv)
{
    const char *cmd = "topo ports";
    struct topo_opts o;
    int help;
    int rc = parse_opts(cmd, argc, argv, 1, &o, &help);
    if (help) {
        fputs(topo_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if (o.json) return cli_error(cmd, "--json is for describe");
    arb_topo *t;
    if ((rc = build(cmd, &o, &t)) != 0) return rc;
    uint32_t id;
    rc = arb_topo_find(t, o.node, &id);
    if (rc < 0) {
        arb_topo_free(t);
        if (rc == ARB_EPARSE)
            return cli_error(cmd, "'%s' is not a node name (h<host> or L<level>.<index>)", o.node);
        return cli_error(cmd, "no node %s in %s", o.node, o.spec);
    }
    const arb_node *n = arb_topo_node(t, id);
    printf("port  role  num  parallel  peer        peer_port  rate   delay   failed\n");
    for (uint32_t k = 0; k < (uint32_t)n->n_down + n->n_up; k++) {
        const arb_port *p = arb_topo_port(t, n->first_port + k);
        const arb_port *r = arb_topo_port(t, p->peer_port);
        char peer[16], rate[32], delay[32], pp[24];
        arb_topo_node_name(t, p->peer, peer, sizeof peer);
        fmt_rate(rate, sizeof rate, p->rate);
        fmt_time(delay, sizeof delay, p->delay);
        snprintf(pp, sizeof pp, "%s %u", r->role == ARB_LINK_UP ? "up" : "down", r->num);
        printf("%-4u  %-4s  %3u  %8u  %-10s  %-9s  %-5s  %-6s  %s\n", k,
               p->role == ARB_LINK_UP ? "up" : "down", p->num, p->parallel, peer, pp, rate, delay,
               p->failed ? "yes" : "no");
    }
    arb_topo_free(t);
    return CLI_EXIT_OK;
}

int cmd_topo(int argc, char **argv)
{
    if (argc < 2) {
        fputs(topo_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (cli_is_help(sub)) {
        fputs(topo_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "describe") == 0) return topo_describe(argc - 1, argv + 1);
    if (strcmp(sub, "dot") == 0) return topo_dot(argc - 1, argv + 1);
    if (strcmp(sub, "ports") == 0) return topo_ports(argc - 1, argv + 1);
    return cli_error("topo", "unknown subcommand '%s' (describe, dot, ports)", sub);
}
