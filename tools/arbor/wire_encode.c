/*
 * arbor wire encode: a packet (or a frame) from an example and KEY=VALUE
 * keys, fitted to the valid header nearest to them (wire_fit.c).
 */
#include "arbor/base.h"
#include "arbor/wire.h"
#include "cli.h"
#include "wire_fit.h"
#include "wire_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct encode_state {
    arb_hdr h;
    int have_payload_valid, have_ext;
    uint8_t *payload;
    size_t payload_len;
    int have_payload;
    const char *payload_name; /* the key that gave it */
    unsigned given;           /* 1 << WD_*: the fields a key set */
    int example;              /* the header started as an example's */
    arb_frame_addr fa;
    int frame_keys;
};

/* Parse an enum value given by name or by number. */
static int parse_enum(const char *v, int (*by_name)(const char *), int count, uint64_t *out)
{
    int r = by_name(v);
    if (r >= 0) {
        *out = (uint64_t)r;
        return 0;
    }
    /* numbers are allowed up to the field's width so that invalid wire
     * values (packet_type 7) can be expressed and rejected
     * by the encoder with its own message. */
    (void)count;
    return cli_parse_u64(v, 255, out);
}

static int parse_triple(const char *v, uint64_t max, uint64_t out[3])
{
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        char tmp[32];
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof tmp) return -1;
        memcpy(tmp, p, n);
        tmp[n] = '\0';
        if (cli_parse_u64(tmp, max, &out[i]) < 0) return -1;
        p += n;
        if (*p == '\0') {
            for (int j = i + 1; j < 3; j++)
                out[j] = 0;
            return 0;
        }
        p++; /* the comma */
    }
    return *p ? -1 : 0;
}

static int parse_mac(const char *v, uint8_t mac[6])
{
    unsigned b[6];
    char tail;
    if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) !=
        6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)b[i];
    return 0;
}

static int parse_ipv4(const char *v, uint32_t *ip)
{
    unsigned a[4];
    char tail;
    if (sscanf(v, "%3u.%3u.%3u.%3u%c", &a[0], &a[1], &a[2], &a[3], &tail) != 4) return -1;
    for (int i = 0; i < 4; i++)
        if (a[i] > 255) return -1;
    *ip = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
    return 0;
}

/* Header keys: name, wire maximum, and where the value goes. */
enum key_id {
    K_VERSION,
    K_PTYPE,
    K_REPAIR,
    K_OP,
    K_MSGID,
    K_PVALID,
    K_PKIND,
    K_CREDIT,
    K_EXT,
    K_DEPTH,
    K_AGGREGATED,
    K_OFFA,
    K_OFFB,
    K_AGGLOC,
    K_FANIN,
    K_ATTEMPT,
    K_DTYPE,
    K_HLEN,
    K_PAYLOAD,
    K_PLEN,
    K_ETH_SRC,
    K_ETH_DST,
    K_IP_SRC,
    K_IP_DST,
    K_UDP_SRC,
    K_UDP_DST,
    K_TTL,
    K_TOS,
    K_IP_ID,
    K_COUNT
};

static const struct {
    const char *name;
    uint64_t max;
} keys[K_COUNT] = {
    [K_VERSION] = {"version", 3},
    [K_PTYPE] = {"packet_type", 7},
    [K_REPAIR] = {"repair", 1},
    [K_OP] = {"op", 3},
    [K_MSGID] = {"message_id", 255},
    [K_PVALID] = {"payload_valid", 1},
    [K_PKIND] = {"payload_kind", 3},
    [K_CREDIT] = {"credit_valid", 1},
    [K_EXT] = {"ext", 1},
    [K_DEPTH] = {"agg_depth", 3},
    [K_AGGREGATED] = {"aggregated", 1},
    [K_OFFA] = {"offset_a", 0xFFFFFF},
    [K_OFFB] = {"offset_b", 0xFFFFFF},
    [K_AGGLOC] = {"agg_loc", 0xFFFF},
    [K_FANIN] = {"fanin", 255},
    [K_ATTEMPT] = {"attempt", 255},
    [K_DTYPE] = {"dtype", 255},
    [K_HLEN] = {"header_len", 20},
    [K_PAYLOAD] = {"payload", 0},
    [K_PLEN] = {"payload_len", ARB_PAYLOAD_MAX * 8},
    [K_ETH_SRC] = {"eth_src", 0},
    [K_ETH_DST] = {"eth_dst", 0},
    [K_IP_SRC] = {"ip_src", 0},
    [K_IP_DST] = {"ip_dst", 0},
    [K_UDP_SRC] = {"udp_src", 0xFFFF},
    [K_UDP_DST] = {"udp_dst", 0xFFFF},
    [K_TTL] = {"ttl", 255},
    [K_TOS] = {"tos", 255},
    [K_IP_ID] = {"ip_id", 0xFFFF},
};

