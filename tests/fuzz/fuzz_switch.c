/*
 * Fuzz target: the runtime's software switch fed arbitrary datagrams.
 *
 * The first byte picks the switch: bit 0 clear, the default star; set, leaf
 * 1.0 of leafspine:2,2,1 with its spine as a peer at 127.0.0.1:40100. The
 * harness then joins ranks 0..3 of job 1 (size 4) from 127.0.0.1:40000+r
 * with valid JOINs (the fuzzer cannot forge a MAC; with them it reaches the
 * Arbor paths), and feeds the rest as records:
 *
 *   byte    who: 0..3 rank r's address, 4 a stranger, 5 the peer switch
 *   2 bytes length (big-endian, capped at what is left)
 *   bytes   the datagram
 *
 * After every datagram: the switch counted it, and the aggregator's
 * self-check (arb_agg_check) holds. The switch's socket is closed first, so
 * nothing it sends leaves the process. A crash, a sanitizer report or a
 * broken check aborts.
 *
 *   CC=clang cmake -S . -B build-fuzz -DARB_FUZZ=ON && cmake --build build-fuzz --target
 * fuzz_switch
 *   ./build-fuzz/fuzz_switch -max_total_time=600 tests/fuzz/corpus/switch
 */
#define _GNU_SOURCE
#include "arbor/agg.h"
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "rt/rt_int.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

static struct sockaddr_in addr_of(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(0x7F000001);
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    arb_rt_switch_config cfg;
    arb_rt_switch_config_default(&cfg);
    cfg.listen = "127.0.0.1:0";
    cfg.slots = 64;
    cfg.jobs[0].id = 1;
    cfg.jobs[0].secret = "fuzz";
    cfg.n_jobs = 1;
    if (data[0] & 1) {
        cfg.topo = "leafspine:2,2,1";
        cfg.peers[0].level = 2;
        cfg.peers[0].index = 0;
        cfg.peers[0].addr = "127.0.0.1:40100";
        cfg.n_peers = 1;
    }
    arb_rt_switch *s;
    /* no socket here: the input cannot be tested, which is a failure, not a pass */
    char err[160];
    if (arb_rt_switch_new(&s, &cfg, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_switch: cannot make the switch to test: %s\n", err);
        abort();
    }
    rt_switch_mute(s);
    uint8_t key[RT_KEY_LEN];
    require(rt_key(key, "fuzz") == 0);
    /* the ranks' JOINs name the switch's fabric */
    arb_topo *t;
    require(arb_topo_new(&t, cfg.topo, NULL, NULL, 0) == 0);
    uint32_t fabric = rt_fabric_id(arb_topo_spec(t));
    arb_topo_free(t);
    arb_time now = 1;
    /* ranks 0 and 1 hang from leaf 1.0 in the leaf-spine; all four on the star */
    uint32_t ranks = data[0] & 1 ? 2 : 4;
    for (uint32_t r = 0; r < ranks; r++) {
        rt_join j = {.job = 1, .rank = r, .size = 4, .base = 0, .counter = 1 + r, .fabric = fabric};
        memset(j.nonce, (int)r, sizeof j.nonce);
        uint8_t b[RT_JOIN_LEN];
        rt_join_put(b, &j, key);
        struct sockaddr_in a = addr_of((uint16_t)(40000 + r));
        rt_switch_feed(s, &a, b, sizeof b, now);
        rt_switch_flush(s);
    }
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(s, &st);
    require(st.joins == ranks && st.join_rejected == 0);
    uint64_t fed = st.rx_pkts;
    size_t i = 1;
    uint8_t buf[RT_DGRAM_MAX + 64];
    while (i + 3 <= size) {
        uint8_t who = data[i] % 6;
        size_t len = (size_t)data[i + 1] << 8 | data[i + 2];
        i += 3;
        if (len > size - i) len = size - i;
        if (len > sizeof buf) len = sizeof buf;
        memcpy(buf, data + i, len); /* the switch rewrites headers in place */
        i += len;
        struct sockaddr_in a = addr_of(who < 4    ? (uint16_t)(40000 + who)
                                       : who == 4 ? 41234
                                                  : 40100);
        now += 1000 * (uint64_t)(who + 1);
        rt_switch_feed(s, &a, buf, len, now);
        rt_switch_flush(s);
        fed++;
        arb_rt_switch_get_stats(s, &st);
        require(st.rx_pkts == fed);
        require(arb_agg_check(rt_switch_agg(s)) == 0);
    }
    arb_rt_switch_free(s);
    return 0;
}
