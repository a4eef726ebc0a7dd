/** @file
 * arbor/scenario.h - simulation scenarios: an INI-like file of sections
 * and keys (as OMNeT++ users know them) that names a fabric, a routing
 * scheme, a transport, switch queues and a workload; running it through
 * the simulator; and the results as JSON and CSV text.
 *
 * @verbatim
 *   [fabric]     topology, link_rate, up_rate, delay, fail, loss, link
 *   [routing]    scheme, seed, steer
 *   [transport]  kind, mtu, header, ctrl, rto, window, ack_every, irn_reorder
 *   [switch]     queue, ecn, kmin, kmax, pmax, pfc, xoff, xon
 *   [workload]   kind, size, qps, qp_mode, chunk, ranks, hosts, traffic,
 *                shift, senders, receiver, file, start, seed, backend
 *   [host]       coll, algorithm, root_rank, trace_format
 *                (workload.kind = host_collective, iteration; docs/workloads.md)
 *   [arbor]      collective, dtype, mode, payload, window, slots, timeout,
 *                retry, subchannels, agg_levels, profile, root, wire_check,
 *                jobs, job_start, job_size, job_ranks, slot_partition, cc,
 *                background (transport flows beside the collective)
 *                (workload.kind = arbor; docs/arbor-sim.md); inner_ranks,
 *                inner_pieces (workload.backend = arbor: an iteration's
 *                collectives over Arbor)
 *   [run]        seed, stop, sample, pcap, pcap_ports, qp_order, watch
 *   [lab]        scale, iters, warmup, check, deadline (arbor lab only;
 *                docs/lab.md; the simulator ignores them)
   @endverbatim
 *
 * docs/scenarios.md has every key with its default; arb_scenario_key lists
 * them. Values: sizes as arb_parse_size reads them (bytes with an optional
 * unit: K, M, G, T and KiB .. TiB binary, KB .. TB decimal; "1.5KiB");
 * times as topo.h's parser (ps, ns, us, ms, s;
 * "0" alone); rates as topo.h's (100G, 2.5G; a trailing "bps" or "b/s" is
 * accepted); booleans on/off, true/false, yes/no, 1/0. Relative file paths
 * are resolved against the directory of the scenario file that set them
 * (against the working directory for -s overrides and built-in defaults).
 *
 * Errors name where the value came from: "FILE:LINE: section.key: what"
 * for a file, "-s section.key: what" for an override, "OPTION
 * (section.key): what" for an option that stands for a key
 * (arb_scenario_set_from), "section.key: what" for a default. Parsing checks syntax and ranges;
 what needs the fabric
 * (a topology spec, a host index, a trace file) is checked by
 * arb_scenario_run with the same kind of message.
 *
 * The run is a pure function of the scenario (and its files): the same
 * scenario gives the same JSON, byte for byte, apart from the optional
 * `host` object the caller fills in. No clock, no printing.
 */
#ifndef ARBOR_SCENARIO_H
#define ARBOR_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/sim.h"
#include "arbor/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A scenario: every key's current value and where it came from (opaque). */
typedef struct arb_scenario arb_scenario;

/** A scenario holding every default (the built-in scenario). Errors: ARB_ENOMEM. */
int arb_scenario_new(arb_scenario **out);
/** Free the scenario (NULL is ignored). */
void arb_scenario_free(arb_scenario *sc);

/**
 * Read a scenario file on top of the current values (later keys win).
 * Errors: ARB_EIO (unreadable; err names the file), ARB_EPARSE (an unknown
 * section or key, a malformed line, a bad value: err is
 * "FILE:LINE: section.key: what"), ARB_ENOMEM. Values set before the
 * first error stay set.
 */
int arb_scenario_load(arb_scenario *sc, const char *path, char *err, size_t errlen);

/** The same for text in memory; `name` stands for the file in messages,
 * relative paths resolve against `dir` (NULL: the working directory).
 * Errors: as arb_scenario_load (ARB_EPARSE, ARB_ENOMEM). */
int arb_scenario_load_string(arb_scenario *sc, const char *text, const char *name, const char *dir,
                             char *err, size_t errlen);

/**
 * Set one value: "section.key=value", or "key=value" when only one section
 * has that key. Errors: ARB_EPARSE (no '=', an unknown or ambiguous key, a bad
 * value; err is "-s section.key: what"), ARB_ENOMEM.
 */
int arb_scenario_set(arb_scenario *sc, const char *assignment, char *err, size_t errlen);

