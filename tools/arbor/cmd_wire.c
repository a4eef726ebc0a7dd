/*
 * arbor wire decode | encode | examples: the wire format from the shell.
 */
#include "arbor/base.h"
#include "arbor/wire.h"
#include "cli.h"
#include "wire_fit.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEX_INPUT_LIMIT (1u << 20)
#define FRAME_MAX (ARB_FRAME_OVERHEAD + ARB_HDR_LEN_LONG + ARB_PAYLOAD_MAX)

static const char wire_usage[] =
    "usage: arbor wire decode [-j|--json] [-f|--frame] HEX|-\n"
    "       arbor wire encode [-f|--frame] [EXAMPLE] [KEY=VALUE ...]\n"
    "       arbor wire examples\n"
    "\n"
    "decode   print every field of one packet. HEX is the UDP payload (Arbor\n"
    "         header then payload) as hex digits; spaces, colons and a leading\n"
    "         0x are ignored; '-' reads it from stdin. --frame: HEX is a whole\n"
    "         Ethernet/IPv4/UDP frame (checksums are verified).\n"
    "         --json prints one JSON object with the keys schema (arbor-wire/1),\n"
    "         arbor_version (the program's), version (the header's), packet_type,\n"
    "         repair, op, message_id, payload_valid, payload_kind, credit_valid,\n"
    "         ext, agg_depth, aggregated, offset_a, offset_b, agg_loc, fanin,\n"
    "         attempt, dtype, header_len, payload_len (and frame, with --frame).\n"
    "encode   print the hex of the packet the keys describe; decode(encode(x))\n"
    "         is x. Keys are those of decode --json (schema must be arbor-wire/1,\n"
    "         arbor_version is ignored; header_len 16 or 20 sets ext; type is\n"
    "         packet_type), with names (any case) or numbers for packet_type, op,\n"
    "         payload_kind and dtype, and 'a,b,c' for agg_loc and fanin.\n"
    "         payload=HEX gives payload bytes, payload_len=N that many zero\n"
    "         bytes; either sets payload_valid=1 unless it is given. It starts\n"
    "         from a valid header of the type: unset fields are 0 (version 2)\n"
    "         but where the type needs another value (type=register has\n"
    "         repair=1, type=data_request offset_b=1, type=response a credit);\n"
    "         a key's value is kept, and when the keys admit no valid header\n"
    "         the error names those to change, or the field to add. EXAMPLE,\n"
    "         a name 'wire examples' prints, starts from that packet instead.\n"
    "         --frame wraps the packet in Ethernet/IPv4/UDP: keys eth_src,\n"
    "         eth_dst (aa:bb:cc:dd:ee:ff), ip_src, ip_dst (dotted quad), udp_src,\n"
    "         udp_dst (default 17470), ttl, tos, ip_id.\n"
    "examples print one valid packet of every kind, name and hex, one per line;\n"
    "         'wire encode NAME' gives the same bytes.\n"
    "\n"
    "Malformed input exits with status 2 and one line naming the rule it broke.\n";

/* ------------------------------------------------------------------ */
/* Hex                                                                  */
/* ------------------------------------------------------------------ */

