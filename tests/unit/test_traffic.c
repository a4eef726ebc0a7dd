/* Unit tests: traffic patterns. */
#include "arbor/traffic.h"
#include "testkit.h"

#include <stdlib.h>

static arb_flow *phase(const arb_traffic *t, uint32_t p, arb_rng *r, long *n)
{
    size_t cap = arb_traffic_max_flows(t);
    arb_flow *f = malloc(sizeof *f * (cap ? cap : 1));
    REQUIRE(f != NULL);
    *n = arb_traffic_phase(t, p, r, f, cap);
    return f;
}

static arb_traffic *make(const char *spec, uint32_t n, uint32_t qps)
{
    arb_traffic_config cfg;
    arb_traffic_config_default(&cfg);
    cfg.qps = qps;
    arb_traffic *t = NULL;
    char err[256];
    int rc = arb_traffic_new(&t, spec, n, &cfg, err, sizeof err);
    if (rc < 0) printf("  %s: %s\n", spec, err);
    REQUIRE(t != NULL);
    return t;
}

TEST(shift_one)
{
    arb_traffic *t = make("shift:3", 8, 1);
    CHECK_EQ_U(arb_traffic_phases(t), 1);
    long n;
    arb_flow *f = phase(t, 0, NULL, &n);
    REQUIRE_EQ_I(n, 8);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ_U(f[i].src, i);
        CHECK_EQ_U(f[i].dst, (i + 3) % 8);
        CHECK(f[i].demand == 1.0);
        CHECK_EQ_U(f[i].dport, ARB_ROCE_UDP_PORT);
        CHECK_EQ_U(f[i].proto, 17);
    }
    CHECK_STR(arb_traffic_spec(t), "shift:3");
    CHECK_EQ_I(arb_traffic_phase(t, 1, NULL, f, 8), ARB_EINVAL);
    CHECK_EQ_I(arb_traffic_phase(t, 0, NULL, f, 7), ARB_ENOSPC);
    free(f);
    arb_traffic_free(t);
}

TEST(shift_all_phases)
{
    arb_traffic *t = make("shift:all", 5, 1);
    CHECK_EQ_U(arb_traffic_phases(t), 4);
    for (uint32_t p = 0; p < 4; p++) {
        long n;
        arb_flow *f = phase(t, p, NULL, &n);
        REQUIRE_EQ_I(n, 5);
        for (int i = 0; i < 5; i++)
            CHECK_EQ_U(f[i].dst, (i + p + 1) % 5);
        free(f);
    }
    arb_traffic_free(t);
}

