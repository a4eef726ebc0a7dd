/*
 * Host-collective plans: the messages of each algorithm, with the
 * messages each waits for. Every builder emits the messages of one
 * connection in the order the connection carries them.
 *
 * Double binary tree (after NCCL's "Massively Scale Your Deep Learning
 * Training with NCCL 2.4"): the ranks sit at positions 1..n of an in-order
 * binary tree -- position p with lowest set bit b has the children p - b/2
 * and p + b/2 and the parent (p - b) | 2b, climbing past positions above
 * n; the root is the highest power of two <= n. Leaves are the odd
 * positions. Tree 0 puts rank r at position r + 1; tree 1 at n - r (n
 * even: the mirror) or ((r + 1) mod n) + 1 (n odd: the shift), so that
 * the ranks that are leaves in one tree are the inner nodes of the other.
 */
#include "hc_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static const char *const algo_names[] = {"auto",   "ring",  "tree",    "rd",
                                         "direct", "chain", "binomial"};

const char *arb_hc_algo_name(int a)
{
    return a >= 0 && a <= ARB_HC_BINOMIAL ? algo_names[a] : NULL;
}

int arb_hc_algo_parse(const char *name)
{
    for (int i = 0; name && i <= ARB_HC_BINOMIAL; i++)
        if (strcmp(name, algo_names[i]) == 0) return i;
    return ARB_ENOENT;
}

#define HC_RD_MAX_AUTO (64 * 1024) /* auto: recursive doubling up to this */

int arb_hc_algo_resolve(arb_coll c, arb_hc_algo a, uint64_t bytes)
{
    switch (c) {
    case ARB_COLL_ALLREDUCE:
        if (a == ARB_HC_AUTO) return bytes <= HC_RD_MAX_AUTO ? ARB_HC_RD : ARB_HC_RING;
        return a == ARB_HC_RING || a == ARB_HC_TREE || a == ARB_HC_RD ? (int)a : ARB_EINVAL;
    case ARB_COLL_REDUCE:
        if (a == ARB_HC_AUTO || a == ARB_HC_BINOMIAL) return ARB_HC_BINOMIAL;
        return a == ARB_HC_RING || a == ARB_HC_CHAIN ? ARB_HC_CHAIN : ARB_EINVAL;
    case ARB_COLL_BROADCAST:
        if (a == ARB_HC_AUTO || a == ARB_HC_RING || a == ARB_HC_CHAIN) return ARB_HC_CHAIN;
        return a == ARB_HC_BINOMIAL ? ARB_HC_BINOMIAL : ARB_EINVAL;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
        return a == ARB_HC_AUTO || a == ARB_HC_RING ? ARB_HC_RING : ARB_EINVAL;
    case ARB_COLL_BARRIER:
        return a == ARB_HC_AUTO || a == ARB_HC_RD ? ARB_HC_RD : ARB_EINVAL;
    case ARB_COLL_ALLTOALL:
        return a == ARB_HC_AUTO || a == ARB_HC_DIRECT ? ARB_HC_DIRECT : ARB_EINVAL;
    }
    return ARB_EINVAL;
}

/* ---- the builder ---------------------------------------------------------- */

void hc_plan_free(struct hc_plan *p)
{
    if (!p) return;
    arb_free(p->src);
    arb_free(p->dst);
    arb_free(p->conn);
    arb_free(p->bytes);
    arb_free(p->dep_off);
    arb_free(p->deps);
    arb_free(p->conn_src);
    arb_free(p->conn_dst);
    arb_free(p->conn_off);
    arb_free(p->conn_msgs);
    arb_free(p->rdep_off);
    arb_free(p->rdeps);
    arb_free(p->rconn_off);
    arb_free(p->rconns);
    arb_free(p->hkey);
    arb_free(p->conn_ch);
    arb_free(p);
}

static int grow(void **v, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint32_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *nv = arb_realloc(*v, (size_t)nc * elem);
    if (!nv) return ARB_ENOMEM;
    *v = nv;
    *cap = nc;
    return 0;
}