/* The search dimension (wire_fit.h) each key sets, or -1. */
static int key_dim(int k)
{
    switch (k) {
    case K_PAYLOAD:
    case K_PLEN:
        return WD_PAYLOAD;
    case K_PKIND:
        return WD_KIND;
    case K_DEPTH:
        return WD_DEPTH;
    case K_AGGREGATED:
        return WD_AGGREGATED;
    case K_OP:
        return WD_OP;
    case K_ATTEMPT:
        return WD_ATTEMPT;
    case K_REPAIR:
        return WD_REPAIR;
    case K_CREDIT:
        return WD_CREDIT;
    case K_OFFB:
        return WD_OFFB;
    case K_FANIN:
        return WD_FANIN;
    default:
        return -1;
    }
}

/* packet_type: a name (any case) or 0..7; refused naming every accepted
 * name, and the example of that name when there is one. */
static int set_ptype(struct encode_state *st, const char *v)
{
    uint64_t x;
    if (parse_enum(v, arb_ptype_parse, ARB_PT_COUNT, &x) == 0 && x <= 7) {
        st->h.packet_type = (uint8_t)x;
        return 0;
    }
    char hint[96] = "";
    if (wire_find_example(v))
        snprintf(hint, sizeof hint, "; '%s' is an example: arbor wire encode %s [KEY=VALUE ...]", v,
                 v);
    return cli_error("wire encode",
                     "packet_type: '%s' is not REGISTER, DATA_REQUEST, RESPONSE, END, END_ACK, "
                     "REGISTER_ACK, AGG_MISS (any case) or 0..7%s",
                     v, hint);
}

/* A key whose value is text (a name, a list, hex, an address): 0 or an
 * exit status; -1 when k takes a plain integer. */
static int set_text_key(struct encode_state *st, int k, const char *v)
{
    const char *E = "wire encode";
    uint64_t x = 0, t[3];
    arb_hdr *h = &st->h;
    switch (k) {
    case K_PTYPE:
        return set_ptype(st, v);
    case K_OP:
        if (parse_enum(v, arb_op_parse, ARB_OP_COUNT, &x) < 0 || x > keys[k].max)
            return cli_error(E, "op: '%s' is not NOP, SUM, MAX, MIN or 0..3", v);
        h->op = (uint8_t)x;
        return 0;
    case K_PKIND:
        if (parse_enum(v, arb_pkind_parse, 4, &x) < 0 || x > keys[k].max)
            return cli_error(E, "payload_kind: '%s' is not DATA, COMPLETION, REPLAY, SEED or 0..3",
                             v);
        h->payload_kind = (uint8_t)x;
        return 0;
    case K_DTYPE:
        if (parse_enum(v, arb_dtype_parse, ARB_DTYPE_COUNT, &x) < 0 || x > keys[k].max)
            return cli_error(E, "dtype: '%s' is not f16, bf16, f32, f64, i32, i64 or 0..255", v);
        h->dtype = (uint8_t)x;
        return 0;
    case K_AGGLOC:
    case K_FANIN:
        if (parse_triple(v, keys[k].max, t) < 0)
            return cli_error(E, "%s: '%s' is not up to 3 comma-separated integers 0..%llu",
                             keys[k].name, v, (unsigned long long)keys[k].max);
        for (int i = 0; i < 3; i++) {
            if (k == K_AGGLOC)
                h->agg_loc[i] = (uint16_t)t[i];
            else
                h->fanin[i] = (uint8_t)t[i];
        }
        return 0;
    case K_PAYLOAD:
        free(st->payload);
        st->payload = wire_parse_hex("wire encode: payload", v, &st->payload_len);
        if (!st->payload) return CLI_EXIT_USAGE;
        st->have_payload = 1;
        st->payload_name = "payload";
        return 0;
    case K_ETH_SRC:
    case K_ETH_DST:
        if (parse_mac(v, k == K_ETH_SRC ? st->fa.eth_src : st->fa.eth_dst) < 0)
            return cli_error(E, "%s: '%s' is not a MAC address aa:bb:cc:dd:ee:ff", keys[k].name, v);
        st->frame_keys = 1;
        return 0;
    case K_IP_SRC:
    case K_IP_DST:
        if (parse_ipv4(v, k == K_IP_SRC ? &st->fa.ip_src : &st->fa.ip_dst) < 0)
            return cli_error(E, "%s: '%s' is not an IPv4 address a.b.c.d", keys[k].name, v);
        st->frame_keys = 1;
        return 0;
    default:
        return -1;
    }
}