/**
 * Set one value as arb_scenario_set does, for a command-line option that
 * stands for a key (such as --pcap for run.pcap): every message about the
 * value, now or when the scenario runs, names the option and the key,
 * "OPTION (section.key): what", instead of "-s section.key: what". NULL or
 * "-s" is arb_scenario_set. Errors: as arb_scenario_set (ARB_EPARSE, ARB_ENOMEM).
 */
int arb_scenario_set_from(arb_scenario *sc, const char *assignment, const char *option, char *err,
                          size_t errlen);

/** The current text of section.key, or NULL for an unknown key. */
const char *arb_scenario_get(const arb_scenario *sc, const char *section, const char *key);

/**
 * Where section.key's current value came from: the file that set it (*line
 * its line, 1 on; for text, the name arb_scenario_load_string had), the command-line
 * option that set it ("-s", or the option arb_scenario_set_from named;
 * *line 0), or NULL when the key holds its default or is unknown. line may
 * be NULL. The text is valid until the key is set again or sc is freed.
 */
const char *arb_scenario_origin(const arb_scenario *sc, const char *section, const char *key,
                                unsigned *line);

/**
 * Where runs of the scenario report what they find questionable but run
 * anyway (ARB_LOG_WARN, one line each, "section.key: what" as err's
 * messages name the key: more subchannels than the fabric has distinct
 * trees). lg is copied; NULL or a zeroed logger (the default): none.
 */
void arb_scenario_set_logger(arb_scenario *sc, const arb_logger *lg);

/** The file loaded last, or NULL (built-in). */
const char *arb_scenario_file(const arb_scenario *sc);

/** The key table: entry i (0 <= i < arb_scenario_n_keys()). */
typedef struct arb_scenario_key_info {
    const char *section; /**< "fabric", "routing", ... */
    const char *key;     /**< the key within its section */
    const char *def;     /**< default text */
    const char *doc;     /**< one line */
    const char *choices; /**< "a|b|c" for a key that takes one of a set of names, else NULL */
} arb_scenario_key_info;

/** The number of scenario keys. */
size_t arb_scenario_n_keys(void);
/** Fill *info with key i (static strings). Errors: ARB_EINVAL for i out of range. */
int arb_scenario_key(size_t i, arb_scenario_key_info *info);

/**
 * The fabric the scenario names, without running it: fabric.topology with
 * link_rate, up_rate and delay, fabric.fail applied, and fabric.link's
 * per-link rates, delays and losses (arb_topo_link_loss; fabric.loss is
 * the rest's). For drivers other than the simulator (arbor lab), so that
 * the same file means the same fabric. The caller frees *out with
 * arb_topo_free. Errors: as arb_scenario_run's for those keys (ARB_EPARSE,
 * ARB_EINVAL, ARB_ENOENT; err names the key), ARB_ENOMEM.
 */
int arb_scenario_fabric(const arb_scenario *sc, arb_topo **out, char *err, size_t errlen);

/**
 * Called between slices of the run (about every run.sample of simulated
 * time, at least every 100 us): the simulated time, the stop time (0: none)
 * and the workload's flows done / planned.
 */
typedef void (*arb_scenario_progress_fn)(void *ctx, arb_time now, arb_time stop,
                                         uint64_t flows_done, uint64_t flows_planned);

/** The results of one run (opaque). */
typedef struct arb_scenario_result arb_scenario_result;

/**
 * Build the fabric, routing, simulator and workload the scenario names and
 * run until the workload is done and the fabric is idle, or until
 * run.stop. progress may be NULL. On success *out holds the results: a run
 * stopped before the workload finished, or one an Arbor engine gave up on
 * (ARB_ETIMEDOUT: something was lost for good), is a success too, and
 * arb_scenario_result_status says so.
 * Errors: ARB_EPARSE / ARB_EINVAL / ARB_EIO / ARB_ENOENT for what the
 * scenario names (err as for arb_scenario_load: file, line and key),
 * ARB_ENOMEM, ARB_ERANGE (the simulator cannot go on).
 */
int arb_scenario_run(const arb_scenario *sc, arb_scenario_progress_fn progress, void *ctx,
                     arb_scenario_result **out, char *err, size_t errlen);

/**
 * arb_scenario_run as one part of a partitioned run (arb_sim_partition):
 * every process calls it with the same scenario and its own ops (NULL: the
 * whole fabric, as arb_scenario_run). The fabric is cut by subtree
 * (arb_sim_part_subtrees, ops->n_ranks parts); *out holds, in part 0, the
 * figures of the whole run, equal to arb_scenario_run's (in the other parts
 * they are not to be reported). Errors as arb_scenario_run's, and
 * ARB_EINVAL naming the key of a feature a partitioned run does not
 * support (docs/partition.md).
 */
