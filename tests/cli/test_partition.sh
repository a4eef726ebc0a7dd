#!/bin/sh
# arbor sim --partition K (docs/partition.md): one fabric split across K MPI
# ranks gives, byte for byte, the JSON of one process in the same order
# (run.order = local, the default: no key set), at K = 1, 2 and 4 (and
# scenarios/perm-kary.ini as shipped at K = 2), for a permutation over IRN with
# ECN, one over go-back-N with PFC pausing across the cut and DCQCN, and
# one with lossy, duplicating, reordering links and spraying, the flowlet
# schemes (flowlet AR, LetFlow with a small table, CONGA on lossy links;
# each switch's table its own), and Arbor's
# in-network aggregation with trees across the cut (the built-in AllReduce
# over star-32; an AllReduce over kary:4,3; two jobs sharing the switches'
# pools in values mode over leafspine:4,4,2 with lossy links; a Broadcast
# in values mode; one whose hosts lag; one whose engine gives up, ending
# the run, with the same failure and figures as one process), flows whose
# senders give up (transport.retry_limit) in different parts, and faults
# during the run (fail_at, restore_at, reboot_at: switches, links across the
# cut, host links, PFC queues flushed, Arbor slot pools lost), the taps
# run.watch and run.qp_order, merged over the parts, and the packet capture
# (run.pcap: rank 0's file the one process's, byte for byte); what it does
# not support is refused naming the key; a rank that dies ends the run with
# a line naming it, within a bound. Without MPI (or mpirun) these show as
# skipped, and a build without MPI refuses --partition.
. "$(dirname "$0")/lib.sh"
A="$ARBOR"

cat >"$TMP/irn.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
[transport]
kind = irn
[workload]
kind = perm
size = 300KB
seed = 3
[run]
sample = 5us
EOF
cat >"$TMP/pfc.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
[transport]
kind = gbn
dcqcn = on
[switch]
pfc = on
queue = 600KB
xoff = 80KB
xon = 40KB
[workload]
kind = perm
size = 400KB
seed = 5
EOF
cat >"$TMP/faults.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
loss = 0.002
dup = 0.002
reorder = 0.002
[transport]
kind = irn
[routing]
scheme = spray
[workload]
kind = perm
size = 200KB
seed = 9
EOF

# faults during the run: switches, a link across the cut and a host's link
# fail and come back (IRN); a leaf's queues towards two hosts flushed while
# PFC pauses the spines across the cut (go-back-N incast)
{ cat "$TMP/irn.ini"; printf '[fabric]\nfail_at = 10us switch:L3.0 down:L3.1:2; 12us link:h5-L1.1\nrestore_at = 30us switch:L3.0 down:L3.1:2 link:h5-L1.1\n'; } >"$TMP/irnfail.ini"
cat >"$TMP/pfcfail.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
fail_at = 10us link:h0-L1.0 link:h1-L1.0; 20us switch:L2.1
restore_at = 40us switch:L2.1; 100us link:h0-L1.0 link:h1-L1.0
[transport]
kind = gbn
[switch]
pfc = on
queue = 600KB
xoff = 40KB
xon = 20KB
[workload]
kind = incast
senders = 15
receiver = 0
size = 200KB
EOF

cat >"$TMP/arkary.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
[workload]
kind = arbor
size = 2MiB
[run]
sample = 5us
EOF
# a run stopped while PFC pauses are open: each part counts them to the run's end
{ cat "$TMP/pfcfail.ini"; printf '[run]\nstop = 17.3us\n'; } | grep -v "^fail_at\|^restore_at" >"$TMP/pfcstop.ini"

