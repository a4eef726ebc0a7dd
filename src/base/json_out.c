/* The number formats of the library's JSON (json_out.h). */
#include "base/json_out.h"

#include <inttypes.h>
#include <stdio.h>

void arb_json_u64(cJSON *o, const char *name, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    cJSON_AddRawToObject(o, name, b);
}

void arb_json_fixed(cJSON *o, const char *name, double v, int decimals)
{
    char b[64];
    if (v != v || v > 1e300 || v < -1e300)
        snprintf(b, sizeof b, "null");
    else
        snprintf(b, sizeof b, "%.*f", decimals, v);
    cJSON_AddRawToObject(o, name, b);
}

void arb_json_us(cJSON *o, const char *name, arb_time ps)
{
    char b[48];
    if (ps == ARB_TIME_NEVER)
        snprintf(b, sizeof b, "null");
    else
        snprintf(b, sizeof b, "%" PRIu64 ".%06" PRIu64, ps / ARB_PS_PER_US, ps % ARB_PS_PER_US);
    cJSON_AddRawToObject(o, name, b);
}

void arb_json_num(cJSON *o, const char *name, double v)
{
    if (v != v)
        cJSON_AddNullToObject(o, name);
    else
        cJSON_AddNumberToObject(o, name, v);
}