static int hex_val(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int is_hex_separator(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':';
}

/*
 * Parse hex text into a malloc'd buffer of exactly *len bytes (so that a
 * decoder reading past it is caught by the sanitizers). On error prints
 * the reason and returns NULL.
 */
static uint8_t *parse_hex(const char *what, const char *s, size_t *len)
{
    while (is_hex_separator((unsigned char)*s))
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
    size_t digits = 0;
    for (const char *p = s; *p; p++) {
        if (hex_val((unsigned char)*p) >= 0)
            digits++;
        else if (!is_hex_separator((unsigned char)*p)) {
            cli_error(what, "not a hex digit at position %zu: '%c'", (size_t)(p - s) + 1, *p);
            return NULL;
        }
    }
    if (digits % 2) {
        cli_error(what, "odd number of hex digits (%zu): the last byte is incomplete", digits);
        return NULL;
    }
    uint8_t *buf = malloc(digits / 2 ? digits / 2 : 1);
    if (!buf) {
        cli_error(what, "out of memory");
        return NULL;
    }
    size_t n = 0;
    int hi = -1;
    for (const char *p = s; *p; p++) {
        int v = hex_val((unsigned char)*p);
        if (v < 0) continue;
        if (hi < 0) {
            hi = v;
        } else {
            buf[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    *len = n;
    return buf;
}

static void print_hex(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        printf("%02x", buf[i]);
    putchar('\n');
}

/* ------------------------------------------------------------------ */
/* decode                                                               */
/* ------------------------------------------------------------------ */

static void print_ip(FILE *f, uint32_t ip)
{
    fprintf(f, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static void format_mac(char out[18], const uint8_t m[6])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void print_text(const arb_hdr *h, size_t hlen, size_t plen, const arb_frame_addr *fa)
{
    if (fa) {
        char mac[18];
        format_mac(mac, fa->eth_src);
        printf("eth_src       %s\n", mac);
        format_mac(mac, fa->eth_dst);
        printf("eth_dst       %s\n", mac);
        printf("ip_src        ");
        print_ip(stdout, fa->ip_src);
        printf("\nip_dst        ");
        print_ip(stdout, fa->ip_dst);
        printf("\nttl           %u\ntos           %u\nip_id         %u\n", fa->ip_ttl, fa->ip_tos,
               fa->ip_id);
        printf("udp_src       %u\nudp_dst       %u\n", fa->udp_src, fa->udp_dst);
    }
    printf("version       %u\n", h->version);
    printf("packet_type   %s (%u)\n", arb_ptype_name(h->packet_type), h->packet_type);
    printf("repair        %u\n", h->repair);
    printf("op            %s (%u)\n", arb_op_name(h->op), h->op);
    printf("message_id    %u\n", h->message_id);
    printf("payload_valid %u\n", h->payload_valid);
    printf("payload_kind  %s (%u)\n", arb_pkind_name(h->payload_kind), h->payload_kind);
    printf("credit_valid  %u\n", h->credit_valid);
    printf("ext           %u\n", h->ext);
    printf("agg_depth     %u\n", h->agg_depth);
    printf("aggregated    %u\n", h->aggregated);
    printf("offset_a      %u\n", (unsigned)h->offset_a);
    printf("offset_b      %u\n", (unsigned)h->offset_b);
    printf("agg_loc       [%u, %u, %u]\n", h->agg_loc[0], h->agg_loc[1], h->agg_loc[2]);
    printf("fanin         [%u, %u, %u]\n", h->fanin[0], h->fanin[1], h->fanin[2]);
    printf("attempt       %u\n", h->attempt);
    printf("dtype         %s (%u)\n", arb_dtype_name(h->dtype), h->dtype);
    printf("header_len    %zu\n", hlen);
    printf("payload_len   %zu\n", plen);
    if (h->payload_valid && plen) printf("elements      %zu\n", plen / arb_dtype_size(h->dtype));
}

static cJSON *int_array(const unsigned v[3])
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < 3; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *frame_json(const arb_frame_addr *fa)
{
    cJSON *o = cJSON_CreateObject();
    char buf[18];
    format_mac(buf, fa->eth_src);
    cJSON_AddStringToObject(o, "eth_src", buf);
    format_mac(buf, fa->eth_dst);
    cJSON_AddStringToObject(o, "eth_dst", buf);
    snprintf(buf, sizeof buf, "%u.%u.%u.%u", fa->ip_src >> 24, (fa->ip_src >> 16) & 255,
             (fa->ip_src >> 8) & 255, fa->ip_src & 255);
    cJSON_AddStringToObject(o, "ip_src", buf);
    snprintf(buf, sizeof buf, "%u.%u.%u.%u", fa->ip_dst >> 24, (fa->ip_dst >> 16) & 255,
             (fa->ip_dst >> 8) & 255, fa->ip_dst & 255);
    cJSON_AddStringToObject(o, "ip_dst", buf);
    cJSON_AddNumberToObject(o, "ttl", fa->ip_ttl);
    cJSON_AddNumberToObject(o, "tos", fa->ip_tos);
    cJSON_AddNumberToObject(o, "ip_id", fa->ip_id);
    cJSON_AddNumberToObject(o, "udp_src", fa->udp_src);
    cJSON_AddNumberToObject(o, "udp_dst", fa->udp_dst);
    return o;
}

static int print_json(const arb_hdr *h, size_t hlen, size_t plen, const arb_frame_addr *fa)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return -1;
    unsigned loc[3] = {h->agg_loc[0], h->agg_loc[1], h->agg_loc[2]};
    unsigned fan[3] = {h->fanin[0], h->fanin[1], h->fanin[2]};
    /* "version" here is the header's own field (the wire format's version,
     * 2), as `wire encode` takes it; the program's is arbor_version. */
    cJSON_AddStringToObject(o, "schema", CLI_SCHEMA_WIRE);
    cJSON_AddStringToObject(o, "arbor_version", arb_version());
    cJSON_AddNumberToObject(o, "version", h->version);
    cJSON_AddStringToObject(o, "packet_type", arb_ptype_name(h->packet_type));
    cJSON_AddNumberToObject(o, "repair", h->repair);
    cJSON_AddStringToObject(o, "op", arb_op_name(h->op));
    cJSON_AddNumberToObject(o, "message_id", h->message_id);
    cJSON_AddNumberToObject(o, "payload_valid", h->payload_valid);
    cJSON_AddStringToObject(o, "payload_kind", arb_pkind_name(h->payload_kind));
    cJSON_AddNumberToObject(o, "credit_valid", h->credit_valid);
    cJSON_AddNumberToObject(o, "ext", h->ext);
    cJSON_AddNumberToObject(o, "agg_depth", h->agg_depth);
    cJSON_AddNumberToObject(o, "aggregated", h->aggregated);
    cJSON_AddNumberToObject(o, "offset_a", h->offset_a);
    cJSON_AddNumberToObject(o, "offset_b", h->offset_b);
    cJSON_AddItemToObject(o, "agg_loc", int_array(loc));
    cJSON_AddItemToObject(o, "fanin", int_array(fan));
    cJSON_AddNumberToObject(o, "attempt", h->attempt);
    cJSON_AddStringToObject(o, "dtype", arb_dtype_name(h->dtype));
    cJSON_AddNumberToObject(o, "header_len", (double)hlen);
    cJSON_AddNumberToObject(o, "payload_len", (double)plen);
    if (fa) cJSON_AddItemToObject(o, "frame", frame_json(fa));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return -1;
    puts(s);
    cJSON_free(s);
    return 0;
}

static int wire_decode(int argc, char **argv)
{
    static const struct option lopts[] = {{"json", no_argument, NULL, 'j'},
                                          {"frame", no_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},
                                          {0, 0, 0, 0}};
    int json = 0, frame = 0, c;
    const char *arg = NULL;
    cli_getopt_start();
    while ((c = getopt_long(argc, argv, ":jfh", lopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(wire_usage, stdout);
            return CLI_EXIT_OK;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'f') {
            frame = 1;
        } else {
            return cli_bad_option("wire decode", c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (arg) return cli_error("wire decode", "one packet at a time: unexpected '%s'", argv[i]);
        arg = argv[i];
    }
    if (!arg) return cli_error("wire decode", "missing HEX (or '-' to read stdin); see --help");

    char *text = NULL;
    if (strcmp(arg, "-") == 0) {
        text = cli_read_stdin(HEX_INPUT_LIMIT);
        if (!text)
            return cli_error("wire decode", "cannot read stdin (or more than %u bytes)",
                             HEX_INPUT_LIMIT);
        arg = text;
    }
    size_t len;
    uint8_t *buf = parse_hex("wire decode", arg, &len);
    free(text);
    if (!buf) return CLI_EXIT_USAGE;

    arb_frame_addr fa;
    const uint8_t *udp = buf;
    size_t udp_len = len;
    int rc = 0;
    if (frame) {
        rc = arb_frame_parse(buf, len, &fa, &udp, &udp_len);
        if (rc < 0) {
            free(buf);
            return cli_error("wire decode", "malformed frame: %s (%s)", arb_strerror(rc),
                             arb_errname(rc));
        }
    }
    arb_hdr h;
    size_t poff = 0;
    rc = arb_hdr_decode(&h, udp, udp_len, &poff);
    if (rc < 0) {
        free(buf);
        return cli_error("wire decode", "malformed packet: %s (%s)", arb_strerror(rc),
                         arb_errname(rc));
    }
    size_t hlen = arb_hdr_len(&h), plen = udp_len - poff;
    int out = 0;
    if (json)
        out = print_json(&h, hlen, plen, frame ? &fa : NULL);
    else
        print_text(&h, hlen, plen, frame ? &fa : NULL);
    free(buf);
    if (out < 0) {
        fprintf(stderr, "arbor wire decode: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* examples                                                             */
/* ------------------------------------------------------------------ */

struct example {
    const char *name;
    const char *what;
    arb_hdr h;
    size_t payload_len;
};

/* One offset's life on a star, plus the recovery and multi-tier packets.
 * Payloads are small (4 f32 elements) to keep the hex readable. */
static const struct example examples[] = {
    {"register",
     "requester announces message 1 from start_seq 0",
     {2, ARB_PT_REGISTER, 1, ARB_OP_NOP, 1, 0, 0, 0, 0, 0, 0, 0, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     0},
    {"register_ack",
     "responder acknowledges the REGISTER",
     {2, ARB_PT_REGISTER_ACK, 1, ARB_OP_NOP, 1, 0, 0, 0, 0, 0, 0, 0, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     0},
    {"credit",
     "credit for offset 5 after the switch pushed slot 12 (fan-in 31)",
     {2, ARB_PT_RESPONSE, 0, ARB_OP_SUM, 1, 0, 0, 1, 0, 1, 0, 0, 5, {12}, {31}, 0, ARB_DTYPE_F32},
     0},
    {"credit_result",
     "credit 9 carrying the result of offset 2",
     {2, ARB_PT_RESPONSE, 0, ARB_OP_SUM, 1, 1, 0, 1, 0, 1, 0, 2, 9, {13}, {31}, 0, ARB_DTYPE_F32},
     16},
    {"credit_retry",
     "offset 5 credited again in the network (attempt 1), replaying the result of offset 2",
     {2, ARB_PT_RESPONSE, 0, ARB_OP_SUM, 1, 1, 0, 1, 0, 1, 0, 2, 5, {40}, {31}, 1, ARB_DTYPE_F32},
     16},
    {"request",
     "a requester's contribution for offset 5, slot 12",
     {2,
      ARB_PT_DATA_REQUEST,
      0,
      ARB_OP_SUM,
      1,
      1,
      0,
      0,
      0,
      1,
      0,
      5,
      1,
      {12},
      {31},
      0,
      ARB_DTYPE_F32},
     16},
    {"aggregate",
     "the switch's aggregate of 31 contributions to the responder",
     {2,
      ARB_PT_DATA_REQUEST,
      0,
      ARB_OP_SUM,
      1,
      1,
      0,
      0,
      0,
      0,
      1,
      5,
      31,
      {12},
      {31},
      0,
      ARB_DTYPE_F32},
     16},
    {"request_3tier",
     "a contribution on a three-tier tree (20 B header)",
     {2,
      ARB_PT_DATA_REQUEST,
      0,
      ARB_OP_SUM,
      1,
      1,
      0,
      0,
      1,
      3,
      0,
      5,
      1,
      {7, 300, 41},
      {64, 8, 2},
      0,
      ARB_DTYPE_BF16},
     16},
    {"tail",
     "a tail result (no credit left to ride on)",
     {2, ARB_PT_RESPONSE, 0, ARB_OP_SUM, 1, 1, 0, 0, 0, 0, 0, 7, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     16},
    {"completion",
     "reduce: offset 4 committed (no payload)",
     {2, ARB_PT_RESPONSE, 0, ARB_OP_SUM, 1, 0, 1, 1, 0, 1, 0, 4, 8, {3}, {31}, 0, ARB_DTYPE_F32},
     0},
    {"agg_miss",
     "slot 12 was taken by another context: offset 5 needs repair",
     {2, ARB_PT_AGG_MISS, 0, ARB_OP_NOP, 1, 0, 0, 0, 0, 0, 0, 5, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     0},
    {"repair_credit",
     "repair credit for offset 5 replaying the result it carried",
     {2, ARB_PT_RESPONSE, 1, ARB_OP_SUM, 1, 1, 2, 1, 0, 0, 0, 2, 5, {0}, {0}, 0, ARB_DTYPE_F32},
     16},
    {"repair_request",
     "a requester's repair answer, straight to the responder",
     {2, ARB_PT_DATA_REQUEST, 1, ARB_OP_SUM, 1, 1, 0, 0, 0, 0, 0, 5, 1, {0}, {0}, 0, ARB_DTYPE_F32},
     16},
    {"tail_replay",
     "a tail result replayed to a requester missing from the END bitmap",
     {2, ARB_PT_RESPONSE, 1, ARB_OP_SUM, 1, 1, 2, 0, 0, 0, 0, 7, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     16},
    {"end",
     "requester holds every result of message 1",
     {2, ARB_PT_END, 0, ARB_OP_NOP, 1, 0, 0, 0, 0, 0, 0, 0, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     0},
    {"end_ack",
     "responder acknowledges the END",
     {2, ARB_PT_END_ACK, 0, ARB_OP_NOP, 1, 0, 0, 0, 0, 0, 0, 0, 0, {0}, {0}, 0, ARB_DTYPE_F32},
     0},
};

/* The example named `name`, or NULL. */
static const struct example *find_example(const char *name)
{
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
        if (strcmp(examples[i].name, name) == 0) return &examples[i];
    return NULL;
}

/* An example's payload: the f32 or bf16 values 1, 2, 3, 4... little-endian. */
static void example_payload(const struct example *e, uint8_t *buf)
{
    size_t esz = arb_dtype_size(e->h.dtype);
    memset(buf, 0, e->payload_len);
    for (size_t j = 0; esz && j < e->payload_len / esz; j++) {
        float f = (float)(j + 1);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (esz == 2) {
            buf[j * 2] = (uint8_t)(bits >> 16);
            buf[j * 2 + 1] = (uint8_t)(bits >> 24);
        } else {
            for (int b = 0; b < 4; b++)
                buf[j * 4 + (size_t)b] = (uint8_t)(bits >> (8 * b));
        }
    }
}

/* "register, register_ack, credit, ...": every example's name. */
static void example_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof examples / sizeof examples[0] && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", examples[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* ------------------------------------------------------------------ */
/* encode                                                               */
/* ------------------------------------------------------------------ */

struct encode_state {
    arb_hdr h;
    int have_payload_valid, have_ext;
    uint8_t *payload;
    size_t payload_len;
    int have_payload;
    const char *payload_name; /* the key that gave it */
    unsigned given;           /* 1 << WD_*: the fields a key set */
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
     * values (packet_type 7, payload_kind 3) can be expressed and rejected
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
    if (find_example(v))
        snprintf(hint, sizeof hint, "; '%s' is an example: arbor wire encode %s [KEY=VALUE ...]", v,
                 v);
    return cli_error("wire encode",
                     "packet_type: '%s' is not REGISTER, DATA_REQUEST, RESPONSE, END, END_ACK, "
                     "REGISTER_ACK, AGG_MISS (any case) or 0..7%s",
                     v, hint);
}

static int set_key(struct encode_state *st, int k, const char *v)
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
        if (parse_enum(v, arb_pkind_parse, 3, &x) < 0 || x > keys[k].max)
            return cli_error(E, "payload_kind: '%s' is not DATA, COMPLETION, REPLAY or 0..3", v);
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
        st->payload = parse_hex("wire encode: payload", v, &st->payload_len);
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
        break;
    }
    if (cli_parse_u64(v, keys[k].max, &x) < 0)
        return cli_error(E, "%s: '%s' is not an integer 0..%llu", keys[k].name, v,
                         (unsigned long long)keys[k].max);
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
        if (x != ARB_HDR_LEN_SHORT && x != ARB_HDR_LEN_LONG)
            return cli_error(E, "header_len: %llu is neither 16 nor 20", (unsigned long long)x);
        if (st->have_ext && h->ext != (x == ARB_HDR_LEN_LONG))
            return cli_error(E, "header_len=%llu contradicts ext=%u", (unsigned long long)x,
                             h->ext);
        h->ext = x == ARB_HDR_LEN_LONG;
        st->have_ext = 1;
        break;
    case K_PLEN:
        free(st->payload);
        st->payload = calloc(x ? x : 1, 1);
        if (!st->payload) return cli_error(E, "out of memory");
        st->payload_len = x;
        st->have_payload = 1;
        st->payload_name = "payload_len";
        break;
    case K_UDP_SRC:
        st->fa.udp_src = (uint16_t)x;
        st->frame_keys = 1;
        break;
    case K_UDP_DST:
        st->fa.udp_dst = (uint16_t)x;
        st->frame_keys = 1;
        break;
    case K_TTL:
        st->fa.ip_ttl = (uint8_t)x;
        st->frame_keys = 1;
        break;
    case K_TOS:
        st->fa.ip_tos = (uint8_t)x;
        st->frame_keys = 1;
        break;
    case K_IP_ID:
        st->fa.ip_id = (uint16_t)x;
        st->frame_keys = 1;
        break;
    default:
        break;
    }
    return 0;
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
    const struct example *e = find_example(name);
    if (!e) {
        char names[400];
        example_names(names, sizeof names);
        return cli_error("wire encode", "expected KEY=VALUE or an example's name (%s), got '%s'",
                         names, name);
    }
    st->h = e->h;
    if (e->payload_len) {
        st->payload = calloc(e->payload_len, 1);
        if (!st->payload) return cli_error("wire encode", "out of memory");
        example_payload(e, st->payload);
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

static int wire_encode(int argc, char **argv)
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
    cli_getopt_start();
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
        if (!eq && i == optind) { /* an example to start from */
            rc = start_from_example(&st, a);
            continue;
        }
        if (!eq) {
            rc = cli_error(E, "expected KEY=VALUE, got '%s' (an example's name comes first)", a);
            break;
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
        print_hex(pkt, hlen + st.payload_len);
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
    print_hex(fbuf, flen);
out:
    free(fbuf);
    free(pkt);
    free(st.payload);
    return rc;
}

/* ------------------------------------------------------------------ */
/* wire examples                                                        */
/* ------------------------------------------------------------------ */

static int wire_examples(int argc, char **argv)
{
    if (argc > 1) {
        if (cli_is_help(argv[1])) {
            fputs(wire_usage, stdout);
            return CLI_EXIT_OK;
        }
        return cli_error("wire examples", "takes no arguments, got '%s'", argv[1]);
    }
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        const struct example *e = &examples[i];
        uint8_t buf[ARB_HDR_LEN_LONG + 64];
        size_t hlen;
        int err = arb_hdr_encode(&e->h, e->payload_len, buf, sizeof buf, &hlen);
        if (err < 0) {
            fprintf(stderr, "arbor wire examples: %s is invalid: %s\n", e->name, arb_strerror(err));
            return CLI_EXIT_FAIL;
        }
        example_payload(e, buf + hlen);
        printf("%-15s ", e->name);
        for (size_t j = 0; j < hlen + e->payload_len; j++)
            printf("%02x", buf[j]);
        printf("  # %s\n", e->what);
    }
    return CLI_EXIT_OK;
}

int cmd_wire(int argc, char **argv)
{
    if (argc < 2) {
        fputs(wire_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (cli_is_help(sub)) {
        fputs(wire_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "decode") == 0) return wire_decode(argc - 1, argv + 1);
    if (strcmp(sub, "encode") == 0) return wire_encode(argc - 1, argv + 1);
    if (strcmp(sub, "examples") == 0) return wire_examples(argc - 1, argv + 1);
    return cli_error("wire", "unknown subcommand '%s' (decode, encode, examples)", sub);
}