/* A frame key with an integer value x: 1 when k is one. */
static int set_frame_int(struct encode_state *st, int k, uint64_t x)
{
    switch (k) {
    case K_UDP_SRC:
        st->fa.udp_src = (uint16_t)x;
        break;
    case K_UDP_DST:
        st->fa.udp_dst = (uint16_t)x;
        break;
    case K_TTL:
        st->fa.ip_ttl = (uint8_t)x;
        break;
    case K_TOS:
        st->fa.ip_tos = (uint8_t)x;
        break;
    case K_IP_ID:
        st->fa.ip_id = (uint16_t)x;
        break;
    default:
        return 0;
    }
    st->frame_keys = 1;
    return 1;
}

/* header_len: 16 or 20, agreeing with ext when that was given. */
static int set_header_len(struct encode_state *st, uint64_t x)
{
    const char *E = "wire encode";
    if (x != ARB_HDR_LEN_SHORT && x != ARB_HDR_LEN_LONG)
        return cli_error(E, "header_len: %llu is neither 16 nor 20", (unsigned long long)x);
    if (st->have_ext && st->h.ext != (x == ARB_HDR_LEN_LONG))
        return cli_error(E, "header_len=%llu contradicts ext=%u", (unsigned long long)x, st->h.ext);
    st->h.ext = x == ARB_HDR_LEN_LONG;
    st->have_ext = 1;
    return 0;
}

/* A key with an integer value x (checked against its maximum): 0 or an
 * exit status. */
static int set_int_key(struct encode_state *st, int k, uint64_t x)
{
    arb_hdr *h = &st->h;
    switch (k) {
    case K_VERSION:
        h->version = (uint8_t)x;
        break;
    case K_REPAIR:
        h->repair = (uint8_t)x;
        break;
    case K_MSGID:
        h->message_id = (uint8_t)x;
        break;
    case K_PVALID:
        h->payload_valid = (uint8_t)x;
        st->have_payload_valid = 1;
        break;
    case K_CREDIT:
        h->credit_valid = (uint8_t)x;
        break;
    case K_EXT:
        h->ext = (uint8_t)x;
        st->have_ext = 1;
        break;
    case K_DEPTH:
        h->agg_depth = (uint8_t)x;
        break;
    case K_AGGREGATED:
        h->aggregated = (uint8_t)x;
        break;
    case K_OFFA:
        h->offset_a = (uint32_t)x;
        break;
    case K_OFFB:
        h->offset_b = (uint32_t)x;
        break;
    case K_ATTEMPT:
        h->attempt = (uint8_t)x;
        break;
    case K_HLEN:
        return set_header_len(st, x);
    case K_PLEN:
        free(st->payload);
        st->payload = calloc(x ? x : 1, 1);
        if (!st->payload) return cli_error("wire encode", "out of memory");
        st->payload_len = x;
        st->have_payload = 1;
        st->payload_name = "payload_len";
        break;
    default:
        set_frame_int(st, k, x);
        break;
    }
    return 0;
}

