/*
 * base/json_out.h (internal) - the number formats of the library's JSON
 * (arb_scenario_json and the parts it gathers: host workloads, recovery
 * figures): one member each, added to a cJSON object. The fixed formats
 * are written as raw text, so a figure reads the same on every machine and
 * every run; a value with no figure (NaN, infinite, ARB_TIME_NEVER) is
 * null.
 */
#ifndef ARBOR_BASE_JSON_OUT_H
#define ARBOR_BASE_JSON_OUT_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "arbor/base.h"

/* An unsigned integer, in decimal. */
void arb_json_u64(cJSON *o, const char *name, uint64_t v);

/* A real with `decimals` decimals ("%.*f"); null for NaN or beyond +-1e300. */
void arb_json_fixed(cJSON *o, const char *name, double v, int decimals);

/* Picoseconds as microseconds with six exact decimals (integer arithmetic:
 * 1234567 ps is 1.234567); null for ARB_TIME_NEVER. */
void arb_json_us(cJSON *o, const char *name, arb_time ps);

/* A cJSON number (the shortest text that reads back as v: 12.5, 0.1); null
 * for NaN. */
void arb_json_num(cJSON *o, const char *name, double v);

#endif
