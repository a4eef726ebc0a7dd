/*
 * The packets arbor wire examples prints and arbor wire encode starts from.
 */
#include "wire_int.h"

#include <stdio.h>
#include <string.h>

/* One offset's life on a star, plus the recovery and multi-tier packets.
 * Payloads are small (4 f32 elements) to keep the hex readable. */
const struct wire_example wire_example_table[] = {
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
    {"seeded_credit",
     "a one-packet AllReduce's credit for offset 5 carrying the responder's own input",
     {2,
      ARB_PT_RESPONSE,
      0,
      ARB_OP_SUM,
      1,
      1,
      ARB_PK_SEED,
      1,
      0,
      0,
      0,
      5,
      5,
      {0},
      {0},
      0,
      ARB_DTYPE_F32},
     16},
    {"seeded_aggregate",
     "a seeded slot's aggregate of 31 contributions: the whole result, also sent down",
     {2,
      ARB_PT_DATA_REQUEST,
      0,
      ARB_OP_SUM,
      1,
      1,
      ARB_PK_SEED,
      0,
      0,
      0,
      1,
      5,
      31,
      {0},
      {0},
      0,
      ARB_DTYPE_F32},
     16},
};
const size_t wire_n_examples = sizeof wire_example_table / sizeof wire_example_table[0];

const struct wire_example *wire_find_example(const char *name)
{
    for (size_t i = 0; i < wire_n_examples; i++)
        if (strcmp(wire_example_table[i].name, name) == 0) return &wire_example_table[i];
    return NULL;
}

void wire_example_payload(const struct wire_example *e, uint8_t *buf)
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

void wire_example_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < wire_n_examples && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", wire_example_table[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
}