# taps across the parts: run.watch on a link across the cut and a host of
# part 1, and run.qp_order, over the faults case (sprayed, reordered); a
# watch of the kary Arbor AllReduce on two links across the cut
{ cat "$TMP/faults.ini"; printf '[run]\nsample = 2us\nwatch = link:L2.1-L3.1 host:h40\nqp_order = on\n'; } >"$TMP/taps.ini"
{ cat "$TMP/arkary.ini"; printf 'watch = link:L2.1-L3.1 link:L2.8-L3.0\n'; } >"$TMP/arwatch.ini"
cat >"$TMP/arjobs.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
loss = 0.002
[workload]
kind = arbor
size = 1MiB
[arbor]
mode = values
jobs = 2
EOF
cat >"$TMP/arbcast.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
loss = 0.001
[workload]
kind = arbor
size = 512KiB
[arbor]
collective = broadcast
mode = values
EOF
cat >"$TMP/arlag.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
loss = 0.002
[workload]
kind = arbor
size = 512KiB
[arbor]
mode = values
skew = 2us
skew_mode = lag
EOF
# Arbor under faults: a leaf's slot pools lost, a core (whose part is not
# its hosts') rebooted and off the fabric for 20 us, a link across the cut
# failing and coming back; values checked
cat >"$TMP/arfaults.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
reboot_at = 100us switch:L1.0; 150us switch:L3.0 down=20us
fail_at = 200us down:L3.1:2
restore_at = 250us down:L3.1:2
[workload]
kind = arbor
size = 2MiB
[arbor]
mode = values
EOF
cat >"$TMP/arfail.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
loss = 0.05
[workload]
kind = arbor
size = 1MiB
[arbor]
attempts = 1
repair_tries = 1
EOF
# workloads whose flows start on others' completions, each start a
# lookahead or more after the completion (workload.start_delay): a ring
# AllReduce pipelined over two QPs round robin on lossy links, a host
# collective's tree, a pattern of 15 phases
cat >"$TMP/ring.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
loss = 0.001
[transport]
kind = irn
[workload]
kind = ring_allreduce
size = 2MiB
chunk = 8KiB
qps = 2
qp_mode = rr
start_delay = 1us
EOF
cat >"$TMP/hcoll.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
[workload]
kind = host_collective
size = 1MiB
start_delay = 500ns
[host]
algorithm = tree
EOF
cat >"$TMP/phases.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
[workload]
kind = pattern
traffic = shift:all
size = 20KB
start_delay = 700ns
EOF
# training iterations replayed from the shipped traces (their compute
# nodes wake the workload between runs): a pipeline's sends and receives,
# a data-parallel step's AllReduces over a two-tier fabric
TRACES="$(cd "$(dirname "$0")/../../scenarios/traces" && pwd)"
printf '[fabric]\ntopology = star:4\n[workload]\nkind = iteration\nfile = %s/pp-step.txt\nstart_delay = 1us\n' \
    "$TRACES" >"$TMP/iterpp.ini"
printf '[fabric]\ntopology = leafspine:2,4,2\n[workload]\nkind = iteration\nfile = %s/dp-step.txt\nstart_delay = 1us\n' \
    "$TRACES" >"$TMP/iterdp.ini"
# ... and over Arbor (workload.backend = arbor: each AllReduce a job added
# as its first member calls it, each member's node done as the simulator
# reports its rank done): the data-parallel step on lossy links, checking
# every value; an AllReduce of 288 ranks, cut into groups (ReduceScatter,
# AllReduce across, AllGather), its pieces pipelined (header-only: values
# are checked in one process by test_workloads.sh)
printf '[fabric]\ntopology = kary:4,2\nloss = 0.002\ndup = 0.001\nreorder = 0.001\n[workload]\nkind = iteration\nfile = %s/dp-step.txt\nbackend = arbor\nstart_delay = 1us\n[arbor]\nmode = values\n' \
    "$TRACES" >"$TMP/iterarb.ini"
printf 'arbor-trace 1\nranks 288\n* 1 comp 2us\n* 2 coll allreduce 294912 deps=1\n* 3 comp 2us deps=2\n' \
    >"$TMP/hier.txt"
printf '[fabric]\ntopology = leafspine:18,16,2\n[workload]\nkind = iteration\nfile = hier.txt\nbackend = arbor\nstart_delay = 1us\n' \
    >"$TMP/iterhier.ini"
# an engine of such an iteration gives up: a host's only link fails for good
{ cat "$TMP/iterarb.ini"; printf '[fabric]\nfail_at = 400us link:h0-L1.0\n[arbor]\nattempts = 1\nrepair_tries = 1\n'; } >"$TMP/iterfail.ini"

# the flowlet schemes, each switch with a table of its own: flowlet AR over
# a three-level fabric; LetFlow over an all-to-all with 8 entries a switch
# (the flows of a leaf share them); CONGA on lossy, duplicating, reordering
# links. The tables are small (64 and 8 entries) so that one table for all the
# switches, as there was, would share slots across the parts: each of the
# first three then differed from one process at K = 2.
{ cat "$TMP/irn.ini"; printf '[routing]\nscheme = flowlet:gap=1us,table=64\n'; } >"$TMP/flowlet.ini"
cat >"$TMP/lftable.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,4
delay = 500ns
[routing]
scheme = letflow:gap=1us,table=8
[transport]
kind = irn
[workload]
kind = all2all
size = 16KB
EOF
sed 's/^scheme = spray$/scheme = conga:gap=1us,table=64/' "$TMP/faults.ini" >"$TMP/conga.ini"

