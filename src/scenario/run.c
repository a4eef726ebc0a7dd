/*
 * Running a scenario: build the fabric, routing, simulator and workload it
 * names, run the simulator in slices of run.sample (sampling every port's
 * queue and transmitted bytes between slices; slicing changes nothing in
 * the run), and gather its figures into the result (report.c writes them
 * out as JSON and CSV). The steps' jobs are in the files scn_run.h names.
 */
#include "scn_run.h"

#include "arbor/plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

const char *arb_scenario_default_text(void)
{
    return "; the built-in default: an Arbor AllReduce of 64 MiB over star-32\n"
           "[fabric]\n"
           "topology = star:32\n"
           "[workload]\n"
           "kind = arbor\n"
           "size = 64MiB\n";
}

/* Run up to every fabric.fail_at entry and workload timer due by `until`
 * and apply each at its time (failures first on a tie). A timer the
 * workload sets during a run stops that run at its time (arb_sim_stop_at). */
static int run_failing(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_workload *w,
                       arb_time until)
{
    char msg[256];
    int rc = 0;
    while (rc == 0) {
        arb_time fat = scn_failat_next(fa), wat = w ? arb_workload_next_timer(w) : ARB_TIME_NEVER;
        arb_time at = fat < wat ? fat : wat;
        if (at > until) break;
        rc = arb_sim_run(s, at);
        if (rc == 0 && w && arb_workload_next_timer(w) < at) continue; /* set meanwhile: first */
        if (rc == 0 && fat == at)
            rc = scn_failat_apply(fa, t, lb, s, at, msg, sizeof msg);
        else if (rc == 0)
            arb_workload_timer(w, s, at);
    }
    return rc;
}

/* The simulator up to `until`, failures and workload timers included. */
static int run_to(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_workload *w,
                  arb_time until)
{
    int rc = run_failing(fa, t, lb, s, w, until);
    if (rc == 0) rc = arb_sim_run(s, until);
    while (rc == 0 && w && arb_workload_next_timer(w) <= until) { /* set during that run */
        rc = run_failing(fa, t, lb, s, w, until);
        if (rc == 0) rc = arb_sim_run(s, until);
    }
    return rc;
}

/* The result, echoing every key's value and the file. */
static int run_result(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = arb_calloc(1, sizeof *r);
    run->r = r;
    if (!r) return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    for (int k = 0; k < K_COUNT; k++)
        if (!(r->echo[k] = arb_strdup(sc->v[k].text)))
            return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    if (sc->file && !(r->file = arb_strdup(sc->file)))
        return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    run->seed = scn_u64(sc, K_RUN_SEED);
    run->arbor = strcmp(scn_str(sc, K_WL_KIND), "arbor") == 0;
    return 0;
}

/* The topology of [fabric] with its rates and delay, and fabric.fail applied. */
static int fabric_topo(const arb_scenario *sc, arb_topo **out, char *err, size_t errlen)
{
    char msg[512];
    arb_topo_config tc = arb_topo_config_default();
    scn_engine_apply(sc, SCN_ENG_TOPO, &tc); /* link_rate, up_rate, delay */
    int rc = arb_topo_new(out, scn_str(sc, K_FAB_TOPO), &tc, msg, sizeof msg);
    if (rc < 0) return scn_key_fail(sc, K_FAB_TOPO, err, errlen, rc, msg);
    if (*scn_str(sc, K_FAB_FAIL)) {
        rc = arb_topo_fail(*out, scn_str(sc, K_FAB_FAIL), msg, sizeof msg);
        if (rc < 0) return scn_key_fail(sc, K_FAB_FAIL, err, errlen, rc, msg);
    }
    return 0;
}

int arb_scenario_fabric(const arb_scenario *sc, arb_topo **out, char *err, size_t errlen)
{
    char msg[512];
    *out = NULL;
    int rc = fabric_topo(sc, out, err, errlen);
    if (rc == 0 && *scn_str(sc, K_FAB_LINK)) {
        rc = scn_links_apply(*out, scn_str(sc, K_FAB_LINK), msg, sizeof msg);
        if (rc < 0) rc = scn_key_fail(sc, K_FAB_LINK, err, errlen, rc, msg);
    }
    if (rc < 0) {
        arb_topo_free(*out);
        *out = NULL;
    }
    return rc;
}

