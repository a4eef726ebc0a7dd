/*
 * arbor wire encode's header search. The codec's per-type table
 * (src/wire/hdr.c, docs/wire.md) makes some fields depend on the packet
 * type: a REGISTER needs repair = 1, a DATA_REQUEST offset_b >= 1, a bare
 * RESPONSE a credit. Starting from zeros, encode would refuse a packet the
 * user described correctly and blame a field the user never gave. So the
 * fields of enum wire_dim the user did not give are searched, in order,
 * for the first valid header; when the given ones admit none, the search
 * runs again with the given ones free too, and the fewest of them that
 * must change are named with what the type needs instead.
 */
#include "wire_fit.h"

#include "cli.h"

#include <stdio.h>
#include <string.h>

#define MAX_CAND 4
#define MAX_ALTS 3

struct space {
    uint32_t cand[WD_COUNT][MAX_CAND]; /* cand[d][0]: the start value */
    int n[WD_COUNT];
};

static const char *const dim_name[WD_COUNT] = {
    "payload", "payload_kind", "agg_depth",    "aggregated", "op",
    "attempt", "repair",       "credit_valid", "offset_b",   "fanin"};

static int given(const struct wire_fit *f, int d)
{
    return (f->given >> d) & 1;
}

/* Dimension d's value in the start header (WD_PAYLOAD, WD_FANIN: 0, as
 * given; their other value, 1, is none and ones below agg_depth). */
static uint32_t start_value(const arb_hdr *h, int d)
{
    switch (d) {
    case WD_KIND:
        return h->payload_kind;
    case WD_DEPTH:
        return h->agg_depth;
    case WD_AGGREGATED:
        return h->aggregated;
    case WD_OP:
        return h->op;
    case WD_ATTEMPT:
        return h->attempt;
    case WD_REPAIR:
        return h->repair;
    case WD_CREDIT:
        return h->credit_valid;
    case WD_OFFB:
        return h->offset_b;
    default:
        return 0;
    }
}

/* Payload values: the one given (or none), none, one element added. */
enum { PL_START = 0, PL_NONE = 1, PL_ADD = 2 };

/* The values dimension d may take besides its start, in the order tried;
 * a payload is added only when searching for what the user must add. */
static int alternatives(const struct wire_fit *f, int d, int lock, uint32_t alt[MAX_CAND])
{
    switch (d) {
    case WD_PAYLOAD:
        alt[0] = f->payload_len ? PL_NONE : PL_ADD;
        return f->payload_len || !lock ? 1 : 0;
    case WD_KIND:
        alt[0] = ARB_PK_DATA;
        alt[1] = ARB_PK_COMPLETION;
        alt[2] = ARB_PK_REPLAY;
        return 3;
    case WD_OP:
        alt[0] = ARB_OP_NOP;
        return 1;
    case WD_REPAIR:
    case WD_CREDIT:
    case WD_OFFB:
        alt[0] = 0;
        alt[1] = 1;
        return 2;
    case WD_FANIN:
        alt[0] = 1;
        return 1;
    default: /* agg_depth, aggregated, attempt: 0 */
        alt[0] = 0;
        return 1;
    }
}

/* The values each dimension may take: a given one its own only when lock. */
static void make_space(const struct wire_fit *f, int lock, struct space *s)
{
    for (int d = 0; d < WD_COUNT; d++) {
        s->cand[d][0] = start_value(&f->h, d);
        s->n[d] = 1;
        if (lock && given(f, d)) continue;
        uint32_t alt[MAX_CAND];
        int na = alternatives(f, d, lock, alt);
        for (int i = 0; i < na; i++)
            if (alt[i] != s->cand[d][0] && s->n[d] < MAX_CAND) s->cand[d][s->n[d]++] = alt[i];
    }
}