# the figures, without the host's own (wall time, memory)
figures() { sed 's/,"host":{"wall_s":[^}]*}//' "$1"; }
# seq_has CASE NAME PATTERN: the one-process run of CASE (its JSON in
# CASE.seq; arstar: the built-in scenario) has PATTERN
seq_has() {
    file="$TMP/$1.ini"
    [ "$1" = arstar ] && file=""
    "$A" sim $file --json -q >"$TMP/$1.seq" 2>"$TMP/err"
    has "$2" "$(cat "$TMP/$1.seq")" "$3"
}
has() { if printf '%s' "$2" | grep -Eq -- "$3"; then pass "$1"; else fail "$1" "no $3 in: $(printf '%s' "$2" | head -c 300)"; fi; }

built_mpi=0
"$A" sweep --help | grep -q "built with MPI" && built_mpi=1
if [ $built_mpi -eq 0 ]; then
    expect_err "without MPI: --partition is refused" 2 \
        "[-]-partition asks for MPI, but this arbor was built without MPI" \
        "$A" sim "$TMP/irn.ini" --partition 2
    skip "mpirun -np 1, 2, 4 --partition" "this arbor was built without MPI"
    finish
    exit $?
fi
if ! command -v mpirun >/dev/null 2>&1; then
    skip "mpirun -np 1, 2, 4 --partition" "mpirun is not installed (Debian: openmpi-bin)"
    finish
    exit $?
fi
# root may run Open MPI only when told so; the sanitizer build's ranks run
# without the leak check (Open MPI's plugins leave allocations at exit, as
# test_sweep.sh explains).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MPIRUN="mpirun --oversubscribe"

# the checks have something to check: PFC pauses, lossy links, ECN marks
seq_has pfc "the PFC case pauses" '"pfc":\{"pauses":[1-9]'
seq_has faults "the faults case loses, duplicates and reorders" \
    '"duplicated":[1-9][0-9]*,"reordered":[1-9]'
seq_has irn "the IRN case marks" '"ecn_marks":[1-9]'

# Arbor: every rank done, the values right, losses recovered from
seq_has arstar "the built-in Arbor AllReduce is done" '"ranks":32,"ranks_done":32,'
seq_has arkary "the kary Arbor AllReduce aggregates above the leaves" \
    '"ranks_done":64,.*"tier_bytes":\[\{[^]]*\},\{"up":[1-9][0-9]*,"down":[1-9]'
seq_has arjobs "the two Arbor jobs are right and recover from losses" \
    '"correct":true,.*"checked":[1-9][0-9]*,"wrong":0,.*"recovery":\{"retries":[1-9].*"jobs":\['
seq_has arbcast "the Arbor Broadcast is right" '"correct":true,'
seq_has arlag "the lagging Arbor AllReduce is right" '"correct":true,'

# the fault cases: what failed dropped and lost packets, PFC paused, the
# reboots lost slots and the hosts reacted, the values are right
seq_has irnfail "the IRN fault case drops, resends and finishes" \
    '"completed":true,.*"drops":[1-9][0-9]*,.*"retx_bytes":[1-9][0-9]*,.*"faults":\{.*"kind":"fail","items":"switch:L3.0,down:L3.1:2","at_us":10,"applied":true'
seq_has pfcfail "the PFC fault case drops and pauses" \
    '"drops":[1-9][0-9]*,.*"pfc":\{"pauses":[1-9]'
seq_has arfaults "the Arbor fault case is right, loses slots, and its hosts react" \
    '"correct":true,.*"kind":"reboot","items":"switch:L3.0","at_us":150,"down_us":20,"slots_lost":[1-9][0-9]*,"applied":true,"detect_us":[0-9]'

seq_has taps "the taps case counts packets out of order" '"qp_order":\{"ooo_pkts":[1-9]'
has "the taps case watches a port of part 1 and one across the cut" "$(cat "$TMP/taps.seq")" \
    '"port":"h40->L1.10","rate_gbps":100.000,"bytes":[1-9].*"party":"flows","bytes":[1-9].*"port":"L2.1->L3.1","rate_gbps":100.000,"bytes":[1-9].*"party":"flows","bytes":[1-9]'
seq_has arwatch "the Arbor watch sees the job on links across the cut" \
    '"port":"L3.0->L2.8","rate_gbps":100.000,"bytes":[1-9][0-9]*,.*"party":"arbor","bytes":[1-9]'

seq_has ring "the ring AllReduce is done, resending what was lost" \
    '"completed":true,.*"collective":\{"kind":"ring_allreduce","ranks":64,.*"drops":[1-9]'