static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)c * 0x165667B19E3779F9ull;
    return (uint32_t)(h ^ (h >> 29));
}

/* The connection (src, dst, ch), made on first use; negative on no memory. */
static long conn_of(struct hc_plan *p, uint32_t src, uint32_t dst, uint32_t ch)
{
    if ((p->n_conns + 1) * 2 > p->hcap) {
        uint32_t ncap = p->hcap ? p->hcap * 2 : 256;
        uint32_t *nk = arb_calloc(ncap, sizeof *nk);
        if (!nk) return ARB_ENOMEM;
        for (uint32_t i = 0; i < p->n_conns; i++) {
            uint32_t h = hash3(p->conn_src[i], p->conn_dst[i], p->conn_ch[i]) & (ncap - 1);
            while (nk[h])
                h = (h + 1) & (ncap - 1);
            nk[h] = i + 1;
        }
        arb_free(p->hkey);
        p->hkey = nk;
        p->hcap = ncap;
    }
    uint32_t h = hash3(src, dst, ch) & (p->hcap - 1);
    while (p->hkey[h]) {
        uint32_t c = p->hkey[h] - 1;
        if (p->conn_src[c] == src && p->conn_dst[c] == dst && p->conn_ch[c] == ch) return c;
        h = (h + 1) & (p->hcap - 1);
    }
    if (p->n_conns + 1 > p->cap_conns) {
        uint32_t nc = p->cap_conns ? p->cap_conns * 2 : 64, c1 = p->cap_conns, c2 = c1, c3 = c1;
        if (grow((void **)&p->conn_src, &c1, nc, sizeof *p->conn_src) < 0 ||
            grow((void **)&p->conn_dst, &c2, nc, sizeof *p->conn_dst) < 0 ||
            grow((void **)&p->conn_ch, &c3, nc, sizeof *p->conn_ch) < 0)
            return ARB_ENOMEM;
        p->cap_conns = nc;
    }
    uint32_t c = p->n_conns++;
    p->conn_src[c] = src;
    p->conn_dst[c] = dst;
    p->conn_ch[c] = ch;
    p->hkey[h] = c + 1;
    return c;
}

/* Add message src -> dst on channel ch waiting for deps[0..nd). Returns
 * its index, or a negative error. */
static long add_msg(struct hc_plan *p, uint32_t src, uint32_t dst, uint32_t ch, uint64_t bytes,
                    const uint32_t *deps, uint32_t nd)
{
    long c = conn_of(p, src, dst, ch);
    if (c < 0) return c;
    uint32_t m = p->n_msgs;
    if (m + 2 > p->cap_msgs) { /* every per-message array has the same capacity */
        uint32_t nc = p->cap_msgs ? p->cap_msgs * 2 : 64;
        while (nc < m + 2)
            nc *= 2;
        uint32_t c1 = p->cap_msgs, c2 = c1, c3 = c1, c4 = c1, c5 = c1;
        if (grow((void **)&p->src, &c1, nc, sizeof *p->src) < 0 ||
            grow((void **)&p->dst, &c2, nc, sizeof *p->dst) < 0 ||
            grow((void **)&p->conn, &c3, nc, sizeof *p->conn) < 0 ||
            grow((void **)&p->bytes, &c4, nc, sizeof *p->bytes) < 0 ||
            grow((void **)&p->dep_off, &c5, nc, sizeof *p->dep_off) < 0)
            return ARB_ENOMEM;
        p->cap_msgs = nc;
    }
    if (grow((void **)&p->deps, &p->cap_deps, p->n_deps + nd, sizeof *p->deps) < 0)
        return ARB_ENOMEM;
    p->src[m] = src;
    p->dst[m] = dst;
    p->conn[m] = (uint32_t)c;
    p->bytes[m] = bytes;
    p->dep_off[m] = p->n_deps;
    for (uint32_t i = 0; i < nd; i++)
        p->deps[p->n_deps++] = deps[i];
    p->dep_off[m + 1] = p->n_deps;
    p->n_msgs = m + 1;
    return m;
}