/* The header and payload length of one point of the space. */
static void apply(const struct wire_fit *f, const struct space *s, const int idx[WD_COUNT],
                  arb_hdr *h, size_t *plen)
{
    *h = f->h;
    *plen = f->payload_len;
    uint32_t pl = s->cand[WD_PAYLOAD][idx[WD_PAYLOAD]];
    if (pl == PL_NONE) {
        *plen = 0;
        if (!f->payload_valid_given) h->payload_valid = 0;
    } else if (pl == PL_ADD) {
        size_t es = arb_dtype_size(h->dtype);
        *plen = es ? es : 1;
        if (!f->payload_valid_given) h->payload_valid = 1;
    }
    h->payload_kind = (uint8_t)s->cand[WD_KIND][idx[WD_KIND]];
    h->agg_depth = (uint8_t)s->cand[WD_DEPTH][idx[WD_DEPTH]];
    h->aggregated = (uint8_t)s->cand[WD_AGGREGATED][idx[WD_AGGREGATED]];
    h->op = (uint8_t)s->cand[WD_OP][idx[WD_OP]];
    h->attempt = (uint8_t)s->cand[WD_ATTEMPT][idx[WD_ATTEMPT]];
    h->repair = (uint8_t)s->cand[WD_REPAIR][idx[WD_REPAIR]];
    h->credit_valid = (uint8_t)s->cand[WD_CREDIT][idx[WD_CREDIT]];
    h->offset_b = s->cand[WD_OFFB][idx[WD_OFFB]];
    if (s->cand[WD_FANIN][idx[WD_FANIN]] == 1)
        for (int i = 0; i < h->agg_depth && i < ARB_MAX_DEPTH; i++)
            h->fanin[i] = 1;
}

/* The next point, the last dimension fastest; 0 after the last. */
static int next_point(const struct space *s, int idx[WD_COUNT])
{
    for (int d = WD_COUNT - 1; d >= 0; d--) {
        if (++idx[d] < s->n[d]) return 1;
        idx[d] = 0;
    }
    return 0;
}

/* "a REGISTER", "an END". */
static const char *article(const arb_hdr *h)
{
    const char *n = arb_ptype_name(h->packet_type);
    return n && strchr("AEIOU", n[0]) ? "an" : "a";
}

/* Dimension d of header h (with payload length plen) as the user writes it. */
static void show(const struct wire_fit *f, int d, const arb_hdr *h, size_t plen, char *buf,
                 size_t len)
{
    switch (d) {
    case WD_PAYLOAD:
        if (!plen)
            snprintf(buf, len, "no payload");
        else if (!f->payload_len)
            snprintf(buf, len, "a payload (payload=HEX or payload_len=N)");
        else if (strcmp(f->payload_name, "payload_len") == 0)
            snprintf(buf, len, "payload_len=%zu", plen);
        else
            snprintf(buf, len, "a payload (%zu B)", plen);
        return;
    case WD_KIND:
        snprintf(buf, len, "payload_kind=%s", arb_pkind_name(h->payload_kind));
        return;
    case WD_OP:
        snprintf(buf, len, "op=%s", arb_op_name(h->op));
        return;
    case WD_FANIN:
        snprintf(buf, len, "fanin=%u,%u,%u", h->fanin[0], h->fanin[1], h->fanin[2]);
        return;
    default:
        snprintf(buf, len, "%s=%u", dim_name[d], start_value(h, d));
        return;
    }
}

/* A field the header holds out of every row's reach (version, type, kind,
 * dtype, depth without the 20 B header) or a payload that does not fit its
 * flag or dtype: one message about it, or 0 when there is none. */