seq_has hcoll "the host collective is done" \
    '"completed":true,.*"collective":\{"kind":"host_collective","collective":"allreduce","algorithm":"tree","ranks":16,'
seq_has pfcstop "the stopped PFC incast has pauses open at its end" \
    '"completed":false,"stopped":true,.*"pfc":\{"pauses":[1-9]'
seq_has iterpp "the pipeline iteration is done" \
    '"iteration":\{"ranks":4,"nodes":[1-9][0-9]*,"collectives":0,"p2p":[1-9][0-9]*,"iter_time_us":[1-9]'
seq_has iterdp "the data-parallel iteration is done" \
    '"iteration":\{"ranks":8,"nodes":[1-9][0-9]*,"collectives":[1-9][0-9]*,.*"iter_time_us":[1-9]'
seq_has iterarb "the data-parallel iteration over Arbor is right, resending what was lost" \
    '"completed":true,.*"iteration":\{"ranks":8,"nodes":[1-9][0-9]*,"collectives":4,.*"correct":true,.*"drops":[1-9]'
seq_has iterhier "the AllReduce of 288 ranks runs in grouped jobs" \
    '"completed":true,.*"iteration":\{"ranks":288,"nodes":864,"collectives":1,.*"jobs":[1-9][0-9][0-9]*,'
seq_has phases "the pattern runs its 15 phases" \
    '"completed":true,.*"phases":15,.*"flows":\{"count":240,"done":240'

# the flowlet cases: the schemes run, the small table shares entries (its
# figures differ from a table of the default size), CONGA's links lose
seq_has flowlet "the flowlet AR case routes by flowlets" \
    '"routing":"flowlet:gap=1us,table=64,bias=1,thresh=0",.*"completed":true'
seq_has lftable "the LetFlow case has 8 entries a switch" \
    '"routing":"letflow:gap=1us,table=8",.*"completed":true'
"$A" sim "$TMP/lftable.ini" --json -q -s routing.scheme=letflow:gap=1us |
    sed 's/,"host":{[^}]*}//; s/"routing":"[^"]*"//' >"$TMP/a"
sed 's/,"host":{[^}]*}//; s/"routing":"[^"]*"//' "$TMP/lftable.seq" >"$TMP/b"
if [ -s "$TMP/a" ] && ! cmp -s "$TMP/a" "$TMP/b"; then
    pass "8 entries a switch decide otherwise than 4096: flows share entries"
else
    fail "8 entries a switch decide otherwise than 4096" "the same figures"
fi
seq_has conga "the CONGA case loses, duplicates and reorders" \
    '"routing":"conga:gap=1us,table=64,.*"duplicated":[1-9][0-9]*,"reordered":[1-9]'

for case in irn pfc faults arstar arkary arjobs arbcast arlag irnfail pfcfail arfaults taps arwatch \
    ring hcoll phases iterpp iterdp iterarb iterhier pfcstop flowlet lftable conga; do
    file="$TMP/$case.ini"
    [ "$case" = arstar ] && file="" # the built-in scenario
    for k in 1 2 4; do
        timeout 120 $MPIRUN -np $k "$A" sim $file --json --partition $k \
            >"$TMP/$case.$k" 2>"$TMP/$case.$k.err"
        rc=$?
        want=0
        [ "$case" = pfcstop ] && want=1 # stopped before it could finish
        if [ $rc -eq $want ] && figures "$TMP/$case.seq" >"$TMP/a" && figures "$TMP/$case.$k" >"$TMP/b" &&
            cmp -s "$TMP/a" "$TMP/b" && [ -s "$TMP/a" ]; then
            pass "$case, $k ranks: byte-identical to one process"
        else
            fail "$case, $k ranks" "status $rc" "$(diff "$TMP/a" "$TMP/b" | head -c 600)" \
                "$(head -5 "$TMP/$case.$k.err")"
        fi
    done
done
# an engine that gives up ends the run (status 1): the same failure and the
# same figures (the parts run again, every one stopping at the failure); in
# an Arbor job, and in an iteration's
"$A" sim "$TMP/arfail.ini" --json -q >"$TMP/arfail.seq" 2>"$TMP/arfail.seq.err"
rc=$?
has "the failing Arbor run fails" "status $rc $(cat "$TMP/arfail.seq.err")" \
    'status 1 arbor sim: failed at [0-9.]* us: channel [0-9]* \(responder h[0-9]*\): offset'
