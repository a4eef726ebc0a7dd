/* Error names and descriptions. */
#include "arbor/base.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct err_entry {
    int code;
    const char *name;
    const char *text;
};

static const struct err_entry errors[] = {
    {ARB_OK, "OK", "ok"},
    {ARB_EINVAL, "EINVAL", "invalid argument"},
    {ARB_ENOMEM, "ENOMEM", "out of memory"},
    {ARB_ENOSPC, "ENOSPC", "output buffer too small"},
    {ARB_ERANGE, "ERANGE", "value out of range for its field"},
    {ARB_EPARSE, "EPARSE", "syntax error"},
    {ARB_ENOENT, "ENOENT", "no such name"},
    {ARB_EIO, "EIO", "input/output error"},
    {ARB_ESTATE, "ESTATE", "operation not valid in this state"},
    {ARB_ETIMEDOUT, "ETIMEDOUT", "no answer after every retry"},

    {ARB_EWIRE_SHORT, "EWIRE_SHORT", "buffer shorter than the Arbor header"},
    {ARB_EWIRE_VERSION, "EWIRE_VERSION", "version is not 2"},
    {ARB_EWIRE_TYPE, "EWIRE_TYPE", "packet_type 7 is invalid"},
    {ARB_EWIRE_KIND, "EWIRE_KIND", "payload_kind 3 is invalid"},
    {ARB_EWIRE_DEPTH_EXT, "EWIRE_DEPTH_EXT", "agg_depth > 1 needs the 20 B header (ext = 1)"},
    {ARB_EWIRE_DTYPE, "EWIRE_DTYPE", "dtype is not 0..5"},
    {ARB_EWIRE_OP, "EWIRE_OP", "op must be NOP for this packet type"},
    {ARB_EWIRE_REPAIR, "EWIRE_REPAIR",
     "repair bit wrong for this packet type (REGISTER, REGISTER_ACK: 1; END, END_ACK, "
     "AGG_MISS: 0)"},
    {ARB_EWIRE_CREDIT, "EWIRE_CREDIT", "credit_valid not allowed for this packet type"},
    {ARB_EWIRE_PAYLOAD_FLAG, "EWIRE_PAYLOAD_FLAG",
     "payload_valid / payload_kind combination not allowed for this packet type"},
    {ARB_EWIRE_DEPTH, "EWIRE_DEPTH", "agg_depth not allowed for this packet type"},
    {ARB_EWIRE_AGGREGATED, "EWIRE_AGGREGATED", "aggregated bit not allowed for this packet type"},
    {ARB_EWIRE_OFFSET_B, "EWIRE_OFFSET_B",
     "offset_b out of range for this packet type (a request: 1 or more, a repair request: 1; "
     "control packets and tails: 0)"},
    {ARB_EWIRE_FANIN, "EWIRE_FANIN", "fan-in of a tier below agg_depth is 0"},
    {ARB_EWIRE_PAYLOAD_MISSING, "EWIRE_PAYLOAD_MISSING", "payload_valid = 1 but no payload"},
    {ARB_EWIRE_PAYLOAD_ALIGN, "EWIRE_PAYLOAD_ALIGN",
     "payload is not a whole number of dtype elements"},
    {ARB_EWIRE_PAYLOAD_UNEXPECTED, "EWIRE_PAYLOAD_UNEXPECTED",
     "payload_valid = 0 but payload bytes follow"},
    {ARB_EWIRE_PAYLOAD_TOO_LONG, "EWIRE_PAYLOAD_TOO_LONG", "payload longer than 8192 B"},
    {ARB_EWIRE_ATTEMPT, "EWIRE_ATTEMPT",
     "attempt (byte 14) must be 0 outside normal credits, normal requests and AGG_MISS"},

    {ARB_EFRAME_SHORT, "EFRAME_SHORT", "frame shorter than its headers"},
    {ARB_EFRAME_ETHERTYPE, "EFRAME_ETHERTYPE", "EtherType is not IPv4"},
    {ARB_EFRAME_IP_VERSION, "EFRAME_IP_VERSION", "IP version is not 4"},
    {ARB_EFRAME_IP_IHL, "EFRAME_IP_IHL", "IPv4 header with options (IHL != 5)"},
    {ARB_EFRAME_IP_LENGTH, "EFRAME_IP_LENGTH", "IPv4 total length does not fit the frame"},
    {ARB_EFRAME_IP_FRAGMENT, "EFRAME_IP_FRAGMENT", "IPv4 fragment"},
    {ARB_EFRAME_IP_CHECKSUM, "EFRAME_IP_CHECKSUM", "bad IPv4 header checksum"},
    {ARB_EFRAME_IP_PROTO, "EFRAME_IP_PROTO", "IP protocol is not UDP"},
    {ARB_EFRAME_UDP_LENGTH, "EFRAME_UDP_LENGTH", "UDP length does not fit the datagram"},
    {ARB_EFRAME_UDP_CHECKSUM, "EFRAME_UDP_CHECKSUM", "bad UDP checksum"},
};

static const struct err_entry *find(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err) return &errors[i];
    return NULL;
}

const char *arb_strerror(int err)
{
    const struct err_entry *e = find(err);
    return e ? e->text : "unknown error";
}

const char *arb_errname(int err)
{
    const struct err_entry *e = find(err);
    return e ? e->name : "UNKNOWN";
}

int arb_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}