static int field_problem(const struct wire_fit *f, char *msg, size_t len)
{
    const arb_hdr *h = &f->h;
    int rc = arb_hdr_validate(h, f->payload_len);
    const char *code = arb_errname(rc);
    if (h->payload_kind == ARB_PK_SEED && h->packet_type == ARB_PT_DATA_REQUEST &&
        (h->repair || !h->aggregated))
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_FLAG,
                        "payload_kind=SEED: a request carries a seed only as a switch's aggregate "
                        "(aggregated=1, repair=0) (%s)",
                        arb_errname(ARB_EWIRE_PAYLOAD_FLAG));
    if (h->payload_kind == ARB_PK_SEED && h->packet_type == ARB_PT_RESPONSE &&
        (h->repair || (given(f, WD_CREDIT) && !h->credit_valid)))
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_FLAG,
                        "payload_kind=SEED: only a normal credit (credit_valid=1, repair=0) "
                        "carries a seed (%s)",
                        arb_errname(ARB_EWIRE_PAYLOAD_FLAG));
    if (h->packet_type == ARB_PT_RESPONSE && h->payload_kind == ARB_PK_SEED &&
        h->offset_a != h->offset_b)
        /* (a RESPONSE of a seed can only be a credit: say so to one that
         * the user made a tail, by a key or an example) */
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_FLAG,
                        "payload_kind=SEED: %sa credit's seed is the input to its own offset, so "
                        "offset_a=%u must equal offset_b=%u (%s)",
                        !h->credit_valid && (f->example || given(f, WD_CREDIT))
                            ? "a tail (credit_valid=0) carries no seed, and "
                            : "",
                        h->offset_a, h->offset_b, arb_errname(ARB_EWIRE_PAYLOAD_FLAG));
    switch (rc) {
    case ARB_EWIRE_VERSION:
        return arb_errf(msg, len, rc, "version=%u: the header's version is %d (%s)", h->version,
                        ARB_WIRE_VERSION, code);
    case ARB_EWIRE_TYPE:
        return arb_errf(msg, len, rc,
                        "packet_type=%u: not a packet type (REGISTER, DATA_REQUEST, RESPONSE, END, "
                        "END_ACK, REGISTER_ACK, AGG_MISS: 0..6) (%s)",
                        h->packet_type, code);
    case ARB_EWIRE_KIND:
        return arb_errf(msg, len, rc,
                        "payload_kind=%u: not DATA, COMPLETION, REPLAY or SEED (0..3) (%s)",
                        h->payload_kind, code);
    case ARB_EWIRE_DEPTH_EXT:
        return arb_errf(msg, len, rc,
                        "agg_depth=%u: needs the 20 B header, header_len=20 (or ext=1) (%s)",
                        h->agg_depth, code);
    case ARB_EWIRE_DTYPE:
        return arb_errf(msg, len, rc, "dtype=%u: not f16, bf16, f32, f64, i32 or i64 (0..5) (%s)",
                        h->dtype, code);
    default:
        break;
    }
    size_t plen = f->payload_len, es = arb_dtype_size(h->dtype);
    if (h->payload_valid && !plen)
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_MISSING,
                        "payload_valid=1 and no payload: add payload=HEX or payload_len=N (%s)",
                        arb_errname(ARB_EWIRE_PAYLOAD_MISSING));
    if (!h->payload_valid && plen)
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_UNEXPECTED,
                        "payload_valid=0 with a payload of %zu B: drop one or the other (%s)", plen,
                        arb_errname(ARB_EWIRE_PAYLOAD_UNEXPECTED));
    if (plen && es && plen % es)
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_ALIGN,
                        "%s: %zu B is not a whole number of %s elements (%zu B each) (%s)",
                        f->payload_name, plen, arb_dtype_name(h->dtype), es,
                        arb_errname(ARB_EWIRE_PAYLOAD_ALIGN));
    if (plen > ARB_PAYLOAD_MAX)
        return arb_errf(msg, len, ARB_EWIRE_PAYLOAD_TOO_LONG,
                        "%s: %zu B, more than the %d B a packet carries (%s)", f->payload_name,
                        plen, ARB_PAYLOAD_MAX, arb_errname(ARB_EWIRE_PAYLOAD_TOO_LONG));
    return 0;
}

/* A dimension whose change a message names: one the user gave, or a
 * payload the user must add. */
static int counted(const struct wire_fit *f, int d)
{
    return given(f, d) || (d == WD_PAYLOAD && !f->payload_len);
}

/* How many counted dimensions point idx moves off their start. */
static int cost(const struct wire_fit *f, const int idx[WD_COUNT])
{
    int c = 0;
    for (int d = 0; d < WD_COUNT; d++)
        c += counted(f, d) && idx[d] != 0;
    return c;
}

/* Whether a and b move the same counted dimensions to the same values. */
static int same_change(const struct wire_fit *f, const int a[WD_COUNT], const int b[WD_COUNT])
{
    for (int d = 0; d < WD_COUNT; d++)
        if (counted(f, d) && a[d] != b[d]) return 0;
    return 1;
}

/* The given fields in `which` (1 << WD_*) as the user wrote them, joined
 * by `sep`, into buf. */