"$A" sim "$TMP/iterfail.ini" --json -q >"$TMP/iterfail.seq" 2>"$TMP/iterfail.seq.err"
rc=$?
has "the failing iteration over Arbor fails" "status $rc $(cat "$TMP/iterfail.seq.err")" \
    'status 1 arbor sim: failed at [0-9.]* us: job [0-9]*, channel [0-9]* \(responder h[0-9]*\): .*h0; the fabric: link:h0-L1.0 failed at 400us'
for case in arfail iterfail; do
    for k in 1 2 4; do
        timeout 120 $MPIRUN -np $k "$A" sim "$TMP/$case.ini" --json -q --partition $k \
            >"$TMP/$case.$k" 2>"$TMP/$case.$k.err"
        rc=$?
        if [ $rc -eq 1 ] && figures "$TMP/$case.seq" >"$TMP/a" && figures "$TMP/$case.$k" >"$TMP/b" &&
            cmp -s "$TMP/a" "$TMP/b" && [ -s "$TMP/a" ] &&
            [ "$(grep 'failed at' "$TMP/$case.seq.err")" = "$(grep 'failed at' "$TMP/$case.$k.err")" ]; then
            pass "$case, $k ranks: the same failure, byte-identical"
        else
            fail "$case, $k ranks" "status $rc" "$(diff "$TMP/a" "$TMP/b" | head -c 600)" \
                "$(head -5 "$TMP/$case.$k.err")"
        fi
    done
done

# a flow's sender that gives up (transport.retry_limit) fails the run: h40's
# link fails for good during a permutation (h40 in part 1 of 2, part 2 of
# 4), so the flow from h40 and the one to it give up, their senders in
# different parts; every part learns of both, and rank 0 reports the same
# failure, the same JSON and the same per-flow times (the flows CSV) as one
# process
{ cat "$TMP/irn.ini"; printf '[fabric]\nfail_at = 10us link:h40-L1.10\n[transport]\nrto = 100us\nretry_limit = 3\n[run]\nstop = 0\n'; } >"$TMP/flowfail.ini"
"$A" sim "$TMP/flowfail.ini" --json -q --csv "$TMP/flowfail.seq" \
    >"$TMP/flowfail.seq" 2>"$TMP/flowfail.seq.err"
rc=$?
has "the run whose flows give up fails" "status $rc $(cat "$TMP/flowfail.seq.err")" \
    'status 1 arbor sim: failed at [0-9.]* us: flow [0-9]* \(h[0-9]* -> h[0-9]*, QP [0-9]*\) gave up at [0-9.]* us: 4 retransmission timeouts in a row without progress, past transport.retry_limit = 3 \(2 flows gave up\); the fabric: link:h40-L1.10 failed at 10us'
for k in 1 2 4; do
    timeout 120 $MPIRUN -np $k "$A" sim "$TMP/flowfail.ini" --json -q --partition $k \
        --csv "$TMP/flowfail.p$k" >"$TMP/flowfail.$k" 2>"$TMP/flowfail.$k.err"
    rc=$?
    if [ $rc -eq 1 ] && figures "$TMP/flowfail.seq" >"$TMP/a" && figures "$TMP/flowfail.$k" >"$TMP/b" &&
        cmp -s "$TMP/a" "$TMP/b" && [ -s "$TMP/a" ] &&
        cmp -s "$TMP/flowfail.seq-flows.csv" "$TMP/flowfail.p$k-flows.csv" &&
        [ "$(grep 'failed at' "$TMP/flowfail.seq.err")" = "$(grep 'failed at' "$TMP/flowfail.$k.err")" ]; then
        pass "flowfail, $k ranks: the same failure, byte-identical, the same flows"
    else
        fail "flowfail, $k ranks" "status $rc" "$(diff "$TMP/a" "$TMP/b" | head -c 600)" \
            "$(diff "$TMP/flowfail.seq-flows.csv" "$TMP/flowfail.p$k-flows.csv" | head -c 400)" \
            "$(head -5 "$TMP/flowfail.$k.err")"
    fi
done

