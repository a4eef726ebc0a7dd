/*
 * Fuzz target: the requester engine fed arbitrary packet sequences.
 *
 * The first bytes choose a configuration (kind, header-only, payload size,
 * subchannels with a fan-in table, first message id and start_seq). The
 * rest is a program of steps: start the next message, advance the clock
 * (running the expiry when due), deliver a header decoded from raw bytes,
 * or deliver a plausible packet (credit, repair credit, tail, replay,
 * REGISTER_ACK, END_ACK) near the offsets of the message in play.
 *
 * After every step: every emitted header passed arb_hdr_validate; at most
 * one normal request per (message, offset) for attempt 0 (each later
 * attempt is a new context and is answered each time); requests only for offsets of
 * a message the engine started; repair requests with agg_depth 0 and a
 * count of 1; each result delivered at most once and never more results
 * than the message has. A breach calls abort().
 */
#include "arbor/endpoint.h"
#include "fuzzkit.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXN 64

typedef struct msgrec {
    int started;
    uint32_t start, n;
    uint64_t requested, results;
    uint32_t nresults;
} msgrec;

typedef struct harness {
    arb_requester *q;
    arb_requester_config c;
    msgrec msgs[256];
    uint8_t in[MAXN * 32], out[MAXN * 32];
} harness;

static void on_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                    size_t len)
{
    harness *hs = ctx;
    require(arb_hdr_validate(h, len) == 0);
    require(len == 0 || payload != NULL);
    require(dst->kind == ARB_EP_DST_RESPONDER);
    if (h->packet_type != ARB_PT_DATA_REQUEST) {
        require(h->packet_type == ARB_PT_REGISTER || h->packet_type == ARB_PT_END);
        return;
    }
    require(h->offset_b == 1);
    if (h->repair) {
        require(h->agg_depth == 0);
        return; /* answered unconditionally, even for a finished message */
    }
    msgrec *m = &hs->msgs[h->message_id];
    require(m->started);
    uint32_t i = (h->offset_a - m->start) & ARB_OFFSET_MASK;
    require(i < m->n);
    /* every copy of a credit is answered (a switch re-credits where an
     * answer is missing): what may not happen is an answer for an index
     * that no credit named (checked above) */
    m->requested |= (uint64_t)1 << i;
    for (int t = 0; t < h->agg_depth; t++)
        require(h->fanin[t] >= 1);
}