/* The per-connection message lists and the reverse dependencies. */
static int finish(struct hc_plan *p)
{
    uint32_t nm = p->n_msgs, nc = p->n_conns;
    if (!p->dep_off && !(p->dep_off = arb_calloc(1, sizeof *p->dep_off))) return ARB_ENOMEM;
    p->conn_off = arb_calloc((size_t)nc + 1, sizeof *p->conn_off);
    p->conn_msgs = arb_malloc(((size_t)nm + 1) * sizeof *p->conn_msgs);
    p->rdep_off = arb_calloc((size_t)nm + 1, sizeof *p->rdep_off);
    p->rdeps = arb_malloc(((size_t)p->n_deps + 1) * sizeof *p->rdeps);
    if (!p->conn_off || !p->conn_msgs || !p->rdep_off || !p->rdeps) return ARB_ENOMEM;
    for (uint32_t m = 0; m < nm; m++)
        p->conn_off[p->conn[m] + 1]++;
    for (uint32_t c = 0; c < nc; c++)
        p->conn_off[c + 1] += p->conn_off[c];
    uint32_t *fill = arb_calloc((size_t)(nc > nm ? nc : nm) + 1, sizeof *fill);
    if (!fill) return ARB_ENOMEM;
    for (uint32_t m = 0; m < nm; m++) {
        uint32_t c = p->conn[m];
        p->conn_msgs[p->conn_off[c] + fill[c]++] = m;
    }
    for (uint32_t i = 0; i < p->n_deps; i++)
        p->rdep_off[p->deps[i] + 1]++;
    for (uint32_t m = 0; m < nm; m++)
        p->rdep_off[m + 1] += p->rdep_off[m];
    memset(fill, 0, ((size_t)(nc > nm ? nc : nm) + 1) * sizeof *fill);
    for (uint32_t m = 0; m < nm; m++)
        for (uint32_t i = p->dep_off[m]; i < p->dep_off[m + 1]; i++) {
            uint32_t d = p->deps[i];
            p->rdeps[p->rdep_off[d] + fill[d]++] = m;
        }
    arb_free(fill);
    arb_free(p->hkey);
    p->hkey = NULL;
    /* per rank, the connections it is an end of */
    p->rconn_off = arb_calloc((size_t)p->n + 1, sizeof *p->rconn_off);
    p->rconns = arb_malloc(((size_t)nc * 2 + 1) * sizeof *p->rconns);
    uint32_t *at = arb_calloc((size_t)p->n + 1, sizeof *at);
    if (!p->rconn_off || !p->rconns || !at) {
        arb_free(at);
        return ARB_ENOMEM;
    }
    for (uint32_t c = 0; c < nc; c++) {
        p->rconn_off[p->conn_src[c] + 1]++;
        p->rconn_off[p->conn_dst[c] + 1]++;
    }
    for (uint32_t r = 0; r < p->n; r++)
        p->rconn_off[r + 1] += p->rconn_off[r];
    for (uint32_t c = 0; c < nc; c++) {
        p->rconns[p->rconn_off[p->conn_src[c]] + at[p->conn_src[c]]++] = c;
        p->rconns[p->rconn_off[p->conn_dst[c]] + at[p->conn_dst[c]]++] = c;
    }
    arb_free(at);
    return 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Part j of P of b bytes (the first ones take the remainder). */
static uint64_t part(uint64_t b, uint64_t P, uint64_t j)
{
    return b / P + (j < b % P);
}

/* Block c of n of S bytes. */
static uint64_t block(uint64_t S, uint32_t n, uint32_t c)
{
    return S / n + (c < S % n);
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        long rc_ = (x);                                                                            \
        if (rc_ < 0) return (int)rc_;                                                              \
    } while (0)

/* Ring: `steps` steps of n messages per slice; at step k rank r sends block
 * (r - k) mod n of S (sliced) to r + 1, after rank r - 1's message of step
 * k - 1 (same slice). Index (k x P + j) x n + r. */
static int build_ring(struct hc_plan *p, uint64_t S, uint32_t steps, uint32_t P)
{
    uint32_t n = p->n;
    for (uint32_t k = 0; k < steps; k++)
        for (uint32_t j = 0; j < P; j++)
            for (uint32_t r = 0; r < n; r++) {
                uint32_t c = (r + n - k % n) % n, dep = 0;
                if (k > 0) dep = ((k - 1) * P + j) * n + (r + n - 1) % n;
                TRY(add_msg(p, r, (r + 1) % n, 0, part(block(S, n, c), P, j), &dep, k > 0));
            }
    return 0;
}

/* Chain from the root (broadcast: toward root + 1, root + 2, ...; reduce:
 * from root + n - 1 down to the root). Index h x P + j for hop h. */
static int build_chain(struct hc_plan *p, uint64_t S, uint32_t P, uint32_t root, int toward_root)
{
    uint32_t n = p->n;
    for (uint32_t h = 0; h + 1 < n; h++)
        for (uint32_t j = 0; j < P; j++) {
            uint32_t a, b, dep = (h - 1) * P + j;
            if (toward_root) { /* hop h: v = n-1-h -> v-1 (relative) */
                a = (root + n - 1 - h) % n;
                b = (root + n - 2 - h) % n;
            } else {
                a = (root + h) % n;
                b = (root + h + 1) % n;
            }
            TRY(add_msg(p, a, b, 0, part(S, P, j), &dep, h > 0));
        }
    return 0;
}

static uint32_t lowbit(uint32_t v)
{
    return v & (~v + 1);
}

/* Binomial tree on relative ranks v (rank = (v + root) mod n): the parent
 * of v > 0 is v without its lowest set bit. Reduce: v sends slice j up
 * once its children's slice j arrived; broadcast: v forwards to its
 * children once its parent's slice j arrived. Message of v (reduce: v ->
 * parent; broadcast: parent -> v) has index j x (n-1) + v - 1. */
static int build_binomial(struct hc_plan *p, uint64_t S, uint32_t P, uint32_t root, int reduce)
{
    uint32_t n = p->n, deps[33];
    for (uint32_t j = 0; j < P; j++)
        for (uint32_t v = 1; v < n; v++) {
            uint32_t parent = v - lowbit(v), nd = 0;
            uint32_t base = j * (n - 1);
            if (reduce) { /* children v + 2^k, 2^k below v's lowest bit */
                for (uint32_t b = 1; b < lowbit(v) && v + b < n; b <<= 1)
                    deps[nd++] = base + v + b - 1;
            } else if (parent > 0) {
                deps[nd++] = base + parent - 1;
            }
            uint32_t a = (v + root) % n, q = (parent + root) % n;
            TRY(add_msg(p, reduce ? a : q, reduce ? q : a, 0, part(S, P, j), deps, nd));
        }
    return 0;
}

/* The parent position of p in the in-order tree over positions 1..n
 * (0 for the root). */
static uint32_t tree_parent(uint32_t pos, uint32_t n)
{
    uint32_t root = 1;
    while (root * 2 <= n)
        root *= 2;
    if (pos == root) return 0;
    uint32_t q = pos;
    do {
        uint32_t b = lowbit(q);
        q = (q - b) | (b << 1);
    } while (q > n);
    return q;
}

static uint32_t tree_pos(uint32_t t, uint32_t r, uint32_t n)
{
    if (t == 0) return r + 1;
    return n % 2 == 0 ? n - r : (r + 1) % n + 1;
}

/* Double binary tree AllReduce: per tree t (channel 2t up, 2t + 1 down)
 * and slice j: every non-root v sends up once its children's slices
 * arrived; the root's children get the slice down once every child of the
 * root sent it up; every other node forwards down once its parent's came. */
static int build_tree(struct hc_plan *p, uint64_t S, uint32_t P)
{
    uint32_t n = p->n;
    uint32_t *par = arb_malloc((size_t)n * sizeof *par),
             *rank_at = arb_malloc(((size_t)n + 1) * sizeof *rank_at);
    uint32_t *up = arb_malloc((size_t)n * sizeof *up), *down = arb_malloc((size_t)n * sizeof *down);
    uint32_t *kids = arb_malloc((size_t)n * 2 * sizeof *kids),
             *nk = arb_malloc((size_t)n * sizeof *nk);
    int rc = !par || !rank_at || !up || !down || !kids || !nk ? ARB_ENOMEM : 0;
    for (uint32_t t = 0; rc == 0 && t < 2; t++) {
        uint64_t half = S / 2 + (t == 0 ? S % 2 : 0);
        for (uint32_t r = 0; r < n; r++)
            rank_at[tree_pos(t, r, n)] = r;
        uint32_t root = UINT32_MAX;
        for (uint32_t r = 0; r < n; r++) {
            uint32_t pp = tree_parent(tree_pos(t, r, n), n);
            par[r] = pp ? rank_at[pp] : UINT32_MAX;
            if (!pp) root = r;
        }
        for (uint32_t r = 0; r < n; r++)
            nk[r] = 0;
        for (uint32_t r = 0; r < n; r++)
            if (par[r] != UINT32_MAX && nk[par[r]] < 2) kids[2 * par[r] + nk[par[r]]++] = r;
        for (uint32_t j = 0; rc == 0 && j < P; j++) {
            uint64_t b = part(half, P, j);
            /* up: children before parents (by position height) */
            for (uint32_t h = 1; rc == 0 && h <= n; h <<= 1)
                for (uint32_t r = 0; rc == 0 && r < n; r++) {
                    if (lowbit(tree_pos(t, r, n)) != h || r == root) continue;
                    uint32_t deps[2], nd = 0;
                    for (uint32_t c = 0; c < nk[r]; c++)
                        deps[nd++] = up[kids[2 * r + c]];
                    long m = add_msg(p, r, par[r], 2 * t, b, deps, nd);
                    if (m < 0) rc = (int)m;
                    up[r] = (uint32_t)m;
                }
            /* down: parents before children */
            for (uint32_t h = 1u << 31; rc == 0 && h; h >>= 1)
                for (uint32_t r = 0; rc == 0 && r < n; r++) {
                    if (lowbit(tree_pos(t, r, n)) != h || r == root) continue;
                    uint32_t deps[2], nd = 0;
                    if (par[r] == root) {
                        for (uint32_t c = 0; c < nk[root]; c++)
                            deps[nd++] = up[kids[2 * root + c]];
                    } else {
                        deps[nd++] = down[par[r]];
                    }
                    long m = add_msg(p, par[r], r, 2 * t + 1, b, deps, nd);
                    if (m < 0) rc = (int)m;
                    down[r] = (uint32_t)m;
                }
        }
    }
    arb_free(par);
    arb_free(rank_at);
    arb_free(up);
    arb_free(down);
    arb_free(kids);
    arb_free(nk);
    return rc;
}

/* Recursive doubling over the largest power of two p2 <= n: with rem =
 * n - p2, rank 2i (i < rem) first hands its buffer to 2i + 1 and gets the
 * result back last; the others exchange S with the partner id ^ 2^k at
 * step k, each send waiting for the previous step's receive. */
static int build_rd(struct hc_plan *p, uint64_t S, uint32_t P)
{
    uint32_t n = p->n, p2 = 1, steps = 0;
    while (p2 * 2 <= n) {
        p2 *= 2;
        steps++;
    }
    uint32_t rem = n - p2;
    uint32_t *rank_of = arb_malloc((size_t)p2 * sizeof *rank_of);
    uint32_t *last = arb_malloc((size_t)p2 * P * sizeof *last); /* id x P + j: its latest receive */
    if (!rank_of || !last) {
        arb_free(rank_of);
        arb_free(last);
        return ARB_ENOMEM;
    }
    for (uint32_t i = 0; i < p2; i++)
        rank_of[i] = i < rem ? 2 * i + 1 : i + rem;
    int rc = 0;
    for (uint32_t i = 0; i < p2 * P; i++)
        last[i] = UINT32_MAX;
    for (uint32_t i = 0; rc == 0 && i < rem; i++) /* fold in */
        for (uint32_t j = 0; rc == 0 && j < P; j++) {
            long m = add_msg(p, 2 * i, 2 * i + 1, 0, part(S, P, j), NULL, 0);
            if (m < 0) rc = (int)m;
            last[i * P + j] = (uint32_t)m;
        }
    uint32_t *cur = arb_malloc((size_t)p2 * P * sizeof *cur);
    if (!cur) rc = ARB_ENOMEM;
    for (uint32_t k = 0; rc == 0 && k < steps; k++) {
        for (uint32_t j = 0; rc == 0 && j < P; j++)
            for (uint32_t i = 0; rc == 0 && i < p2; i++) {
                uint32_t partner = i ^ (1u << k), dep = last[i * P + j];
                long m = add_msg(p, rank_of[i], rank_of[partner], 1 + k, part(S, P, j), &dep,
                                 dep != UINT32_MAX);
                if (m < 0) rc = (int)m;
                cur[partner * P + j] = (uint32_t)m; /* what partner receives */
            }
        memcpy(last, cur, (size_t)p2 * P * sizeof *last);
    }
    for (uint32_t i = 0; rc == 0 && i < rem; i++) /* hand the result back */
        for (uint32_t j = 0; rc == 0 && j < P; j++) {
            uint32_t dep = last[i * P + j];
            long m =
                add_msg(p, 2 * i + 1, 2 * i, 1 + steps, part(S, P, j), &dep, dep != UINT32_MAX);
            if (m < 0) rc = (int)m;
        }
    arb_free(cur);
    arb_free(rank_of);
    arb_free(last);
    p->steps = steps + (rem ? 2 : 0);
    return rc;
}

/* Direct AllToAll: rank r sends block d of S to rank d, in the order
 * r + 1, r + 2, ..., each on its own connection. */
static int build_alltoall(struct hc_plan *p, uint64_t S, uint32_t P)
{
    uint32_t n = p->n;
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t d = 1; d < n; d++) {
            uint32_t to = (r + d) % n;
            for (uint32_t j = 0; j < P; j++)
                TRY(add_msg(p, r, to, 0, part(block(S, n, to), P, j), NULL, 0));
        }
    return 0;
}

