/* Unit tests: HPN's disjoint source ports (arb_route_disjoint_sports). */
#include "arbor/route.h"
#include "arbor/topo.h"
#include "simkit.h"
#include "testkit.h"

#include <stdlib.h>

static arb_route *router(const arb_topo *t, const char *spec)
{
    arb_route *r = NULL;
    char err[200];
    if (arb_route_new(&r, t, spec, NULL, err, sizeof err) < 0)
        printf("  route %s: %s\n", spec, err);
    REQUIRE(r != NULL);
    return r;
}

/* The fabric (switch-to-switch) ports of the path of one RoCEv2 flow. */
static int fabric_path(const arb_topo *t, const arb_route *r, uint32_t src, uint32_t dst,
                       uint16_t sport, uint32_t *fab)
{
    arb_route_key k = {src, dst, sport, 4791, 0, 17};
    uint32_t ports[ARB_ROUTE_MAX_HOPS];
    int hops = arb_route_path(r, &k, ports, ARB_ROUTE_MAX_HOPS);
    int n = 0;
    for (int i = 0; i < hops; i++)
        if (arb_topo_ports(t)[ports[i]].tier > 0) fab[n++] = ports[i];
    return n;
}

/* Do the paths of sports[0..n) share a fabric link? */
static int collide(const arb_topo *t, const arb_route *r, uint32_t src, uint32_t dst,
                   const uint16_t *sports, unsigned n)
{
    uint32_t a[ARB_ROUTE_MAX_HOPS], b[ARB_ROUTE_MAX_HOPS];
    for (unsigned i = 0; i < n; i++) {
        int na = fabric_path(t, r, src, dst, sports[i], a);
        for (unsigned j = i + 1; j < n; j++) {
            int nb = fabric_path(t, r, src, dst, sports[j], b);
            for (int x = 0; x < na; x++)
                for (int y = 0; y < nb; y++)
                    if (a[x] == b[y]) return 1;
        }
    }
    return 0;
}

/*
 * Leaf-spine with 4 uplinks per leaf under ECMP: for every pair of hosts
 * on different leaves, 4 ports with fully disjoint paths (one per uplink,
 * one per spine-to-leaf link). Four consecutive ports, as a NIC would hand
 * them out, hash onto 4 uplinks with a collision in about 1 - 4!/4^4 = 91%
 * of the pairs.
 */
TEST(leafspine_ecmp_disjoint)
{
    arb_topo *t = simkit_topo("leafspine:4,4,4");
    arb_route *r = router(t, "ecmp");
    unsigned pairs = 0, naive_coll = 0;
    for (uint32_t s = 0; s < 16; s++)
        for (uint32_t d = 0; d < 16; d++) {
            if (s / 4 == d / 4) continue;
            uint16_t out[4], seq[4];
            for (unsigned n = 1; n <= 4; n++) {
                CHECK_EQ_I(arb_route_disjoint_sports(r, s, d, n, 49152, 65535, out), (int)n);
                CHECK(!collide(t, r, s, d, out, n));
            }
            for (unsigned i = 0; i < 4; i++)
                seq[i] = (uint16_t)(49152 + 4 * (s * 16 + d) + i);
            naive_coll += collide(t, r, s, d, seq, 4);
            pairs++;
        }
    CHECK_EQ_U(pairs, 192);
    CHECK(naive_coll > pairs / 2);
    printf("  consecutive ports collide in %u of %u pairs; disjoint ports in none\n", naive_coll,
           pairs);
    arb_route_free(r);
    arb_topo_free(t);
}

/* More ports than uplinks: 4 disjoint, then least overlap spreads the
 * other 4 so that no uplink carries more than 2; deterministic. */
TEST(more_than_uplinks_falls_back)
{
    arb_topo *t = simkit_topo("leafspine:4,4,4");
    arb_route *r = router(t, "ecmp");
    uint16_t out[8], again[8];
    CHECK_EQ_I(arb_route_disjoint_sports(r, 1, 9, 8, 49152, 65535, out), 4);
    CHECK_EQ_I(arb_route_disjoint_sports(r, 1, 9, 8, 49152, 65535, again), 4);
    CHECK(memcmp(out, again, sizeof out) == 0);
    unsigned per_port[1024] = {0};
    uint32_t fab[ARB_ROUTE_MAX_HOPS];
    for (int i = 0; i < 8; i++) {
        int n = fabric_path(t, r, 1, 9, out[i], fab);
        CHECK_EQ_I(n, 2);
        for (int k = 0; k < n; k++)
            per_port[fab[k]]++;
        for (int j = 0; j < i; j++)
            CHECK(out[i] != out[j]);
    }
    for (int p = 0; p < 1024; p++)
        CHECK(per_port[p] <= 2);
    /* A range too narrow for n. */
    CHECK_EQ_I(arb_route_disjoint_sports(r, 1, 9, 8, 50000, 50006, out), ARB_EINVAL);
    arb_route_free(r);
    arb_topo_free(t);
}

/* Under one leaf no fabric link is used: the first n ports. */
TEST(same_leaf_takes_first_ports)
{
    arb_topo *t = simkit_topo("leafspine:4,4,4");
    arb_route *r = router(t, "ecmp");
    uint16_t out[3];
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 3, 3, 1000, 2000, out), 3);
    CHECK_EQ_U(out[0], 1000);
    CHECK_EQ_U(out[1], 1001);
    CHECK_EQ_U(out[2], 1002);
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 0, 1, 1000, 2000, out), ARB_EINVAL);
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 16, 1, 1000, 2000, out), ARB_EINVAL);
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 5, 0, 1000, 2000, out), ARB_EINVAL);
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 5, 1, 2000, 1000, out), ARB_EINVAL);
    CHECK_EQ_I(arb_route_disjoint_sports(NULL, 0, 5, 1, 1000, 2000, out), ARB_EINVAL);
    arb_route_free(r);
    arb_topo_free(t);
}

/* A three-tier fat-tree: disjoint up to the number of distinct paths. */
TEST(kary_three_tiers)
{
    arb_topo *t = simkit_topo("kary:4,3");
    arb_route *r = router(t, "ecmp");
    uint16_t out[4];
    /* Hosts in different subtrees of the top: each leaf and each
     * level-2 switch has 4 uplinks, so 4 paths can be pairwise disjoint
     * on all four fabric hops. */
    CHECK_EQ_I(arb_route_disjoint_sports(r, 0, 63, 4, 49152, 65535, out), 4);
    CHECK(!collide(t, r, 0, 63, out, 4));
    arb_route_free(r);
    arb_topo_free(t);
}

int main(void)
{
    RUN(leafspine_ecmp_disjoint);
    RUN(more_than_uplinks_falls_back);
    RUN(same_leaf_takes_first_ports);
    RUN(kary_three_tiers);
    return testkit_done();
}
