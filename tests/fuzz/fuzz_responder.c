/*
 * Fuzz target: the responder engine fed arbitrary packet sequences.
 *
 * The first five bytes choose a configuration (members, kind, header-only,
 * window, repair budget, payload size, subchannels, first message id and
 * start_seq, the latter often just below the 24-bit wrap; then the
 * recovery: credits per offset in the network, order-based detection,
 * AGG_MISS limit, silences that kill a tree). The rest is a
 * program of steps: start the next message, advance the clock (and run the
 * expiry when due), deliver a header decoded from raw bytes, or deliver a
 * plausible packet built from a few bytes (a REGISTER, master, repair
 * request, END or AGG_MISS near the offsets in play, from a member, a
 * non-member or a switch; masters and AGG_MISS name attempt 0..3 from the
 * step byte's top bits).
 *
 * After every step: every emitted header passed arb_hdr_validate; no
 * offset was committed twice; every commit counted R contributions; no
 * message committed more offsets than it has; normal credits outstanding
 * never passed the window, repair credits never the budget; no normal
 * credit carries an attempt at or above the configured credits per offset;
 * a failed channel sends nothing more. A breach calls abort().
 */
#include "arbor/endpoint.h"
#include "fuzzkit.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXN 64 /* packets per message in this target */

typedef struct msgrec {
    int started;
    uint32_t n;
    uint64_t committed; /* bitmap by index */
    uint32_t ncommitted;
} msgrec;

typedef struct harness {
    arb_responder *r;
    uint32_t members, window, budget, attempts;
    int failed; /* arb_responder_error was set: nothing may be sent */
    msgrec msgs[256];
    uint8_t own[MAXN * 32], result[MAXN * 32];
} harness;

static void on_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                    size_t len)
{
    harness *hs = ctx;
    require(arb_hdr_validate(h, len) == 0);
    require(len == 0 || payload != NULL);
    require(dst->kind <= ARB_EP_DST_MEMBER);
    if (dst->kind == ARB_EP_DST_MEMBER) require(dst->member < hs->members);
    require(!hs->failed);
    if (h->packet_type == ARB_PT_RESPONSE && h->credit_valid && !h->repair)
        require(h->attempt < hs->attempts);
}

static void on_commit(void *ctx, const arb_commit_info *ci)
{
    harness *hs = ctx;
    uint32_t index = ci->index, count = ci->count;
    msgrec *m = &hs->msgs[ci->msg_id];
    require(m->started);
    require(index < m->n);
    require(!((m->committed >> index) & 1u));
    m->committed |= (uint64_t)1 << index;
    m->ncommitted++;
    require(m->ncommitted <= m->n);
    require(count == hs->members);
    /* nothing commits before every member registered (early credits too) */
    arb_responder_progress pr;
    arb_responder_get_progress(hs->r, &pr);
    require(pr.registered == hs->members);
}