#define HC_MAX_MSGS (1u << 24)
#define TR_MAX_RANKS_HC (1u << 20) /* n x n stays far from overflow */

/* Messages of a plan (as the builders make them). */
static uint64_t msg_count(arb_coll c, arb_hc_algo a, uint64_t n, uint64_t P)
{
    uint64_t p2 = 1, lg = 0;
    while (p2 * 2 <= n) {
        p2 *= 2;
        lg++;
    }
    uint64_t rd = p2 * lg + 2 * (n - p2);
    switch (c) {
    case ARB_COLL_ALLREDUCE:
        return (a == ARB_HC_RING ? 2 * (n - 1) * n : a == ARB_HC_TREE ? 4 * (n - 1) : rd) * P;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
        return (n - 1) * n * P;
    case ARB_COLL_REDUCE:
    case ARB_COLL_BROADCAST:
        return (n - 1) * P;
    case ARB_COLL_BARRIER:
        return rd;
    case ARB_COLL_ALLTOALL:
        return n * (n - 1) * P;
    }
    return 0;
}

/* The unit a message carries, sliced. */
static uint64_t unit_bytes(arb_coll c, arb_hc_algo a, uint32_t n, uint64_t S)
{
    if (c == ARB_COLL_BARRIER) return 1;
    if (c == ARB_COLL_ALLTOALL || a == ARB_HC_RING) return S / n;
    if (a == ARB_HC_TREE) return S / 2;
    return S;
}