/* [fabric]: the topology, what has failed, what fails during the run, and
 * the links set apart. */
static int run_fabric(struct scn_run *run)
{
    static const enum scn_key at_keys[] = {K_FAB_FAILAT, K_FAB_RESTOREAT, K_FAB_REBOOTAT};
    static const int at_kinds[] = {SCN_EV_FAIL, SCN_EV_RESTORE, SCN_EV_REBOOT};
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    char msg[512];
    int rc = fabric_topo(sc, &run->t, run->err, run->errlen);
    if (rc < 0) return rc;
    for (int k = 0; k < 3; k++) {
        if (!*scn_str(sc, at_keys[k])) continue;
        rc = scn_failat_add(&run->failat, run->t, scn_str(sc, at_keys[k]), at_kinds[k], msg,
                            sizeof msg);
        if (rc < 0) return scn_key_fail(sc, at_keys[k], run->err, run->errlen, rc, msg);
    }
    if (*scn_str(sc, K_FAB_LINK)) {
        rc = scn_links_apply(run->t, scn_str(sc, K_FAB_LINK), msg, sizeof msg);
        if (rc < 0) return scn_key_fail(sc, K_FAB_LINK, run->err, run->errlen, rc, msg);
    }
    snprintf(r->topo_spec, sizeof r->topo_spec, "%s", arb_topo_spec(run->t));
    r->hosts = arb_topo_n_hosts(run->t);
    r->switches = arb_topo_n_nodes(run->t) - r->hosts;
    r->links = arb_topo_n_ports(run->t) / 2;
    return 0;
}

/* [routing]: the scheme, HPN's source ports, steering, and the order check
 * (run.qp_order). */
static int run_routing(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    uint64_t rseed = scn_u64(sc, K_RT_SEED);
    int rc = scn_route_make(&run->route, run->t, scn_str(sc, K_RT_SCHEME),
                            rseed ? rseed : run->seed, &run->cfg, msg, sizeof msg);
    if (rc < 0) return scn_key_fail(sc, K_RT_SCHEME, run->err, run->errlen, rc, msg);
    snprintf(run->r->route_spec, sizeof run->r->route_spec, "%s", run->route.spec);
    if (run->w && arb_workload_get_kind(run->w) == ARB_WL_ALLREDUCE &&
        scn_choice(sc, K_WL_QPMODE) == ARB_QP_HPN) {
        /* HPN's host side: ports whose paths the switches' hash keeps apart */
        rc = arb_workload_route_sports(run->w, arb_lb_router(run->route.ctx), NULL);
        if (rc < 0)
            return scn_key_fail(sc, K_WL_QPMODE, run->err, run->errlen, rc,
                                rc == ARB_EINVAL
                                    ? "hpn: the ranks' source port range is smaller than qps"
                                    : "hpn: no source ports with routable paths");
    }
    if (*scn_str(sc, K_RT_STEER)) {
        rc = scn_steer_make(&run->steer, run->t, scn_str(sc, K_RT_STEER), &run->cfg, msg,
                            sizeof msg);
        if (rc < 0) return scn_key_fail(sc, K_RT_STEER, run->err, run->errlen, rc, msg);
    }
    if (scn_u64(sc, K_RUN_QPORDER)) {
        rc = scn_order_make(&run->order, run->t, &run->cfg);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    }
    return 0;
}

/* run.pcap could not be made or given its file: the key named, and the
 * file as the user wrote it. */
static int pcap_fail(const arb_scenario *sc, int rc, char *err, size_t errlen)
{
    char msg[320];
    if (rc == ARB_EIO)
        snprintf(msg, sizeof msg, "%s: cannot create the file", scn_str(sc, K_RUN_PCAP));
    else
        snprintf(msg, sizeof msg, "%s", rc == ARB_ENOMEM ? "out of memory" : arb_strerror(rc));
    return scn_key_fail(sc, K_RUN_PCAP, err, errlen, rc, msg);
}

/* run.pcap (after the routing, whose tap it chains to) and run.watch. A
 * partitioned run's capture gets its file later (run_pcap_file), once
 * everything a partitioned run refuses has been refused. */
