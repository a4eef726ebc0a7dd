/*
 * arbor wire decode | encode | examples: the wire format from the shell.
 */
#include "arbor/base.h"
#include "arbor/wire.h"
#include "cli.h"
#include "wire_int.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEX_INPUT_LIMIT (1u << 20)
#define FRAME_MAX (ARB_FRAME_OVERHEAD + ARB_HDR_LEN_LONG + ARB_PAYLOAD_MAX)

const char wire_usage[] =
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
    "encode   print the hex of the packet the keys describe (as arguments:\n"
    "         encode reads no stdin); decode --json of it gives the keys back.\n"
    "         Keys are those of decode --json (schema must be arbor-wire/1,\n"
    "         arbor_version is ignored; header_len 16 or 20 sets ext; type is\n"
    "         packet_type), with names (any case) or numbers for packet_type, op,\n"
    "         payload_kind and dtype, and 'a,b,c' for agg_loc and fanin.\n"
    "         payload=HEX gives payload bytes, payload_len=N that many zero\n"
    "         bytes; either sets payload_valid=1 unless it is given. decode\n"
    "         --json has payload_len, not the bytes: encode of its keys is the\n"
    "         packet with a zeroed payload, and with payload=HEX (the bytes\n"
    "         after the header) the packet itself. It starts\n"
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

uint8_t *wire_parse_hex(const char *what, const char *s, size_t *len)
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

void wire_print_hex(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        printf("%02x", buf[i]);
    putchar('\n');
}
/* ------------------------------------------------------------------ */
/* decode                                                               */
/* Which rule of a seed (payload_kind SEED, docs/protocol.md section 5) h
 * breaks, or NULL when it carries none. */
static const char *seed_rule(const arb_hdr *h)
{
    if (h->payload_kind != ARB_PK_SEED) return NULL;
    if (h->packet_type == ARB_PT_RESPONSE)
        return h->repair || !h->credit_valid
                   ? "only a normal credit (credit_valid 1, repair 0) carries a seed"
                   : "a credit's seed is the input to its own offset (offset_a = offset_b)";
    if (h->packet_type == ARB_PT_DATA_REQUEST)
        return "a request carries a seed only as a switch's aggregate (aggregated 1, repair 0)";
    return "only a normal credit or a switch's aggregate carries a seed";
}

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
    cli_getopt_start(lopts);
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
    uint8_t *buf = wire_parse_hex("wire decode", arg, &len);
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
        const char *why = rc == ARB_EWIRE_PAYLOAD_FLAG ? seed_rule(&h) : NULL;
        if (why)
            return cli_error("wire decode", "malformed packet: %s: %s (%s)", arb_strerror(rc), why,
                             arb_errname(rc));
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
    for (size_t i = 0; i < wire_n_examples; i++) {
        const struct wire_example *e = &wire_example_table[i];
        uint8_t buf[ARB_HDR_LEN_LONG + 64];
        size_t hlen;
        int err = arb_hdr_encode(&e->h, e->payload_len, buf, sizeof buf, &hlen);
        if (err < 0) {
            fprintf(stderr, "arbor wire examples: %s is invalid: %s\n", e->name, arb_strerror(err));
            return CLI_EXIT_FAIL;
        }
        wire_example_payload(e, buf + hlen);
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