int hc_plan_build(struct hc_plan **out, arb_coll coll, arb_hc_algo algo, uint32_t n, uint64_t bytes,
                  uint64_t chunk, uint32_t root, char *err, size_t errlen)
{
    *out = NULL;
    int ra = arb_hc_algo_resolve(coll, algo, bytes);
    if (ra < 0)
        return arb_errf(err, errlen, ARB_EINVAL, "algorithm: %s has no algorithm %s",
                        arb_coll_name(coll) ? arb_coll_name(coll) : "?",
                        arb_hc_algo_name(algo) ? arb_hc_algo_name(algo) : "?");
    algo = (arb_hc_algo)ra;
    if (n < 2) return arb_errf(err, errlen, ARB_EINVAL, "ranks: %u, at least 2 are needed", n);
    if ((coll == ARB_COLL_REDUCE || coll == ARB_COLL_BROADCAST) && root >= n)
        return arb_errf(err, errlen, ARB_EINVAL, "root: rank %u is not below the %u ranks", root,
                        n);
    uint64_t unit = unit_bytes(coll, algo, n, bytes);
    if (unit == 0)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "size: %llu bytes is too small for %s over %u ranks",
                        (unsigned long long)bytes, arb_hc_algo_name(algo), n);
    uint64_t P = chunk && coll != ARB_COLL_BARRIER ? ceil_div(unit, chunk) : 1;
    uint64_t msgs = msg_count(coll, algo, n, P);
    if (P > HC_MAX_MSGS || n > TR_MAX_RANKS_HC || msgs > HC_MAX_MSGS)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "chunk: %llu slices of %u ranks make %llu messages, above %u",
                        (unsigned long long)P, n, (unsigned long long)msgs, HC_MAX_MSGS);
    struct hc_plan *p = arb_calloc(1, sizeof *p);
    if (!p) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    p->n = n;
    p->slices = (uint32_t)P;
    int rc = 0;
    switch (coll) {
    case ARB_COLL_ALLREDUCE:
        if (algo == ARB_HC_RING) {
            p->steps = 2 * (n - 1);
            rc = build_ring(p, bytes, p->steps, p->slices);
        } else if (algo == ARB_HC_TREE) {
            for (uint32_t v = 2; v <= n; v <<= 1) /* up and down the tree's depth */
                p->steps += 2;
            rc = build_tree(p, bytes, p->slices);
        } else {
            rc = build_rd(p, bytes, p->slices);
        }
        break;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
        p->steps = n - 1;
        rc = build_ring(p, bytes, p->steps, p->slices);
        break;
    case ARB_COLL_REDUCE:
    case ARB_COLL_BROADCAST:
        if (algo == ARB_HC_CHAIN) {
            p->steps = n - 1;
            rc = build_chain(p, bytes, p->slices, root, coll == ARB_COLL_REDUCE);
        } else {
            for (uint32_t v = 1; v < n; v <<= 1)
                p->steps++;
            rc = build_binomial(p, bytes, p->slices, root, coll == ARB_COLL_REDUCE);
        }
        break;
    case ARB_COLL_BARRIER:
        rc = build_rd(p, 1, 1);
        break;
    case ARB_COLL_ALLTOALL:
        p->steps = 1;
        rc = build_alltoall(p, bytes, p->slices);
        break;
    }
    if (rc == 0) rc = finish(p);
    if (rc < 0) {
        hc_plan_free(p);
        return arb_errf(err, errlen, rc, "out of memory");
    }
    *out = p;
    return 0;
}

int hc_plan_p2p(struct hc_plan **out, uint64_t bytes)
{
    *out = NULL;
    struct hc_plan *p = arb_calloc(1, sizeof *p);
    if (!p) return ARB_ENOMEM;
    p->n = 2;
    p->slices = p->steps = 1;
    int rc = (int)add_msg(p, 0, 1, 0, bytes, NULL, 0);
    if (rc >= 0) rc = finish(p);
    if (rc < 0) {
        hc_plan_free(p);
        return ARB_ENOMEM;
    }
    *out = p;
    return 0;
}