# the packet capture (run.pcap): one file, written by rank 0, byte for byte
# the one process writes, the JSON unchanged: a lossy, duplicating,
# reordering fabric whose hosts resend (every port; and three links with a
# snap length), PFC pausing across the cut with DCQCN's CNPs, an Arbor
# AllReduce with trees across the cut, faults during the run (hosts' NICs
# sending again between runs), and an Arbor run that fails (the
# parts run again, the file written again)
# cap_case NAME FILE PORTS [ARGS]: CASE.one is one process's capture
cap_case() {
    name=$1 file=$2 ports=$3
    shift 3
    "$A" sim "$file" --json -q --pcap "$ports" "$TMP/cap.pcap" "$@" \
        >"$TMP/$name.cseq" 2>"$TMP/err"
    srcc=$?
    mv "$TMP/cap.pcap" "$TMP/$name.one"
    for k in 1 2 4; do
        rm -f "$TMP/cap.pcap"
        timeout 120 $MPIRUN -np $k "$A" sim "$file" --json -q --partition $k \
            --pcap "$ports" "$TMP/cap.pcap" "$@" >"$TMP/$name.c$k" 2>"$TMP/$name.c$k.err"
        rc=$?
        if [ $rc -eq $srcc ] && [ -s "$TMP/$name.one" ] && cmp -s "$TMP/$name.one" "$TMP/cap.pcap" &&
            figures "$TMP/$name.cseq" >"$TMP/a" && figures "$TMP/$name.c$k" >"$TMP/b" &&
            cmp -s "$TMP/a" "$TMP/b"; then
            pass "capture $name, $k ranks: the one process's file, byte for byte, and its JSON"
        else
            fail "capture $name, $k ranks" "status $rc (one process: $srcc)" \
                "$(cmp "$TMP/$name.one" "$TMP/cap.pcap" 2>&1)" "$(diff "$TMP/a" "$TMP/b" | head -c 600)" \
                "$(head -5 "$TMP/$name.c$k.err")"
        fi
    done
}
cap_case lossy "$TMP/faults.ini" all
cap_case ports "$TMP/faults.ini" host:h3,link:L2.1-L3.1,switch:L1.5 --snaplen 60
cap_case pfc "$TMP/pfc.ini" all
cap_case arbor "$TMP/arkary.ini" all
# (two hosts of two parts whose links come back at once: their NICs send
# again between runs, in the order of their ports)
{ cat "$TMP/irn.ini"; printf '[fabric]\nfail_at = 10us switch:L3.0; 12us link:h5-L1.1 link:h40-L1.10\nrestore_at = 30us switch:L3.0 link:h5-L1.1 link:h40-L1.10\n'; } >"$TMP/capfail.ini"
cap_case faults "$TMP/capfail.ini" host:h5,host:h40,link:L2.1-L3.1
cap_case arfail "$TMP/arfail.ini" all
has "the lossy capture's run drops, duplicates and resends" "$(cat "$TMP/lossy.cseq")" \
    '"duplicated":[1-9][0-9]*,.*"retx_bytes":[1-9]'
if [ "$(wc -c <"$TMP/ports.one")" -lt "$(wc -c <"$TMP/lossy.one")" ]; then
    pass "the filtered, cut capture is the smaller"
else
    fail "the filtered, cut capture is the smaller" "$(wc -c "$TMP/ports.one" "$TMP/lossy.one")"
fi
if command -v tshark >/dev/null 2>&1; then
    n=$(tshark -r "$TMP/pfc.one" -Y 'infiniband.bth.opcode == 0x81' 2>/dev/null | wc -l | tr -d ' ')
    has "the PFC capture has DCQCN's CNPs ($n)" "$n" '^[1-9]'
    n=$(tshark -r "$TMP/ports.one" -Y 'frame.cap_len < frame.len' 2>/dev/null | wc -l | tr -d ' ')
    has "the snap length cuts frames ($n)" "$n" '^[1-9]'
else
    skip "the PFC capture has CNPs" "tshark is not installed"