static int run_taps(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    char *pcap_path = scn_path(sc, K_RUN_PCAP);
    if (pcap_path) {
        uint32_t *pp = NULL;
        unsigned npp = 0;
        int rc = scn_port_list(run->t, scn_str(sc, K_RUN_PCAPPORTS), &pp, &npp, msg, sizeof msg);
        if (rc < 0) {
            arb_free(pcap_path);
            return scn_key_fail(sc, K_RUN_PCAPPORTS, run->err, run->errlen, rc, msg);
        }
        uint32_t snap = (uint32_t)scn_u64(sc, K_RUN_PCAPSNAP);
        if (run->part) {
            rc = arb_sim_pcap_new(&run->pcap, pp, npp, snap);
            run->pcap_path = pcap_path;
        } else {
            rc = arb_sim_pcap_open(&run->pcap, pcap_path, pp, npp, snap);
            arb_free(pcap_path);
        }
        arb_free(pp);
        if (rc < 0) return pcap_fail(sc, rc, run->err, run->errlen);
        arb_sim_pcap_install(run->pcap, &run->cfg);
    }
    if (*scn_str(sc, K_RUN_WATCH)) {
        int rc = scn_watch_make(&run->r->watch, run->t, scn_str(sc, K_RUN_WATCH),
                                scn_u64(sc, K_RUN_SAMPLE), &run->cfg, msg, sizeof msg);
        if (rc < 0) return scn_key_fail(sc, K_RUN_WATCH, run->err, run->errlen, rc, msg);
    }
    return 0;
}

/* A partitioned run's capture: its file, in part 0 (every part fails alike). */
static int run_pcap_file(struct scn_run *run)
{
    if (!run->part || !run->pcap) return 0;
    int rc = arb_sim_pcap_partition(run->pcap, run->s, run->pcap_path);
    return rc < 0 ? pcap_fail(run->sc, rc, run->err, run->errlen) : 0;
}

/* The simulator, its sampler and the fault events' recovery figures. */
static int run_simulator(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    int rc = arb_sim_new(&run->s, run->t, &run->cfg);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "simulator: %s", arb_strerror(rc));
    if (scn_echo_timers(run) < 0)
        return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    if (run->part && (rc = scn_run_partition(run)) < 0) return rc;
    rc = scn_setup_classes(r, run->t, run->cfg.queue_bytes, &run->sp);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    rc = scn_setup_port_series(run->sc, r, run->t, &run->sp, run->err, run->errlen);
    if (rc < 0) return rc;
    run->sp.r = r;
    run->sp.s = run->s;
    if (run->failat.n_events) {
        rc = scn_recovery_new(&r->rec, &run->failat, scn_u64(run->sc, K_RUN_FAULTWIN), run->arbor);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
        run->failat.rec = r->rec;
    }
    return 0;
}

/* The Arbor jobs (workload.kind = arbor), the watch's view of their
 * channels, and the workload's start. */
static int run_start(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    int rc;
    if (run->arbor) {
        rc = scn_arbor_setup(run->sc, r, run->t, run->s, &run->plans, &run->n_plans, run->err,
                             run->errlen);
        if (rc < 0) return rc;
        /* arbor.fail failed links and switches after the plans: the
         * routing and the simulator learn of it as of a fabric.fail_at
         * entry at time 0 (the trees keep what failed) */
        if (*scn_str(run->sc, K_AR_FAIL)) {
            if (arb_lb_refresh(run->route.ctx) < 0)
                return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
            arb_sim_fabric_changed(run->s);
        }
    }
    if (r->watch && run->n_plans) {
        uint32_t *ch_end = arb_malloc(run->n_plans * sizeof *ch_end);
        for (uint32_t k = 0; ch_end && k < run->n_plans; k++)
            ch_end[k] = (k ? ch_end[k - 1] : 0) + arb_plan_n_channels(run->plans[k]);
        rc = ch_end ? scn_watch_jobs(r->watch, ch_end, run->n_plans) : ARB_ENOMEM;
        arb_free(ch_end);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    }
    if (run->w) {
        rc = arb_workload_start(run->w, run->s);
        if (rc < 0) return scn_workload_fail(run, rc);
    }
    return 0;
}

/* After a slice: the figures so far (with Arbor, the ranks done until
 * every one is, then the full figures). */
