/*
 * The runtime header and the control messages (rt_int.h), with their MACs:
 * HMAC-SHA-512-256 (libsodium's crypto_auth) under a key that is a keyed
 * BLAKE2b hash of the job's secret.
 */
#define _GNU_SOURCE
#include "rt/rt_int.h"

#include <sodium.h>
#include <string.h>

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}
static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}
static void put64(uint8_t *b, uint64_t v)
{
    put32(b, (uint32_t)(v >> 32));
    put32(b + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)((b[0] << 8) | b[1]);
}
static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)get16(b) << 16 | get16(b + 2);
}
static uint64_t get64(const uint8_t *b)
{
    return (uint64_t)get32(b) << 32 | get32(b + 4);
}

void rt_hdr_put(uint8_t *b, const rt_hdr *h)
{
    b[0] = RT_MAGIC;
    b[1] = h->kind;
    b[2] = h->flags;
    b[3] = h->dst_kind;
    put32(b + 4, h->job);
    put16(b + 8, h->channel);
    put16(b + 10, h->dst);
    put16(b + 12, h->src);
    put16(b + 14, h->sub);
}

int rt_hdr_get(rt_hdr *h, const uint8_t *b, size_t len)
{
    if (len < RT_HDR_LEN || b[0] != RT_MAGIC) return -1;
    h->kind = b[1];
    h->flags = b[2];
    h->dst_kind = b[3];
    h->job = get32(b + 4);
    h->channel = get16(b + 8);
    h->dst = get16(b + 10);
    h->src = get16(b + 12);
    h->sub = get16(b + 14);
    return 0;
}

int rt_key(uint8_t key[RT_KEY_LEN], const char *secret)
{
    static const uint8_t ctx[] = "arbor runtime job key v1";
    if (sodium_init() < 0 || !secret) return -1;
    return crypto_generichash(key, RT_KEY_LEN, (const uint8_t *)secret, strlen(secret), ctx,
                              sizeof ctx - 1) == 0
               ? 0
               : -1;
}

/* The bytes a JOIN's MAC covers: a label, then the message's fields after
 * the header: job, the ranks, and the `body` bytes after the header
 * (JOIN: size, base, counter, nonce, fabric; WELCOME: counter, nonce). */
static void join_mac(uint8_t mac[RT_MAC_LEN], const uint8_t *b, size_t body,
                     const uint8_t key[RT_KEY_LEN], const char *label)
{
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, key, RT_KEY_LEN);
    crypto_auth_hmacsha512256_update(&st, (const uint8_t *)label, strlen(label));
    crypto_auth_hmacsha512256_update(&st, b + 4, 4);  /* job */
    crypto_auth_hmacsha512256_update(&st, b + 10, 4); /* dst, src ranks */
    crypto_auth_hmacsha512256_update(&st, b + RT_HDR_LEN, body);
    crypto_auth_hmacsha512256_final(&st, mac);
}

uint32_t rt_fabric_id(const char *spec)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)spec; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

void rt_join_put(uint8_t *b, const rt_join *j, const uint8_t key[RT_KEY_LEN])
{
    rt_hdr h = {.kind = RT_K_JOIN, .job = j->job, .src = (uint16_t)j->rank};
    rt_hdr_put(b, &h);
    put32(b + 16, j->size);
    put32(b + 20, j->base);
    put64(b + 24, j->counter);
    memcpy(b + 32, j->nonce, RT_NONCE_LEN);
    put32(b + 48, j->fabric);
    join_mac(b + RT_HDR_LEN + RT_JOIN_BODY, b, RT_JOIN_BODY, key, "arbor-join-v2");
}

int rt_join_get(rt_join *j, const uint8_t *b, size_t len)
{
    rt_hdr h;
    if (len != RT_JOIN_LEN || rt_hdr_get(&h, b, len) < 0 || h.kind != RT_K_JOIN) return -1;
    j->job = h.job;
    j->rank = h.src;
    j->size = get32(b + 16);
    j->base = get32(b + 20);
    j->counter = get64(b + 24);
    memcpy(j->nonce, b + 32, RT_NONCE_LEN);
    j->fabric = get32(b + 48);
    return 0;
}

int rt_join_verify(const uint8_t *b, size_t len, const uint8_t key[RT_KEY_LEN])
{
    uint8_t mac[RT_MAC_LEN];
    if (len != RT_JOIN_LEN) return -1;
    join_mac(mac, b, RT_JOIN_BODY, key, "arbor-join-v2");
    return sodium_memcmp(mac, b + RT_HDR_LEN + RT_JOIN_BODY, RT_MAC_LEN) == 0 ? 0 : -1;
}

/* WELCOME: header (job, dst = the rank), counter, nonce (the JOIN's), MAC. */
void rt_welcome_put(uint8_t *b, const rt_join *j, const uint8_t key[RT_KEY_LEN])
{
    rt_hdr h = {
        .kind = RT_K_WELCOME, .job = j->job, .dst = (uint16_t)j->rank, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &h);
    put64(b + 16, j->counter);
    memcpy(b + 24, j->nonce, RT_NONCE_LEN);
    join_mac(b + 40, b, 24, key, "arbor-welcome-v1");
}

int rt_welcome_verify(const uint8_t *b, size_t len, const rt_join *j, const uint8_t key[RT_KEY_LEN])
{
    rt_hdr h;
    uint8_t mac[RT_MAC_LEN];
    if (len != RT_WELCOME_LEN || rt_hdr_get(&h, b, len) < 0 || h.kind != RT_K_WELCOME ||
        h.job != j->job || h.dst != j->rank || get64(b + 16) != j->counter ||
        memcmp(b + 24, j->nonce, RT_NONCE_LEN) != 0)
        return -1;
    join_mac(mac, b, 24, key, "arbor-welcome-v1");
    return sodium_memcmp(mac, b + 40, RT_MAC_LEN) == 0 ? 0 : -1;
}