static int set_key(struct encode_state *st, int k, const char *v)
{
    int rc = set_text_key(st, k, v);
    if (rc >= 0) return rc;
    uint64_t x;
    if (cli_parse_u64(v, keys[k].max, &x) < 0)
        return cli_error("wire encode", "%s: '%s' is not an integer 0..%llu", keys[k].name, v,
                         (unsigned long long)keys[k].max);
    return set_int_key(st, k, x);
}

static int find_key(const char *name, size_t n)
{
    if (n == 4 && strncmp(name, "type", 4) == 0) return K_PTYPE; /* short for packet_type */
    for (int k = 0; k < K_COUNT; k++)
        if (strlen(keys[k].name) == n && strncmp(keys[k].name, name, n) == 0) return k;
    return -1;
}

/* Start from the example `name`: its header and payload. */
static int start_from_example(struct encode_state *st, const char *name)
{
    const struct wire_example *e = wire_find_example(name);
    if (!e) {
        char names[400];
        wire_example_names(names, sizeof names);
        return cli_error("wire encode", "expected KEY=VALUE or an example's name (%s), got '%s'",
                         names, name);
    }
    st->h = e->h;
    st->example = 1;
    if (e->payload_len) {
        st->payload = calloc(e->payload_len, 1);
        if (!st->payload) return cli_error("wire encode", "out of memory");
        wire_example_payload(e, st->payload);
        st->payload_len = e->payload_len;
        st->have_payload = 1;
        st->payload_name = "payload";
    }
    return CLI_EXIT_OK;
}

/* The valid header nearest to the keys (wire_fit.c): into st, or the one
 * line naming what is wrong. */
static int fit_header(struct encode_state *st)
{
    struct wire_fit f = {.h = st->h,
                         .payload_len = st->payload_len,
                         .payload_valid_given = st->have_payload_valid,
                         .given = st->given,
                         .example = st->example,
                         .payload_name = st->payload_name ? st->payload_name : "payload"};
    char msg[512];
    size_t plen;
    if (wire_fit(&f, &st->h, &plen, msg, sizeof msg) != 0)
        return cli_error("wire encode", "%s", msg);
    if (plen == 0) st->payload_len = 0;
    return CLI_EXIT_OK;
}

static void default_frame(arb_frame_addr *fa)
{
    static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01}, dst[6] = {0x02, 0, 0, 0, 0, 0x02};
    memset(fa, 0, sizeof *fa);
    memcpy(fa->eth_src, src, 6);
    memcpy(fa->eth_dst, dst, 6);
    fa->ip_src = 0x0A000001; /* 10.0.0.1 */
    fa->ip_dst = 0x0A000002;
    fa->udp_src = ARB_UDP_PORT_DEFAULT;
    fa->udp_dst = ARB_UDP_PORT_DEFAULT;
    fa->ip_ttl = 64;
}

/* A word without '=': the example to start from when it is the first,
 * else (and '-' anywhere) an error. An exit status. */
static int bare_word(struct encode_state *st, const char *a, int first)
{
    if (strcmp(a, "-") == 0)
        return cli_error("wire encode", "'-': encode reads no stdin; give KEY=VALUE ... (or an "
                                        "example's name first) as arguments");
    if (first) return start_from_example(st, a);
    return cli_error("wire encode", "expected KEY=VALUE, got '%s' (an example's name comes first)",
                     a);
}