static void check(harness *hs)
{
    arb_responder_progress pr;
    arb_responder_get_progress(hs->r, &pr);
    require(pr.committed <= pr.offsets || pr.offsets == 0);
    require(pr.issued <= pr.offsets || pr.offsets == 0);
    require(pr.outstanding <= hs->window);
    arb_responder_stats st;
    arb_responder_get_stats(hs->r, &st);
    require(st.peak_repairs <= hs->budget);
    require(st.peak_outstanding <= hs->window);
    if (arb_responder_error(hs->r)) {
        arb_responder_failure f;
        arb_responder_get_failure(hs->r, &f);
        require(f.error == ARB_ETIMEDOUT && f.n_missing <= hs->members);
        require(arb_responder_next_expiry(hs->r) == ARB_TIME_NEVER);
        hs->failed = 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader rd = {data, size};
    harness *hs = calloc(1, sizeof *hs);
    require(hs != NULL);

    arb_responder_config c;
    arb_responder_config_default(&c);
    uint8_t b0 = take(&rd), b1 = take(&rd), b2 = take(&rd), b3 = take(&rd), b4 = take(&rd);
    c.members = 1u + (b0 & 7u);
    c.kind = (arb_ep_kind)((b0 >> 3) & 3u);
    c.ep.header_only = (b0 >> 5) & 1;
    c.ep.payload = (b0 & 0x40) ? 32 : 16;
    c.dtype = (b0 & 0x80) ? ARB_DTYPE_I64 : ARB_DTYPE_I32;
    c.op = c.kind <= ARB_EP_PULL_COMPLETION ? (arb_op)(1 + b1 % 3) : ARB_OP_NOP;
    c.ep.window = 1u + (b1 >> 2 & 7u);
    c.repair_budget = 1u + (b1 >> 5);
    c.subchannels = 1u + (b2 & 3u);
    c.ring_factor = 1u + (b2 >> 2 & 3u);
    c.first_msg_id = (b2 & 0x10) ? 254 : 0;
    c.first_seq = (b2 & 0x20) ? 0xFFFFF0u + (b3 & 15u) : b3;
    c.ep.timeout = ARB_PS_PER_MS;
    c.ep.adaptive_timeout = (b2 & 0x40) != 0;
    c.ep.dynamic_subchannels = (b2 & 0x80) != 0;
    c.ep.attempts = 1u + (b4 & 7u);
    c.ep.order_detection = !(b4 & 8u);
    c.ep.miss_limit = 1u + (b4 >> 4 & 3u);
    c.ep.dead_after = 1u + (b4 >> 6);
    c.ep.timeout_min = 20 * ARB_PS_PER_US;
    c.ep.repair_tries = 4;
    c.ep.early = (b3 & 0x40) != 0; /* a first credit before registration */
    c.ep.seed = (b3 & 0x80) != 0;  /* a one-offset AllReduce's credit carries its input */
    c.send = on_send;
    c.send_ctx = hs;
    c.on_commit = on_commit;
    c.commit_ctx = hs;
    hs->members = c.members;
    hs->window = c.ep.window;
    hs->budget = c.repair_budget;
    hs->attempts = c.ep.attempts;
    if (arb_responder_new(&hs->r, &c) != 0) abort();
    for (size_t i = 0; i < sizeof hs->own; i++)
        hs->own[i] = (uint8_t)(i * 7);

    arb_time now = 0;
    uint8_t next_id = c.first_msg_id;
    uint32_t seq = c.first_seq; /* start of the next message started locally */
    uint32_t cur_start = c.first_seq;
    uint8_t pay[64];
    int steps = 0;

    while (rd.n && steps++ < 4000) {
        uint8_t op = take(&rd);
        switch (op & 7u) {
        case 0: { /* start the next message */
            uint32_t pk = (uint32_t)(take(&rd) % (MAXN + 1));
            uint64_t len = c.kind == ARB_EP_BARRIER ? 0 : (uint64_t)pk * c.ep.payload / 2;
            len -= len % (c.dtype == ARB_DTYPE_I64 ? 8 : 4);
            uint32_t n = len ? (uint32_t)((len + c.ep.payload - 1) / c.ep.payload) : 1;
            if (arb_responder_start_message(hs->r, next_id, len, hs->own, hs->result, now) == 0) {
                msgrec *m = &hs->msgs[next_id];
                memset(m, 0, sizeof *m);
                m->started = 1;
                m->n = n;
                next_id++;
                seq = (seq + n) & ARB_OFFSET_MASK;
            }
            break;
        }
        case 1: { /* time passes */
            uint8_t t = take(&rd);
            now += (arb_time)t * (t & 0x80 ? ARB_PS_PER_MS / 8 : ARB_PS_PER_US);
            if (arb_responder_next_expiry(hs->r) <= now) arb_responder_on_expiry(hs->r, now);
            break;
        }
        case 2: { /* a header from raw bytes */
            uint8_t buf[64];
            arb_hdr h;
            const uint8_t *p;
            size_t len;
            if (fuzz_raw_header(&rd, buf, &h, &p, &len)) {
                int from = (int)(take(&rd) % 10) - 2;
                arb_responder_recv(hs->r, &h, p, len, from, now);
            }
            break;
        }
        default: { /* a plausible packet */
            arb_responder_progress pr;
            arb_responder_get_progress(hs->r, &pr);
            cur_start = pr.start_seq;
            uint8_t x = take(&rd), y = take(&rd);
            arb_hdr h; /* the type set below */
            arb_hdr_init(&h, ARB_PT_REGISTER,
                         (uint8_t)(pr.msg_id + (y >> 6 == 3   ? 1
                                                : y >> 6 == 2 ? 255
                                                              : 0)),
                         (uint8_t)c.dtype, 0);
            uint32_t k = (cur_start + (x & 63u)) & ARB_OFFSET_MASK;
            int from = (y & 0x20) ? (int)(y & 7u) % (int)(c.members + 1) : ARB_EP_FROM_SWITCH;
            if ((y & 0x38) == 0x38) from = ARB_EP_NOT_MEMBER;
            size_t len = 0;
            switch (op >> 3 & 7u) {
            case 0:
                h.packet_type = ARB_PT_REGISTER;
                h.repair = 1;
                h.offset_a = (y & 0x10) ? k : cur_start;
                break;
            case 1:
                h.packet_type = ARB_PT_END;
                h.offset_a = (y & 0x10) ? k : cur_start;
                break;
            case 2:
                h.packet_type = ARB_PT_AGG_MISS;
                h.offset_a = k;
                h.attempt = (uint8_t)(op >> 6);
                break;
            case 3:
            case 4:
            case 5:
                h.packet_type = ARB_PT_DATA_REQUEST;
                h.op = (uint8_t)c.op;
                h.offset_a = k;
                h.repair = (op >> 3 & 7u) == 5;
                h.offset_b = h.repair ? 1 : ((y & 0x10) ? c.members : 1u + (y & 3u));
                h.aggregated = !h.repair;
                if (!h.repair) h.attempt = (uint8_t)(op >> 6);
                if (!(x & 0x40)) {
                    len = (x & 0x80) ? c.ep.payload : c.ep.payload / 2;
                    h.payload_valid = 1;
                }
                break;
            default:
                h.packet_type = ARB_PT_RESPONSE; /* never expected by a responder */
                h.credit_valid = 1;
                h.offset_b = k;
                break;
            }
            for (size_t i = 0; i < len; i++)
                pay[i] = take(&rd);
            arb_responder_recv(hs->r, &h, len ? pay : NULL, len, from, now);
            break;
        }
        }
        check(hs);
    }
    arb_responder_free(hs->r);
    free(hs);
    return 0;
}
