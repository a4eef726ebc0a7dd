/*
 * The pieces arbor wire's subcommands share (cmd_wire.c: decode, examples
 * and the dispatch; wire_encode.c: encode; wire_examples.c: the examples).
 */
#ifndef ARBOR_WIRE_INT_H
#define ARBOR_WIRE_INT_H

#include "arbor/wire.h"

#include <stddef.h>
#include <stdint.h>

/* arbor wire --help. */
extern const char wire_usage[];

/*
 * Parse hex text into a malloc'd buffer of exactly *len bytes (so that a
 * decoder reading past it is caught by the sanitizers). On error prints
 * the reason ("arbor WHAT: ...") and returns NULL.
 */
uint8_t *wire_parse_hex(const char *what, const char *s, size_t *len);
/* buf as hex digits, one line on stdout. */
void wire_print_hex(const uint8_t *buf, size_t len);

/* A packet of the wire format with a name (arbor wire examples). */
struct wire_example {
    const char *name;
    const char *what;
    arb_hdr h;
    size_t payload_len;
};
extern const struct wire_example wire_example_table[];
extern const size_t wire_n_examples;
/* The example named `name`, or NULL. */
const struct wire_example *wire_find_example(const char *name);
/* An example's payload: the f32 or bf16 values 1, 2, 3, 4... little-endian. */
void wire_example_payload(const struct wire_example *e, uint8_t *buf);
/* "register, register_ack, credit, ...": every example's name. */
void wire_example_names(char *buf, size_t len);

/* arbor wire encode (wire_encode.c): argv[0] is "encode". */
int wire_encode(int argc, char **argv);

#endif