TEST(ring_and_all2all)
{
    arb_traffic *t = make("ring", 4, 1);
    long n;
    arb_flow *f = phase(t, 0, NULL, &n);
    REQUIRE_EQ_I(n, 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U(f[i].dst, (i + 1) % 4);
    free(f);
    arb_traffic_free(t);

    t = make("all2all", 4, 1);
    f = phase(t, 0, NULL, &n);
    CHECK_EQ_I(n, 12);
    int seen[4][4] = {{0}};
    for (long i = 0; i < n; i++) {
        REQUIRE(f[i].src < 4 && f[i].dst < 4);
        CHECK(f[i].src != f[i].dst);
        seen[f[i].src][f[i].dst]++;
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            CHECK_EQ_I(seen[a][b], a != b);
    free(f);
    arb_traffic_free(t);
}

TEST(perm_is_derangement_and_seeded)
{
    arb_traffic *a = make("perm:13", 64, 1), *b = make("perm:13", 64, 1),
                *c = make("perm:14", 64, 1);
    long na, nb, nc;
    arb_flow *fa = phase(a, 0, NULL, &na), *fb = phase(b, 0, NULL, &nb),
             *fc = phase(c, 0, NULL, &nc);
    REQUIRE_EQ_I(na, 64);
    REQUIRE_EQ_I(nb, 64);
    REQUIRE_EQ_I(nc, 64);
    int hit[64] = {0}, differ = 0;
    for (int i = 0; i < 64; i++) {
        CHECK_EQ_U(fa[i].src, i);
        REQUIRE(fa[i].dst < 64);
        CHECK(fa[i].dst != fa[i].src);
        CHECK_EQ_U(fa[i].dst, fb[i].dst);
        differ += fa[i].dst != fc[i].dst;
        hit[fa[i].dst]++;
    }
    for (int i = 0; i < 64; i++)
        CHECK_EQ_I(hit[i], 1);
    CHECK(differ > 0);
    free(fa), free(fb), free(fc);
    arb_traffic_free(a), arb_traffic_free(b), arb_traffic_free(c);
}

TEST(bisect_pairs_both_ways)
{
    arb_traffic *t = make("bisect:5", 10, 1);
    long n;
    arb_flow *f = phase(t, 0, NULL, &n);
    CHECK_EQ_I(n, 10);
    int partner[10];
    for (int i = 0; i < 10; i++)
        partner[i] = -1;
    for (long i = 0; i < n; i++) {
        REQUIRE(f[i].src < 10 && f[i].dst < 10);
        CHECK(partner[f[i].src] == -1);
        partner[f[i].src] = (int)f[i].dst;
    }
    for (int i = 0; i < 10; i++)
        CHECK(partner[i] >= 0 && partner[partner[i]] == i && partner[i] != i);
    free(f);
    arb_traffic_free(t);
    /* Odd host count: one host sits out. */
    t = make("bisect:5", 7, 1);
    CHECK_EQ_U(arb_traffic_max_flows(t), 6);
    arb_traffic_free(t);
}

TEST(qps_split_demand_and_ports)
{
    arb_traffic *t = make("shift:1", 4, 4);
    CHECK_EQ_U(arb_traffic_max_flows(t), 16);
    long n;
    arb_rng r;
    arb_rng_seed(&r, 1);
    arb_flow *f = phase(t, 0, &r, &n);
    CHECK_EQ_I(n, 16);
    for (long i = 0; i < n; i++) {
        CHECK(f[i].demand == 0.25);
        CHECK_EQ_U(f[i].qp_index, i % 4);
        CHECK_EQ_U(f[i].src, i / 4);
        CHECK(f[i].sport >= 49152);
        CHECK(f[i].qp < (1u << 24));
    }
    /* Same generator state, same ports; another state, other ports. */
    arb_rng r1, r2;
    arb_rng_seed(&r1, 9);
    arb_rng_seed(&r2, 9);
    arb_flow *g = phase(t, 0, &r1, &n), *h = phase(t, 0, &r2, &n);
    REQUIRE_EQ_I(n, 16);
    int same = 0;
    for (long i = 0; i < n; i++) {
        CHECK_EQ_U(g[i].sport, h[i].sport);
        CHECK_EQ_U(g[i].qp, h[i].qp);
        same += g[i].sport == f[i].sport;
    }
    CHECK(same < 4);
    /* Without a generator: ports by QP index, deterministic. */
    arb_flow *d = phase(t, 0, NULL, &n);
    for (long i = 0; i < n; i++)
        CHECK_EQ_U(d[i].sport, 49152 + i % 4);
    free(f), free(g), free(h), free(d);
    arb_traffic_free(t);
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/arbor-test-traffic-%s.csv", name);
    FILE *fp = fopen(path, "w");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
    return path;
}

static int file_err(const char *text, char *err, size_t errlen)
{
    char spec[300];
    snprintf(spec, sizeof spec, "file:%s", write_tmp("bad", text));
    arb_traffic *t = NULL;
    int rc = arb_traffic_new(&t, spec, 8, NULL, err, errlen);
    arb_traffic_free(t);
    return rc;
}

TEST(file_good)
{
    char spec[300];
    snprintf(spec, sizeof spec, "file:%s",
             write_tmp("good", "# a comment\nsrc,dst,demand\n0,1,0.5\n 3 , 2 , 2\r\n\n7,0,1\n"));
    arb_traffic *t = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_traffic_new(&t, spec, 8, NULL, err, sizeof err), 0);
    long n;
    arb_flow *f = phase(t, 0, NULL, &n);
    REQUIRE_EQ_I(n, 3);
    CHECK(f[0].src == 0 && f[0].dst == 1 && f[0].demand == 0.5);
    CHECK(f[1].src == 3 && f[1].dst == 2 && f[1].demand == 2.0);
    CHECK(f[2].src == 7 && f[2].dst == 0 && f[2].demand == 1.0);
    free(f);
    arb_traffic_free(t);
    snprintf(spec, sizeof spec, "file:%s", write_tmp("nodemand", "src,dst\n1,2\n"));
    REQUIRE_EQ_I(arb_traffic_new(&t, spec, 8, NULL, err, sizeof err), 0);
    arb_traffic_free(t);
}

TEST(file_errors_name_line_and_field)
{
    char err[256];
    CHECK_EQ_I(file_err("src,dst\n0,1\n0,9\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "line 3") && strstr(err, "field dst"));
    CHECK_EQ_I(file_err("src,dst,demand\n0,1,-2\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "line 2") && strstr(err, "field demand"));
    CHECK_EQ_I(file_err("src,dst,demand\n0,1,x\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "field demand"));
    CHECK_EQ_I(file_err("a,b\n0,1\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "line 1") && strstr(err, "header"));
    CHECK_EQ_I(file_err("src,dst\n0,1,3\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "line 2") && strstr(err, "fields"));
    CHECK_EQ_I(file_err("src,dst\n2,2\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "line 2"));
    CHECK_EQ_I(file_err("src,dst\n-1,2\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "field src"));
    CHECK_EQ_I(file_err("src,dst\n", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "no flows"));
    CHECK_EQ_I(file_err("", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "no header"));
    arb_traffic *t = NULL;
    CHECK_EQ_I(arb_traffic_new(&t, "file:/nonexistent/x.csv", 8, NULL, err, sizeof err), ARB_EIO);
    CHECK(strstr(err, "/nonexistent/x.csv"));
}

TEST(bad_specs)
{
    static const char *bad[] = {"shift:0",  "shift:8",  "shift:",   "shift",     "shift:x",
                                "perm",     "perm:abc", "ring:2",   "all2all:1", "bisect",
                                "nonsense", "file:",    "shift:-1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        arb_traffic *t = NULL;
        char err[256] = "";
        CHECK_EQ_I(arb_traffic_new(&t, bad[i], 8, NULL, err, sizeof err), ARB_EPARSE);
        CHECK(t == NULL);
        CHECK(err[0] != '\0');
    }
    arb_traffic *t = NULL;
    char err[256];
    CHECK_EQ_I(arb_traffic_new(&t, "ring", 1, NULL, err, sizeof err), ARB_EINVAL);
    arb_traffic_config cfg;
    arb_traffic_config_default(&cfg);
    cfg.qps = 0;
    CHECK_EQ_I(arb_traffic_new(&t, "ring", 4, &cfg, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "qps"));
}

int main(void)
{
    RUN(shift_one);
    RUN(shift_all_phases);
    RUN(ring_and_all2all);
    RUN(perm_is_derangement_and_seeded);
    RUN(bisect_pairs_both_ways);
    RUN(qps_split_demand_and_ports);
    RUN(file_good);
    RUN(file_errors_name_line_and_field);
    RUN(bad_specs);
    return testkit_done();
}