fi
# a file that cannot be made, a write that fails: every rank ends, with the
# one process's line and status (naming --pcap, as the user wrote it)
for what in "/nonexistent-dir/x.pcap:/nonexistent-dir/x.pcap: cannot create the file" \
    "/dev/full:a write failed"; do
    path=${what%%:*} msg=${what#*:}
    "$A" sim "$TMP/irn.ini" -q --pcap all "$path" >/dev/null 2>"$TMP/err"
    src=$?
    one=$(head -1 "$TMP/err")
    timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/irn.ini" -q --partition 2 --pcap all "$path" \
        >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $src -eq 2 ] && [ $rc -eq $src ] && [ "$one" = "arbor sim: --pcap (run.pcap): $msg" ] &&
        [ "$(head -1 "$TMP/err")" = "$one" ]; then
        pass "capture to $path, 2 ranks: '$msg', status $rc, as one process"
    else
        fail "capture to $path, 2 ranks" "status $rc (one process $src: $one)" "$(head -3 "$TMP/err")"
    fi
done
# what a partitioned run refuses leaves the capture's file as it was
echo precious >"$TMP/x.pcap"
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/ring.ini" -q --partition 2 -s workload.start_delay=999ns \
    --pcap all "$TMP/x.pcap" >"$TMP/out" 2>"$TMP/err"
rc=$?
has "a refused run with a capture (status $rc)" "status $rc $(cat "$TMP/err")" \
    'status 2 arbor sim: -s workload.start_delay: a partitioned run \(--partition\) of ring_allreduce needs at least the lookahead'
has "the refused run's capture file is left as it was" "$(cat "$TMP/x.pcap")" '^precious$'

# every rank says what it did: the cut, the windows, the time waiting
if grep -q "partition: rank 1: .* cut links out, .* windows, .* synchronising" "$TMP/irn.2.err" &&
    grep -q "partition: 2 ranks, by subtree, lookahead 1.000 us" "$TMP/irn.2.err"; then
    pass "each rank's figures on stderr"
else
    fail "each rank's figures on stderr" "$(cat "$TMP/irn.2.err")"
fi
# the Arbor trees span the parts: Arbor packets cross the cut both ways
if grep -Eq "partition: rank 0: .* [1-9][0-9]* packets out, [1-9][0-9]* in" "$TMP/arkary.2.err" &&
    grep -Eq "partition: rank 1: .* [1-9][0-9]* packets out, [1-9][0-9]* in" "$TMP/arkary.2.err"; then
    pass "Arbor packets cross the cut"
else
    fail "Arbor packets cross the cut" "$(cat "$TMP/arkary.2.err")"
fi
# the global order differs from the local one, the default: the two are not the same run
if figures "$TMP/irn.seq" >"$TMP/a" &&
    "$A" sim "$TMP/irn.ini" --json -q -s run.order=global | sed 's/,"host":{[^}]*}//' >"$TMP/b" &&
    ! cmp -s "$TMP/a" "$TMP/b"; then
    pass "run.order=global is a run of its own"
else
    fail "run.order=global is a run of its own" "the same JSON as the local order"
fi
# a shipped scenario as a user runs it, with no key set: two ranks give the
# figures of one process in the default order
SCN="$(cd "$(dirname "$0")/../../scenarios" && pwd)"
"$A" sim "$SCN/perm-kary.ini" --json -q >"$TMP/pk.seq" 2>"$TMP/pk.seq.err"
timeout 120 $MPIRUN -np 2 "$A" sim "$SCN/perm-kary.ini" --partition 2 --json -q >"$TMP/pk.2" 2>"$TMP/pk.2.err"
rc=$?
if [ $rc -eq 0 ] && figures "$TMP/pk.seq" >"$TMP/a" && figures "$TMP/pk.2" >"$TMP/b" && [ -s "$TMP/a" ] &&
    cmp -s "$TMP/a" "$TMP/b"; then
    pass "scenarios/perm-kary.ini, 2 ranks: the one-process run's JSON with no key set"
else
    fail "scenarios/perm-kary.ini, 2 ranks" "status $rc" "$(diff "$TMP/a" "$TMP/b" | head -c 600)" \
        "$(head -5 "$TMP/pk.2.err")"
fi

# refused, naming the key (a singleton: one rank, no launcher)
expect_err "the global order is refused" 2 \
    "run.order: a partitioned run \(--partition\) needs local" \
    "$A" sim "$TMP/irn.ini" --partition 1 -q -s run.order=global
# a QP's order is counted in one part: a host reached from two parts is refused
timeout 60 $MPIRUN -np 4 "$A" sim "$TMP/taps.ini" -q --partition 4 \
    -s "fabric.topology=pgft:2;2,2;2,2;1,1" -s run.watch= >"$TMP/out" 2>"$TMP/err"
rc=$?
has "qp_order over a host of two parts is refused (status $rc)" "status $rc $(cat "$TMP/err")" \
    'status 2 arbor sim: [^ ]*: run.qp_order: not supported by this partitioned run \(--partition\): host h0 is reached from L1.0 \(part 0\) and L1.1 \(part 1\)'
# an iteration whose compute node is shorter than the lookahead is refused
printf 'arbor-trace 1\nranks 2\n0 1 comp 999ns\n0 2 send 8192 to=1 tag=0 deps=1\n1 3 recv 8192 from=0 tag=0\n' \
    >"$TMP/short.txt"
printf '[fabric]\ntopology = leafspine:2,2,1\n[workload]\nkind = iteration\nfile = short.txt\nstart_delay = 1us\n' \
    >"$TMP/short.ini"
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/short.ini" -q --partition 2 >"$TMP/out" 2>"$TMP/err"
rc=$?
has "a compute node below the lookahead is refused (status $rc)" "status $rc $(cat "$TMP/err")" \
    'status 2 arbor sim: [^ ]*short.ini:5: workload.file: not supported by this partitioned run \(--partition\): a compute node of 0.999000 us, shorter than the lookahead, 1.000000 us'
# a completion's flow starting sooner than the lookahead after it is refused
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/ring.ini" -q --partition 2 -s workload.start_delay=999ns \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
has "a start_delay below the lookahead is refused (status $rc)" "status $rc $(cat "$TMP/err")" \
    'status 2 arbor sim: -s workload.start_delay: a partitioned run \(--partition\) of ring_allreduce needs at least the lookahead, 1.000000 us'
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/iterarb.ini" -q --partition 2 -s workload.start_delay=999ns \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
has "an iteration over Arbor entering sooner than the lookahead is refused (status $rc)" \
    "status $rc $(cat "$TMP/err")" \
    'status 2 arbor sim: -s workload.start_delay: a partitioned run \(--partition\) of iteration needs at least the lookahead, 1.000000 us'
expect_err "ranks and --partition must agree" 2 "[-]-partition 2 needs 2 MPI ranks \(mpirun -np 2\), found 1" \
    "$A" sim "$TMP/irn.ini" --partition 2 -q
expect_err "--partition 0" 2 "[-]-partition: '0' is not a number of ranks" \
    "$A" sim "$TMP/irn.ini" --partition 0
# a bad file or option under two ranks: one line, from rank 0
for args in "$TMP/nofile.ini --partition 2" "$TMP/irn.ini --partition x" "$TMP/irn.ini --partition 2 -s run.stpo=1"; do
    timeout 60 $MPIRUN -np 2 "$A" sim $args -q >"$TMP/out" 2>"$TMP/err"
    rc=$?
    n=$(grep -c '^arbor sim: ' "$TMP/err")
    if [ $rc -ne 0 ] && [ "$n" -eq 1 ]; then
        pass "2 ranks, sim ${args#"$TMP/"}: refused in one line"
    else
        fail "2 ranks, sim ${args#"$TMP/"}: refused in one line" "status $rc, $n lines" "$(cat "$TMP/err")"
    fi
done
# a link of no delay across the cut: refused, naming the link as the user does
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/irn.ini" --partition 2 -s fabric.delay=0 -q >"$TMP/out" 2>"$TMP/err"
rc=$?
has "a cut link of no delay is refused, named (status $rc)" "status $rc $(head -1 "$TMP/err")" \
    'status 2 arbor sim: partition: the cut link link:L[0-9.]+-L[0-9.]+ has no delay \(a part must not reach another at once: fabric.delay, or the link.s own\)'
# two ranks without --partition would each run the whole of it and print it:
# refused, in one line from rank 0, nothing on stdout; one rank runs it
timeout 60 $MPIRUN -np 2 "$A" sim "$TMP/irn.ini" --json -q >"$TMP/out" 2>"$TMP/err"
rc=$?
n=$(grep -c '^arbor sim: started as one of 2 MPI ranks without --partition: each would run the whole scenario; add --partition 2' "$TMP/err")
if [ $rc -ne 0 ] && [ "$n" -eq 1 ] && [ ! -s "$TMP/out" ]; then
    pass "mpirun -np 2 without --partition is refused, once"
else
    fail "mpirun -np 2 without --partition is refused, once" "status $rc, $n lines" "$(cat "$TMP/err")"
fi
"$A" sim "$TMP/irn.ini" --json -q >"$TMP/irn1.json"
timeout 60 $MPIRUN -np 1 "$A" sim "$TMP/irn.ini" --json -q >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(figures "$TMP/irn1.json")" = "$(figures "$TMP/out")" ]; then
    pass "mpirun -np 1 without --partition runs it, as without mpirun"
else
    fail "mpirun -np 1 without --partition runs it, as without mpirun" "status $rc" "$(cat "$TMP/err")"
fi

# a rank that leaves mid-run: mpirun ends the job, non-zero, naming it, well
# within the bound (the run takes about half a second)
start=$(date +%s)
ARB_PART_TEST_EXIT=1:20 timeout 60 $MPIRUN -x ARB_PART_TEST_EXIT -np 2 "$A" sim "$TMP/irn.ini" \
    --json --partition 2 >/dev/null 2>"$TMP/die.err"
rc=$?
took=$(($(date +%s) - start))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 60 ] &&
    grep -q "arbor sim: rank 1: leaving at window 20" "$TMP/die.err"; then
    pass "a rank that dies ends the run (status $rc, ${took}s)"
else
    fail "a rank that dies ends the run" "status $rc after ${took}s" "$(head -20 "$TMP/die.err")"
fi

finish