static void slice_figures(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    arb_sim_get_stats(run->s, &r->st);
    if (!run->arbor) {
        arb_workload_get_result(run->w, &r->wr);
    } else if (!arb_sim_arbor_done(run->s)) {
        /* the full figures (invariants) only when needed */
        uint32_t ranks_done, ranks;
        arb_sim_arbor_progress(run->s, &ranks_done, &ranks);
        r->wr.done = 0;
        r->wr.flows_done = ranks_done;
        r->wr.flows_planned = ranks;
    } else {
        arb_sim_arbor_result_get(run->s, &r->ar);
        r->wr.done = r->ar.done;
        r->wr.flows_done = r->ar.ranks_done;
        r->wr.flows_planned = r->ar.ranks;
        r->wr.finish = r->ar.finish;
    }
    if (r->has_bg) { /* the run goes on until the background is done too */
        arb_workload_get_result(run->w, &r->bg);
        if (!r->bg.done) r->wr.done = 0;
    }
}

/* The simulator up to `next`: 0, 1 when an Arbor engine gave up (the run
 * ends there, reporting what it got and what was lost), or an error. */
static int run_slice(struct scn_run *run, arb_time next)
{
    arb_scenario_result *r = run->r;
    int rc = run_to(&run->failat, run->t, run->route.ctx, run->s, run->w, next);
    if (rc == 0 && r->rec) scn_recovery_read(r->rec, run->s, next);
    if (rc == 0 && run->w) rc = arb_workload_error(run->w);
    if (rc == ARB_ERANGE && run->w && arb_workload_error(run->w) == rc) /* a flow too large */
        return scn_workload_fail(run, rc);
    if (rc == ARB_ETIMEDOUT && (run->arbor || r->iter_arbor)) {
        /* not bad input: what the run got is reported, with what was lost */
        scn_describe_failure(run->sc, &run->failat, run->t, run->s, r);
        arb_sim_get_stats(run->s, &r->st);
        return 1;
    }
    if (rc < 0)
        return arb_errf(run->err, run->errlen, rc, "simulation stopped at %" PRIu64 " ps: %s",
                        arb_sim_now(run->s), arb_strerror(rc));
    slice_figures(run);
    return 0;
}

/* No event left in the simulator, no workload timer and no fault event to
 * come: nothing will happen, though the workload is not done (a flow's
 * sender gave up, transport.retry_limit). */
static int nothing_left(const struct scn_run *run)
{
    return arb_sim_next_event(run->s) == ARB_TIME_NEVER &&
           scn_failat_next(&run->failat) == ARB_TIME_NEVER &&
           (!run->w || arb_workload_next_timer(run->w) == ARB_TIME_NEVER);
}

/* Run in slices of run.sample (10 us without samples) until the workload is
 * done and no packet is left in flight, checked at slice ends; idle
 * stretches are skipped with growing slices. */
static int run_slices(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    arb_time stop = scn_u64(sc, K_RUN_STOP), every = scn_u64(sc, K_RUN_SAMPLE);
    arb_time base = every ? every : 10 * ARB_PS_PER_US;
    arb_time slice = base, now = 0;
    for (;;) {
        arb_time next = now + slice;
        if (next < now) next = ARB_TIME_NEVER - 1;
        if (stop && next > stop) next = stop;
        uint64_t ev0 = r->st.events;
        int rc = run_slice(run, next);
        if (rc != 0) return rc < 0 ? rc : 0;
        int idle = r->st.events == ev0;
        if (every && (!idle || !r->wr.done)) {
            /* partitioned: every port's counters to part 0 first */
            rc = arb_sim_part_ports(run->s);
            if (rc < 0)
                return arb_errf(run->err, run->errlen, rc, "partition: %s", arb_strerror(rc));
            if (scn_sample(&run->sp, next) < 0)
                return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
        }
        now = next;
        if (run->progress)
            run->progress(run->ctx, now, stop, r->wr.flows_done, r->wr.flows_planned);
        if (stop && now >= stop) {
            r->stopped = !r->wr.done;
            return 0;
        }
        /* done and nothing on the wires: what is left are stale timers */
        if (r->wr.done && (idle || r->st.in_flight == 0)) return 0;
        if (idle) {
            if (slice > ARB_TIME_NEVER / 4) return 0; /* nothing will ever happen */
            if (nothing_left(run)) return 0;
            slice *= 2;
        } else {
            slice = base;
        }
    }
}