int arb_scenario_run_part(const arb_scenario *sc, const arb_sim_part_ops *ops,
                          arb_scenario_progress_fn progress, void *ctx, arb_scenario_result **out,
                          char *err, size_t errlen);

/** Free the results (NULL is ignored). */
void arb_scenario_result_free(arb_scenario_result *r);

/** The simulator's figures. */
const arb_sim_stats *arb_scenario_result_stats(const arb_scenario_result *r);
/** The workload's figures. */
const arb_workload_result *arb_scenario_result_workload(const arb_scenario_result *r);
/** The simulated time the run is reported as (the JSON's sim_time_us): its
 * last event that did something; a host timer that fired after it and found
 * nothing to do (the timeout of a flow acknowledged since) does not count. */
arb_time arb_scenario_result_time(const arb_scenario_result *r);

/** A partitioned run's figures of this part (arb_sim_part_figures);
 * ARB_EINVAL for a run of the whole fabric. */
int arb_scenario_result_part(const arb_scenario_result *r, arb_sim_part_info *out);

/** How a run ended: done (the workload finished), incomplete (run.stop came
 * first) or failed (an Arbor engine gave up, or a flow's sender did, past
 * transport.retry_limit: *why, if not NULL, names what was lost; valid as
 * long as r). A run whose engine gave up only after
 * every rank was done (a channel could not close: the outputs are final)
 * is done, with *why set to that warning. */
typedef enum arb_scenario_status {
    ARB_SCN_DONE = 0,
    ARB_SCN_INCOMPLETE = 1,
    ARB_SCN_FAILED = 2
} arb_scenario_status;

/** How the run ended; *why (when why is not NULL) as arb_scenario_status says. */
arb_scenario_status arb_scenario_result_status(const arb_scenario_result *r, const char **why);

/** The Arbor collective's figures (workload.kind = arbor), else NULL. */
const arb_sim_arbor_result *arb_scenario_result_arbor(const arb_scenario_result *r);

/**
 * The scenario `arbor sim` runs without a file, as scenario text loaded on
 * top of arb_scenario_new's defaults: an Arbor AllReduce of 64 MiB over
 * star-32 ([arbor] defaults: header-only, f32, 8192 B payloads).
 */
const char *arb_scenario_default_text(void);

/** What the caller measured of the run on its machine (the only part of the
 * JSON that is not a function of the scenario). */
typedef struct arb_scenario_host {
    double wall_s;      /**< wall-clock seconds the run took */
    double peak_rss_mb; /**< the process's peak resident memory, MB */
} arb_scenario_host;

/** The "schema" field of arb_scenario_json's object: its layout's name and
 * major version (docs/schema/arbor-sim.schema.json). */
#define ARB_SCENARIO_JSON_SCHEMA "arbor-sim/1"

/**
 * The results as one JSON object (docs/simulator.md has the schema),
 * starting with "schema" (ARB_SCENARIO_JSON_SCHEMA) and "version"
 * (arb_version()), numbers in fixed formats; `host` NULL leaves the host object out.
 * A string the caller frees with free() (cJSON's text, made by the C
 * library's allocator whatever arb_mem_set_default says), or NULL when out
 * of memory.
 */
char *arb_scenario_json(const arb_scenario_result *r, const arb_scenario_host *host);

/** The CSV tables arb_scenario_csv writes. */
typedef enum arb_scenario_csv_kind {
    ARB_SCN_CSV_UTIL = 0,  /**< time_us, then utilisation per port class per interval */
    ARB_SCN_CSV_QUEUE = 1, /**< time_us, then mean and max queue bytes per port class */
    ARB_SCN_CSV_FLOWS = 2, /**< one row per flow: id,src,dst,bytes,start_us,finish_us,fct_us,
                              src_ip,dst_ip,proto,sport,dport,qp,retx_bytes,ideal_us,slowdown,
                              gave_up_us */
    ARB_SCN_CSV_RANKS = 3, /**< Arbor: one row per rank: job,rank,host,done_us */
    ARB_SCN_CSV_SLOTS = 4, /**< Arbor: time_us, live_slots (all switches), max_switch_slots */
    ARB_SCN_CSV_PORTS = 5  /**< run.sample_ports: time_us, then NODE:pK->PEER_util and _queue */
} arb_scenario_csv_kind;

/** CSV text with a header line, from the process allocator (the caller
 * frees it with arb_mem_free(NULL, text), or free() when no other was set
 * with arb_mem_set_default), NULL when out of memory or for a bad kind. */
char *arb_scenario_csv(const arb_scenario_result *r, arb_scenario_csv_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_SCENARIO_H */
