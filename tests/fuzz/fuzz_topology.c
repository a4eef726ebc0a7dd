/*
 * Fuzz target: topology specs and failure lists (topo.h). The first line
 * is a spec (star:N, leafspine:..., kary:K,N, pgft:..., dualplane:...,
 * rail:...); specs whose numbers multiply past a cap are not built. Each
 * further line is, in turn, a failure list (link:A-B[/K], switch:NAME,
 * up:NAME:Q, down:NAME:D, port:NAME:P), a node name, a rate and a time.
 *
 * Invariants: a built topology's ports pair up (peer of peer, opposite
 * roles, same tier, rate and delay); its canonical spec builds the same
 * fabric; arb_topo_fail_check and arb_topo_fail agree; a failure list
 * applies all or nothing and fails links in both directions; a name that
 * is found prints back as itself; errors carry their documented codes and
 * a message.
 */
#include "fuzz_text.h"

#include <stdio.h>

static void check_structure(const arb_topo *t)
{
    uint32_t np = arb_topo_n_ports(t), nn = arb_topo_n_nodes(t);
    fuzz_require(arb_topo_n_hosts(t) >= 1 && arb_topo_n_hosts(t) <= nn);
    for (uint32_t p = 0; p < np; p++) {
        const arb_port *a = arb_topo_port(t, p);
        fuzz_require(a && a->peer_port < np && a->peer < nn);
        const arb_port *b = arb_topo_port(t, a->peer_port);
        fuzz_require(b->peer_port == p && arb_topo_port_owner(t, p) == b->peer);
        fuzz_require(a->role != b->role && a->tier == b->tier);
        fuzz_require(a->rate == b->rate && a->delay == b->delay && a->parallel == b->parallel);
    }
    /* the canonical spec builds the same fabric */
    arb_topo *again = NULL;
    char err[256] = "";
    fuzz_require(arb_topo_new(&again, arb_topo_spec(t), NULL, err, sizeof err) == 0);
    fuzz_require(arb_topo_n_hosts(again) == arb_topo_n_hosts(t));
    fuzz_require(arb_topo_n_nodes(again) == nn && arb_topo_n_ports(again) == np);
    fuzz_require(strcmp(arb_topo_spec(again), arb_topo_spec(t)) == 0);
    arb_topo_free(again);
}

static void try_failures(arb_topo *t, const char *list)
{
    static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM, 0};
    char e1[256] = "", e2[256] = "";
    uint32_t l0, s0, l1, s1;
    arb_topo_count_failed(t, &l0, &s0);
    uint64_t gen = arb_topo_failure_gen(t);
    int check = arb_topo_fail_check(t, list, e1, sizeof e1);
    fuzz_require(arb_topo_failure_gen(t) == gen); /* a check changes nothing */
    int rc = arb_topo_fail(t, list, e2, sizeof e2);
    arb_topo_count_failed(t, &l1, &s1);
    if (rc < 0) {
        fuzz_error_ok(rc, allowed, e2);
        fuzz_require(check == rc);
        fuzz_require(l1 == l0 && s1 == s0); /* all or nothing */
    } else {
        fuzz_require(rc == 0 && check == 0);
        fuzz_require(l1 >= l0 && s1 >= s0);
    }
    fuzz_check_failures(t);
}

static void try_name(const arb_topo *t, const char *name)
{
    uint32_t node = 0;
    int rc = arb_topo_find(t, name, &node);
    if (rc < 0) {
        fuzz_require(rc == ARB_EPARSE || rc == ARB_ENOENT);
        return;
    }
    fuzz_require(node < arb_topo_n_nodes(t));
    char back[64];
    fuzz_require(arb_topo_node_name(t, node, back, sizeof back) == 0);
    uint32_t again = 0;
    fuzz_require(arb_topo_find(t, back, &again) == 0 && again == node);
}

static void try_units(const char *s)
{
    uint64_t rate = 0;
    int rc = arb_topo_parse_rate(s, &rate);
    fuzz_require(rc == 0 || rc == ARB_EPARSE || rc == ARB_ERANGE);
    if (rc == 0) fuzz_require(rate >= 1 && rate <= ARB_RATE_MAX);
    arb_time tm = 0;
    rc = arb_topo_parse_time(s, &tm);
    fuzz_require(rc == 0 || rc == ARB_EPARSE || rc == ARB_ERANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *s = fuzz_cstr(data, size);
    char *rest;
    const char *spec = fuzz_first_line(s, &rest);
    try_units(spec);
    arb_topo *t = fuzz_topo(spec, 4096);
    if (t) {
        check_structure(t);
        while (*rest) {
            char *line = fuzz_first_line(rest, &rest);
            try_failures(t, line);
            try_name(t, line);
            try_units(line);
        }
        arb_topo_clear_failures(t);
        uint32_t l, sw;
        arb_topo_count_failed(t, &l, &sw);
        fuzz_require(l == 0 && sw == 0);
        arb_topo_free(t);
    }
    free(s);
    return 0;
}
