/*
 * The values of the keys that take one of a set of names (VT_ENUM), by
 * name: one table of names and values per key, or the engine's own parser
 * where the engine names its values (the collectives). A key's choices in
 * the key table (scn_int.h) say what a file may write; these say what each
 * means (tests/unit/test_scn_defaults.c checks that they name the same).
 */
#include "scn_int.h"

#include "arbor/cc.h"
#include "arbor/plan.h"
#include "arbor/workload.h"

#include <string.h>

static const struct scn_choice tr_kind[] = {
    {"gbn", ARB_TRANSPORT_GBN}, {"roce", ARB_TRANSPORT_GBN}, {"irn", ARB_TRANSPORT_IRN}, {NULL, 0}};
static const struct scn_choice tr_tlp[] = {
    {"auto", ARB_SIM_TLP_AUTO}, {"on", 1}, {"off", 0}, {NULL, 0}};
static const struct scn_choice wl_qp_mode[] = {
    {"split", ARB_QP_SPLIT}, {"rr", ARB_QP_RR}, {"hpn", ARB_QP_HPN}, {NULL, 0}};
static const struct scn_choice wl_backend[] = {{"host", 0}, {"arbor", 1}, {NULL, 0}};
static const struct scn_choice hc_algo[] = {{"auto", ARB_HC_AUTO},         {"ring", ARB_HC_RING},
                                            {"tree", ARB_HC_TREE},         {"rd", ARB_HC_RD},
                                            {"direct", ARB_HC_DIRECT},     {"chain", ARB_HC_CHAIN},
                                            {"binomial", ARB_HC_BINOMIAL}, {NULL, 0}};
static const struct scn_choice hc_format[] = {
    {"auto", ARB_TRACE_AUTO}, {"text", ARB_TRACE_TEXT}, {"chakra", ARB_TRACE_CHAKRA}, {NULL, 0}};
static const struct scn_choice ar_dtype[] = {{"f16", ARB_DTYPE_F16},
                                             {"bf16", ARB_DTYPE_BF16},
                                             {"f32", ARB_DTYPE_F32},
                                             {"f64", ARB_DTYPE_F64},
                                             {"i32", ARB_DTYPE_I32},
                                             {"i64", ARB_DTYPE_I64},
                                             {NULL, 0}};
static const struct scn_choice ar_mode[] = {{"headers", 0}, {"values", 1}, {NULL, 0}};
static const struct scn_choice ar_repair[] = {{"local", 1}, {"end-to-end", 0}, {NULL, 0}};
static const struct scn_choice ar_timeout_mode[] = {{"fixed", 0}, {"adaptive", 1}, {NULL, 0}};
static const struct scn_choice ar_detection[] = {{"order", 1}, {"timer", 0}, {NULL, 0}};
static const struct scn_choice ar_cc[] = {{"disabled", ARB_CC_DISABLED},
                                          {"fixed", ARB_CC_FIXED},
                                          {"timely", ARB_CC_TIMELY},
                                          {"swift", ARB_CC_SWIFT},
                                          {"dcqcn", ARB_CC_DCQCN},
                                          {"oscar", ARB_CC_OSCAR},
                                          {NULL, 0}};
static const struct scn_choice ar_profile[] = {{"auto", 0}, {"16", 16}, {"20", 20}, {NULL, 0}};
static const struct scn_choice ar_skew_mode[] = {
    {"linear", 0}, {"random", 1}, {"lag", 2}, {NULL, 0}};
static const struct scn_choice ar_subchannel_mode[] = {{"static", 0}, {"dynamic", 1}, {NULL, 0}};
static const struct scn_choice ar_slot_partition[] = {{"shared", 0}, {"static", 1}, {NULL, 0}};
static const struct scn_choice run_order[] = {{"global", 0}, {"local", 1}, {NULL, 0}};

static const struct {
    enum scn_key k;
    const struct scn_choice *names; /* NULL: the engine's parser and names */
    int (*parse)(const char *name);
    const char *(*name)(int value);
} by_key[] = {
    {K_TR_KIND, tr_kind, NULL, NULL},
    {K_TR_TLP, tr_tlp, NULL, NULL},
    {K_WL_QPMODE, wl_qp_mode, NULL, NULL},
    {K_WL_BACKEND, wl_backend, NULL, NULL},
    {K_HC_COLL, NULL, arb_coll_parse, arb_coll_name},
    {K_HC_ALGO, hc_algo, NULL, NULL},
    {K_HC_FORMAT, hc_format, NULL, NULL},
    {K_AR_COLL, NULL, arb_coll_parse, arb_coll_name},
    {K_AR_DTYPE, ar_dtype, NULL, NULL},
    {K_AR_MODE, ar_mode, NULL, NULL},
    {K_AR_REPAIR, ar_repair, NULL, NULL},
    {K_AR_TOMODE, ar_timeout_mode, NULL, NULL},
    {K_AR_DETECT, ar_detection, NULL, NULL},
    {K_AR_CC, ar_cc, NULL, NULL},
    {K_AR_PROFILE, ar_profile, NULL, NULL},
    {K_AR_SKEWMODE, ar_skew_mode, NULL, NULL},
    {K_AR_SUBMODE, ar_subchannel_mode, NULL, NULL},
    {K_AR_PARTITION, ar_slot_partition, NULL, NULL},
    {K_RUN_ORDER, run_order, NULL, NULL},
};

static int find(enum scn_key k)
{
    for (size_t i = 0; i < sizeof by_key / sizeof by_key[0]; i++)
        if (by_key[i].k == k) return (int)i;
    return -1;
}

const struct scn_choice *scn_choices(enum scn_key k)
{
    int i = find(k);
    return i < 0 ? NULL : by_key[i].names;
}

int scn_choice_parse(enum scn_key k, const char *name, int *value)
{
    int i = find(k);
    if (i < 0) return ARB_ENOENT;
    if (by_key[i].parse) {
        int v = by_key[i].parse(name);
        if (v < 0) return ARB_ENOENT;
        *value = v;
        return 0;
    }
    for (const struct scn_choice *c = by_key[i].names; c->name; c++)
        if (strcmp(c->name, name) == 0) {
            *value = c->value;
            return 0;
        }
    return ARB_ENOENT;
}

const char *scn_choice_name(enum scn_key k, int value)
{
    int i = find(k);
    if (i < 0) return NULL;
    if (by_key[i].name) return by_key[i].name(value);
    for (const struct scn_choice *c = by_key[i].names; c->name; c++)
        if (c->value == value) return c->name;
    return NULL;
}

int scn_choice(const arb_scenario *sc, enum scn_key k)
{
    int v = 0;
    scn_choice_parse(k, scn_str(sc, k), &v); /* checked when set */
    return v;
}