static void show_given(const struct wire_fit *f, unsigned which, const char *sep, char *buf,
                       size_t len)
{
    char item[96];
    buf[0] = '\0';
    for (int d = 0; d < WD_COUNT; d++) {
        if (!(which >> d & 1) || !given(f, d)) continue;
        show(f, d, &f->h, f->payload_len, item, sizeof item);
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, "%s%s", u ? sep : "", item);
    }
}

/* The given fields that must change, or the field to add (every way that
 * changes the fewest), as one message: "repair=0: a REGISTER needs
 * repair=1 (EWIRE_REPAIR)", "a RESPONSE with repair=1 needs a payload
 * (...)". */
static int name_the_change(const struct wire_fit *f, const struct space *s,
                           int alts[MAX_ALTS][WD_COUNT], int n_alts, char *msg, size_t len)
{
    char wrong[256], fix[256] = "", item[96];
    unsigned moved = 0;
    for (int a = 0; a < n_alts; a++)
        for (int d = 0; d < WD_COUNT; d++)
            if (given(f, d) && alts[a][d] != 0) moved |= 1u << d;
    show_given(f, moved, " with ", wrong, sizeof wrong);
    for (int a = 0; a < n_alts; a++) {
        arb_hdr h;
        size_t plen;
        apply(f, s, alts[a], &h, &plen);
        int first = 1;
        for (int d = 0; d < WD_COUNT; d++) {
            if (!counted(f, d) || alts[a][d] == 0) continue;
            show(f, d, &h, plen, item, sizeof item);
            size_t u = strlen(fix);
            snprintf(fix + u, sizeof fix - u, "%s%s", first ? (a ? ", or " : "") : " and ", item);
            first = 0;
        }
    }
    /* the codec's own code: the first way, with the given fields as given */
    int keep[WD_COUNT];
    for (int d = 0; d < WD_COUNT; d++)
        keep[d] = counted(f, d) ? 0 : alts[0][d];
    arb_hdr h;
    size_t plen;
    apply(f, s, keep, &h, &plen);
    int rc = arb_hdr_validate(&h, plen);
    const char *type = arb_ptype_name(f->h.packet_type);
    if (*wrong)
        return arb_errf(msg, len, rc < 0 ? rc : ARB_EINVAL, "%s: %s %s needs %s (%s)", wrong,
                        article(&f->h), type, fix, arb_errname(rc));
    /* nothing given is wrong: something is missing */
    char with[256];
    show_given(f, f->given, ", ", with, sizeof with);
    return arb_errf(msg, len, rc < 0 ? rc : ARB_EINVAL, "%s %s%s%s needs %s (%s)", article(&f->h),
                    type, *with ? " with " : "", with, fix, arb_errname(rc));
}

int wire_fit(const struct wire_fit *f, arb_hdr *out, size_t *payload_len, char *msg, size_t len)
{
    if (field_problem(f, msg, len) < 0) return CLI_EXIT_USAGE;
    struct space s;
    int idx[WD_COUNT] = {0};
    make_space(f, 1, &s);
    do {
        apply(f, &s, idx, out, payload_len);
        if (arb_hdr_validate(out, *payload_len) == 0) return 0;
    } while (next_point(&s, idx));

    /* none with the given fields as given: which of them to change */
    make_space(f, 0, &s);
    memset(idx, 0, sizeof idx);
    int alts[MAX_ALTS][WD_COUNT], n_alts = 0, best = WD_COUNT + 1;
    do {
        int c = cost(f, idx);
        if (c > best) continue;
        arb_hdr h;
        size_t plen;
        apply(f, &s, idx, &h, &plen);
        if (arb_hdr_validate(&h, plen) != 0) continue;
        if (c < best) best = c, n_alts = 0;
        int seen = 0;
        for (int a = 0; a < n_alts && !seen; a++)
            seen = same_change(f, alts[a], idx);
        if (!seen && n_alts < MAX_ALTS) memcpy(alts[n_alts++], idx, sizeof idx);
    } while (next_point(&s, idx));
    if (n_alts > 0) {
        name_the_change(f, &s, alts, n_alts, msg, len);
        return CLI_EXIT_USAGE;
    }
    int rc = arb_hdr_validate(&f->h, f->payload_len);
    arb_errf(msg, len, rc, "invalid packet: %s (%s)", arb_strerror(rc), arb_errname(rc));
    return CLI_EXIT_USAGE;
}