static void on_result(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                      const uint8_t *data, size_t len)
{
    harness *hs = ctx;
    (void)data;
    (void)len;
    msgrec *m = &hs->msgs[msg_id];
    require(m->started);
    require(index < m->n);
    require(((m->start + index) & ARB_OFFSET_MASK) == offset);
    require(!((m->results >> index) & 1u));
    m->results |= (uint64_t)1 << index;
    m->nresults++;
    require(m->nresults <= m->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader rd = {data, size};
    harness *hs = calloc(1, sizeof *hs);
    require(hs != NULL);
    static const uint8_t fan[12] = {3, 2, 1, 1, 1, 1, 7, 1, 1, 2, 2, 2};

    arb_requester_config *c = &hs->c;
    arb_requester_config_default(c);
    uint8_t b0 = take(&rd), b1 = take(&rd), b2 = take(&rd);
    c->member = b0 & 7u;
    c->kind = (arb_ep_kind)((b0 >> 3) & 3u);
    c->ep.header_only = (b0 >> 5) & 1;
    c->ep.payload = (b0 & 0x40) ? 32 : 16;
    c->dtype = ARB_DTYPE_I32;
    c->op = c->kind <= ARB_EP_PULL_COMPLETION ? ARB_OP_SUM : ARB_OP_NOP;
    c->subchannels = 1u + (b1 & 3u);
    c->fanin = (b1 & 4) ? fan : NULL;
    c->ext = (b1 >> 3) & 1;
    c->first_msg_id = (b1 & 0x10) ? 255 : 0;
    c->first_seq = (b1 & 0x20) ? 0xFFFFF8u + (b2 & 7u) : b2;
    c->ep.retry = ARB_PS_PER_MS;
    c->ep.seed = (b1 & 0x40) != 0; /* seeded messages keep their input */
    c->send = on_send;
    c->send_ctx = hs;
    c->on_result = on_result;
    c->result_ctx = hs;
    if (arb_requester_new(&hs->q, c) != 0) abort();

    arb_time now = 0;
    uint8_t next_id = c->first_msg_id;
    uint32_t next_seq = c->first_seq;
    uint8_t pay[64];
    int steps = 0;

    while (rd.n && steps++ < 4000) {
        uint8_t op = take(&rd);
        switch (op & 7u) {
        case 0: { /* start the next message */
            uint32_t pk = (uint32_t)(take(&rd) % (MAXN + 1));
            uint64_t len = c->kind == ARB_EP_BARRIER ? 0 : (uint64_t)pk * c->ep.payload / 2;
            len -= len % 4;
            /* the record first: a credit held for this message is
             * answered inside start_message */
            msgrec *m = &hs->msgs[next_id], keep = *m;
            memset(m, 0, sizeof *m);
            m->started = 1;
            m->start = next_seq;
            m->n = len ? (uint32_t)((len + c->ep.payload - 1) / c->ep.payload) : 1;
            if (arb_requester_start_message(hs->q, next_id, len, hs->in, hs->out, now) == 0) {
                arb_requester_progress qp;
                arb_requester_get_progress(hs->q, &qp);
                require(qp.start_seq == m->start && qp.offsets == m->n);
                next_seq = (next_seq + m->n) & ARB_OFFSET_MASK;
                next_id++;
            } else {
                *m = keep;
            }
            break;
        }
        case 1: { /* time passes */
            uint8_t t = take(&rd);
            now += (arb_time)t * ARB_PS_PER_MS / 4;
            if (arb_requester_next_expiry(hs->q) <= now) arb_requester_on_expiry(hs->q, now);
            break;
        }
        case 2: { /* a header from raw bytes */
            uint8_t buf[64];
            arb_hdr h;
            const uint8_t *p;
            size_t len;
            if (fuzz_raw_header(&rd, buf, &h, &p, &len))
                arb_requester_recv(hs->q, &h, p, len, take(&rd) % 5, now);
            break;
        }
        default: { /* a plausible packet */
            arb_requester_progress qp;
            arb_requester_get_progress(hs->q, &qp);
            uint8_t x = take(&rd), y = take(&rd);
            arb_hdr h; /* the type set below */
            arb_hdr_init(&h, ARB_PT_REGISTER, (uint8_t)(qp.msg_id - ((y >> 6) == 3 ? 1 : 0)),
                         ARB_DTYPE_I32, 0);
            h.op = (uint8_t)c->op;
            uint32_t k = (qp.start_seq + (x & 31u)) & ARB_OFFSET_MASK;
            uint32_t p = (qp.start_seq + (y & 31u)) & ARB_OFFSET_MASK;
            size_t len = 0;
            switch (op >> 3 & 7u) {
            case 0:
                h.packet_type = ARB_PT_REGISTER_ACK;
                h.repair = 1;
                h.op = 0;
                h.offset_a = (x & 0x80) ? k : qp.start_seq;
                break;
            case 1:
                h.packet_type = ARB_PT_END_ACK;
                h.op = 0;
                h.offset_a = (x & 0x80) ? k : qp.start_seq;
                break;
            case 2: /* tail */
            case 3: /* tail replay */
                h.packet_type = ARB_PT_RESPONSE;
                h.offset_a = p;
                if (x & 0x40) {
                    h.payload_valid = 0;
                    h.payload_kind = ARB_PK_COMPLETION;
                } else {
                    h.payload_valid = 1;
                    h.repair = (op >> 3 & 7u) == 3;
                    h.payload_kind = h.repair ? ARB_PK_REPLAY : ARB_PK_DATA;
                    len = (x & 0x80) ? c->ep.payload : c->ep.payload / 2;
                }
                break;
            default: /* credit, sometimes repair, sometimes with a ride */
                h.packet_type = ARB_PT_RESPONSE;
                h.credit_valid = 1;
                h.repair = (op >> 3 & 7u) >= 6;
                h.offset_b = k;
                h.offset_a = (x & 0x40) ? p : k;
                h.attempt = (y & 0x04) ? (uint8_t)(1 + (x & 3u)) : 0; /* a retried context */
                if (!h.repair) {
                    h.agg_depth = (uint8_t)((y >> 5) & (c->ext ? 3u : 1u));
                    h.ext = c->ext;
                    h.agg_loc[0] = y;
                    if (c->ext) h.agg_loc[1] = x;
                }
                if (x & 0x80) {
                    h.payload_valid = 1;
                    h.payload_kind = h.repair ? ARB_PK_REPLAY : ARB_PK_DATA;
                    len = (y & 0x10) ? c->ep.payload : c->ep.payload / 2;
                } else if (!h.repair && (y & 0x08)) {
                    h.payload_kind = ARB_PK_COMPLETION;
                }
                break;
            }
            for (size_t i = 0; i < len; i++)
                pay[i] = take(&rd);
            arb_requester_recv(hs->q, &h, len ? pay : NULL, len, (uint32_t)(op >> 6), now);
            break;
        }
        }
        arb_requester_progress qp;
        arb_requester_get_progress(hs->q, &qp);
        require(qp.results <= qp.offsets);
        require(qp.answered <= qp.offsets);
    }
    arb_requester_free(hs->q);
    free(hs);
    return 0;
}