/* Release what the run built, in order: the capture's file closed (a write
 * that failed fails the run), the simulator, and what it used; run.qp_order's
 * figures are read on the way when the run went well. rc: the run's status
 * so far; returns it, or the first error met here. */
static int run_end(struct scn_run *run, int rc)
{
    if (run->pcap) { /* (partitioned: collective) */
        int prc = arb_sim_pcap_close(run->pcap);
        if (prc < 0 && rc == 0)
            rc = scn_key_fail(run->sc, K_RUN_PCAP, run->err, run->errlen, prc,
                              prc == ARB_ENOMEM ? "out of memory" : "a write failed");
    }
    arb_free(run->pcap_path);
    if (run->s && run->r && arb_sim_part_figures(run->s, &run->r->part) == 0) run->r->has_part = 1;
    arb_sim_free(run->s);
    scn_steer_free(run->steer);
    if (run->order && rc == 0) {
        run->r->has_order = 1;
        rc = scn_order_get(run->order, &run->r->order_ooo, &run->r->order_pkts);
        if (rc < 0) rc = arb_errf(run->err, run->errlen, rc, "run.qp_order: out of memory");
    }
    scn_order_free(run->order);
    scn_failat_free(&run->failat);
    for (uint32_t k = 0; k < run->n_plans; k++)
        arb_plan_free(run->plans[k]);
    arb_free(run->plans);
    arb_workload_free(run->w);
    if (run->route.destroy) run->route.destroy(run->route.ctx);
    arb_topo_free(run->t);
    arb_free(run->sp.cls_of);
    arb_free(run->sp.port_of);
    arb_free(run->sp.cur_port_util);
    arb_free(run->sp.cur_port_q);
    arb_free(run->sp.prev_tx);
    return rc;
}

int arb_scenario_run(const arb_scenario *sc, arb_scenario_progress_fn progress, void *ctx,
                     arb_scenario_result **out, char *err, size_t errlen)
{
    return arb_scenario_run_part(sc, NULL, progress, ctx, out, err, errlen);
}

int arb_scenario_run_part(const arb_scenario *sc, const arb_sim_part_ops *ops,
                          arb_scenario_progress_fn progress, void *ctx, arb_scenario_result **out,
                          char *err, size_t errlen)
{
    struct scn_run run;
    *out = NULL;
    int rc;
    arb_time stop_t = 0;
    uint32_t stop_event = 0;
    for (int again = 0;; again++) {
        memset(&run, 0, sizeof run);
        run.part = ops;
        run.sc = sc;
        run.progress = progress;
        run.ctx = ctx;
        run.err = err;
        run.errlen = errlen;
        run.stop = again;
        run.stop_t = stop_t;
        run.stop_event = stop_event;
        rc = run_result(&run);
        if (rc == 0) rc = run_fabric(&run);
        if (rc == 0) rc = scn_run_workload(&run);
        if (rc == 0) rc = scn_run_sim_config(&run);
        if (rc == 0) rc = run_routing(&run);
        if (rc == 0) rc = run_taps(&run);
        if (rc == 0) rc = run_simulator(&run);
        if (rc == 0) rc = run_start(&run);
        if (rc == 0) rc = run_pcap_file(&run);
        if (rc == 0) rc = run_slices(&run);
        /* A partitioned run that an Arbor engine's failure ended: the other
         * parts ran on to the end of that window. Once again, every part
         * stopping at the failure, as one process does (docs/partition.md);
         * every part decides alike (the failure is every part's). */
        if (rc != 0 || again || !ops || !(run.r->failed || run.r->warned) ||
            arb_sim_arbor_failure_point(run.s, &stop_t, &stop_event) < 0)
            break;
        run_end(&run, 0);
        arb_scenario_result_free(run.r);
    }
    if (rc == 0) rc = scn_run_figures(&run);
    rc = run_end(&run, rc);
    if (rc < 0) {
        arb_scenario_result_free(run.r);
        return rc;
    }
    *out = run.r;
    return 0;
}