int wire_encode(int argc, char **argv)
{
    const char *E = "wire encode";
    struct encode_state st;
    memset(&st, 0, sizeof st);
    st.h.version = ARB_WIRE_VERSION;
    default_frame(&st.fa);
    int frame = 0, rc = CLI_EXIT_OK;
    int seen[K_COUNT] = {0};

    static const struct option lopts[] = {
        {"frame", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_start(lopts);
    while ((c = getopt_long(argc, argv, ":fh", lopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(wire_usage, stdout);
            return CLI_EXIT_OK;
        }
        if (c != 'f') return cli_bad_option(E, c, argv);
        frame = 1;
    }
    for (int i = optind; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!eq) { /* an example to start from, first */
            rc = bare_word(&st, a, i == optind);
            continue;
        }
        /* decode --json's own fields: its schema (checked) and the
         * program's version (ignored), so that its keys are encode's */
        if (strncmp(a, "schema=", 7) == 0) {
            if (strcmp(eq + 1, CLI_SCHEMA_WIRE) != 0) {
                rc = cli_error(E, "schema: '%s' is not %s", eq + 1, CLI_SCHEMA_WIRE);
                break;
            }
            continue;
        }
        if (strncmp(a, "arbor_version=", 14) == 0) continue;
        int k = find_key(a, (size_t)(eq - a));
        if (k < 0) {
            rc = cli_error(E, "unknown key '%.*s' (see 'arbor wire --help')", (int)(eq - a), a);
            break;
        }
        if (seen[k]++) {
            rc = cli_error(E, "key '%s' given twice", keys[k].name);
            break;
        }
        if ((k == K_PAYLOAD && seen[K_PLEN]) || (k == K_PLEN && seen[K_PAYLOAD])) {
            rc = cli_error(E, "give payload or payload_len, not both");
            break;
        }
        rc = set_key(&st, k, eq + 1);
        if (key_dim(k) >= 0) st.given |= 1u << key_dim(k);
    }
    if (rc == CLI_EXIT_OK && st.frame_keys && !frame)
        rc = cli_error(E, "frame keys (eth_*, ip_*, udp_*, ttl, tos) need --frame");
    if (rc != CLI_EXIT_OK) {
        free(st.payload);
        return rc;
    }
    if (st.have_payload && !st.have_payload_valid) st.h.payload_valid = 1;
    if (!st.have_payload && !st.have_payload_valid) st.h.payload_valid = 0;

    if (!st.h.ext && (st.h.agg_loc[1] || st.h.agg_loc[2])) {
        int i = st.h.agg_loc[1] ? 1 : 2;
        rc = cli_error(E,
                       "agg_loc: agg_loc[%d] = %u needs the 20 B header (header_len=20 or "
                       "ext=1); the 16 B header carries agg_loc[0] only",
                       i, st.h.agg_loc[i]);
        free(st.payload);
        return rc;
    }
    rc = fit_header(&st);
    if (rc != CLI_EXIT_OK) {
        free(st.payload);
        return rc;
    }
    size_t hcap = ARB_HDR_LEN_LONG + st.payload_len;
    uint8_t *pkt = malloc(hcap);
    uint8_t *fbuf = NULL;
    if (!pkt) {
        free(st.payload);
        return cli_error(E, "out of memory");
    }
    size_t hlen = 0;
    int err = arb_hdr_encode(&st.h, st.payload_len, pkt, hcap, &hlen);
    if (err < 0) {
        rc = cli_error(E, "invalid packet: %s (%s)", arb_strerror(err), arb_errname(err));
        goto out;
    }
    if (st.payload_len) memcpy(pkt + hlen, st.payload, st.payload_len);
    if (!frame) {
        wire_print_hex(pkt, hlen + st.payload_len);
        goto out;
    }
    size_t fcap = ARB_FRAME_OVERHEAD + hlen + st.payload_len, flen = 0;
    fbuf = malloc(fcap);
    if (!fbuf) {
        rc = cli_error(E, "out of memory");
        goto out;
    }
    err = arb_frame_build(&st.fa, pkt, hlen + st.payload_len, fbuf, fcap, &flen);
    if (err < 0) {
        rc = cli_error(E, "cannot build frame: %s (%s)", arb_strerror(err), arb_errname(err));
        goto out;
    }
    wire_print_hex(fbuf, flen);
out:
    free(fbuf);
    free(pkt);
    free(st.payload);
    return rc;
}
