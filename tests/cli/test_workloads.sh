# Host collectives and iteration traces through `arbor sim`: the shipped
# scenarios against their derived figures, text and Chakra giving the same
# iteration, the trace generator reproducing the shipped files, and bad
# traces and keys refused with one line and status 2.
. "$(dirname "$0")/lib.sh"

S=scenarios
json() { "$ARBOR" sim --json --quiet "$@" 2>&1; }
# field FILE KEY...: a number from the JSON (python3 absent: skip via "")
field() {
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: j=j[k]
print(j)' "$@" 2>/dev/null
}
# within NAME VALUE LO HI: LO <= VALUE <= HI (decimal)
within() {
    if [ -n "$2" ] && awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
        pass "$1"
    else
        fail "$1" "got '$2', want $3..$4"
    fi
}

# Every check here reads JSON fields with Python (scripts/deps.sh installs it).
command -v python3 >/dev/null 2>&1 ||
    skip_all "python3 is not installed (it reads the JSON fields and runs the trace generators)"

# iteration-dp: >= 1367.9 us (derived in the file), within 5%
json "$S/iteration-dp.ini" >"$TMP/dp.json"
within "dp step: iteration time" "$(field "$TMP/dp.json" iteration iter_time_us)" 1367.9 1436.3
within "dp step: exposed >= iteration - compute" \
    "$(field "$TMP/dp.json" iteration exposed_max_us)" 1047.9 1116.3
within "dp step: compute 320 us" "$(field "$TMP/dp.json" iteration compute_max_us)" 320 320

# pipeline: (M + S - 1)(F + B) + 2(S - 1)X = 982.3 us, X from the wire
json "$S/iteration-pp.ini" >"$TMP/pp.json"
within "pp step: GPipe formula" "$(field "$TMP/pp.json" iteration iter_time_us)" 982.3 987.3
within "pp step: 24 transfers" "$(field "$TMP/pp.json" iteration p2p)" 24 24

json "$S/iteration-moe.ini" >"$TMP/moe.json"
within "moe step: >= 4 AllToAlls + compute" "$(field "$TMP/moe.json" iteration iter_time_us)" \
    2536.0 2662.8

json "$S/hc-allreduce-tree.ini" >"$TMP/tree.json"
within "tree allreduce: >= 16 MiB per host link" "$(field "$TMP/tree.json" collective cct_us)" \
    1371.8 1800
within "tree allreduce: busbw factor 2(n-1)/n" \
    "$(field "$TMP/tree.json" collective busbw_factor)" 1.875 1.875

# Chakra: the same DAG, the same figures (skipped without protobuf-c)
if json "$S/iteration-dp-chakra.ini" >"$TMP/dpc.json" && [ -s "$TMP/dpc.json" ] &&
    field "$TMP/dpc.json" iteration >/dev/null; then
    for k in iter_time_us exposed_max_us exposed_mean_us compute_max_us; do
        a=$(field "$TMP/dp.json" iteration $k) b=$(field "$TMP/dpc.json" iteration $k)
        if [ "$a" = "$b" ]; then pass "chakra = text: $k"; else fail "chakra = text: $k" "$a != $b"; fi
    done
elif grep -q "built without it" "$TMP/dpc.json"; then
    skip "chakra = text" "arbor is built without protobuf-c (Debian: libprotobuf-c-dev, protobuf-c-compiler)"
else
    fail "chakra scenario runs" "$(cat "$TMP/dpc.json")"
fi

# the generator reproduces the shipped traces byte for byte
if python3 scripts/gen_traces.py "$TMP/gen" && diff -r "$TMP/gen" "$S/traces" >/dev/null; then
    pass "gen_traces.py reproduces scenarios/traces"
else
    fail "gen_traces.py reproduces scenarios/traces" "$(diff -r "$TMP/gen" "$S/traces" | head -5)"
fi
# The speed benchmark's matrix is the generator's output, a derangement of
# 1024 hosts: every host sends once and receives once, never to itself.
if python3 scripts/gen_perm.py >"$TMP/perm.cm" && cmp -s "$TMP/perm.cm" bench/data/perm1024.cm; then
    pass "gen_perm.py reproduces bench/data/perm1024.cm"
else
    fail "gen_perm.py reproduces bench/data/perm1024.cm"
fi
if awk -F'->| ' 'NR > 2 { if ($1 == $2) bad = 1; s[$1]++; d[$2]++; n++ }
    END { for (k in s) if (s[k] != 1) bad = 1; for (k in d) if (d[k] != 1) bad = 1
          exit bad || n != 1024 || length(s) != 1024 || length(d) != 1024 }' bench/data/perm1024.cm
then
    pass "perm1024.cm is a derangement of 1024 hosts"
else
    fail "perm1024.cm is a derangement of 1024 hosts"
fi

# every host collective and algorithm completes on a small fabric
for ca in allreduce:ring allreduce:tree allreduce:rd reduce:binomial reduce:chain \
    reducescatter:ring broadcast:chain broadcast:binomial allgather:ring barrier:rd \
    alltoall:direct; do
    json -s workload.kind=host_collective -s topology=star:5 -s size=100KiB \
        -s host.coll="${ca%:*}" -s host.algorithm="${ca#*:}" >"$TMP/hc.json"
    if [ "$(field "$TMP/hc.json" completed)" = "True" ] &&
        [ "$(field "$TMP/hc.json" collective algorithm)" = "${ca#*:}" ]; then
        pass "host_collective $ca completes"
    else
        fail "host_collective $ca completes" "$(head -c 300 "$TMP/hc.json")"
    fi
done
"$ARBOR" sim -s workload.kind=host_collective -s topology=star:4 -s size=64KiB \
    -s host.coll=allgather >"$TMP/sum.txt" 2>&1
if grep -Eq "^allgather +ring, 4 ranks, 65536 B, 12 messages: CCT" "$TMP/sum.txt"; then
    pass "summary: collective line"
else
    fail "summary: collective line" "$(cat "$TMP/sum.txt")"
fi

# the iteration's collectives over Arbor (workload.backend = arbor): the dp step
# against its derived bound (847.8 us, in the file) within 10%, exposed = iteration
# - 320 us of compute, every rank of every bucket's job done without an invariant
# error; with real values every result checked
json "$S/iteration-dp-arbor.ini" >"$TMP/dpa.json"
within "dp over Arbor: iteration time" "$(field "$TMP/dpa.json" iteration iter_time_us)" 847.8 932.6
it=$(field "$TMP/dpa.json" iteration iter_time_us)
within "dp over Arbor: exposed = iteration - compute" \
    "$(field "$TMP/dpa.json" iteration exposed_max_us)" "$(awk -v t="$it" 'BEGIN { printf "%.6f", t - 320 }')" \
    "$(awk -v t="$it" 'BEGIN { printf "%.6f", t - 320 }')"
within "dp over Arbor: 4 jobs" "$(field "$TMP/dpa.json" iteration arbor jobs)" 4 4
within "dp over Arbor: 32 ranks done" "$(field "$TMP/dpa.json" iteration arbor ranks_done)" 32 32
within "dp over Arbor: no invariant error" "$(field "$TMP/dpa.json" iteration arbor invariant_errors)" 0 0
json "$S/iteration-dp-arbor.ini" -s arbor.mode=values >"$TMP/dpv.json"
if [ "$(field "$TMP/dpv.json" iteration arbor correct)" = "True" ]; then
    pass "dp over Arbor: values checked"
else
    fail "dp over Arbor: values checked" "$(head -c 300 "$TMP/dpv.json")"
fi
"$ARBOR" sim "$S/iteration-dp-arbor.ini" >"$TMP/dpa.txt" 2>&1
if grep -Eq "^collectives +over Arbor: 4 jobs, 32/32 ranks done, 1024 commits" "$TMP/dpa.txt"; then
    pass "summary: collectives over Arbor"
else
    fail "summary: collectives over Arbor" "$(cat "$TMP/dpa.txt")"
fi
# the Chakra step over Arbor: the same DAG, the same figures (without protobuf-c: skipped)
if json "$S/iteration-dp-chakra.ini" -s backend=arbor >"$TMP/dpca.json" && [ -s "$TMP/dpca.json" ] &&
    field "$TMP/dpca.json" iteration >/dev/null; then
    a=$(field "$TMP/dpa.json" iteration iter_time_us) b=$(field "$TMP/dpca.json" iteration iter_time_us)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "chakra = text over Arbor"; else fail "chakra = text over Arbor" "$a != $b"; fi
elif grep -q "built without it" "$TMP/dpca.json"; then
    skip "chakra = text over Arbor" "arbor is built without protobuf-c (Debian: libprotobuf-c-dev, protobuf-c-compiler)"
else
    fail "chakra over Arbor runs" "$(head -c 300 "$TMP/dpca.json")"
fi
# AllToAll has no Arbor collective: the moe step runs as on the host, to the ps
json "$S/iteration-moe.ini" -s backend=arbor >"$TMP/moea.json"
a=$(field "$TMP/moe.json" iteration iter_time_us) b=$(field "$TMP/moea.json" iteration iter_time_us)
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "moe over Arbor: AllToAll on the host"; else fail "moe over Arbor: AllToAll on the host" "$a != $b"; fi
within "moe over Arbor: no Arbor job" "$(field "$TMP/moea.json" iteration arbor jobs)" 0 0
# more than 256 ranks: ReduceScatter in 13 groups of 20, AllReduce across them in
# 20 groups of 13, AllGather: 46 jobs and 3 x 260 ranks per piece, 2 pieces; a
# member's ReduceScatter up (19/20 of 256 KiB) comes before its AllGather down (as
# much) but for one piece: >= 3/4 x 2 x 19.9 us + 20 us = 49.8 us
printf 'arbor-trace 1\nranks 260\n* 1 comp 10us\n* 2 coll allreduce 256KiB deps=1\n* 3 comp 10us deps=2\n' >"$TMP/h260.txt"
json -s topology=leafspine:9,32,4 -s workload.kind=iteration -s workload.file="$TMP/h260.txt" \
    -s backend=arbor -s arbor.inner_ranks=20 -s arbor.mode=values -s arbor.dtype=i32 >"$TMP/h260.json"
within "260 ranks over Arbor: 2 x 46 jobs" "$(field "$TMP/h260.json" iteration arbor jobs)" 92 92
within "260 ranks over Arbor: every phase of every piece" "$(field "$TMP/h260.json" iteration arbor ranks_done)" 1560 1560
json -s topology=leafspine:9,32,4 -s workload.kind=iteration -s workload.file="$TMP/h260.txt" \
    -s backend=arbor -s arbor.inner_ranks=20 -s arbor.inner_pieces=1 >"$TMP/h260p.json"
within "260 ranks over Arbor, one piece: 46 jobs" "$(field "$TMP/h260p.json" iteration arbor jobs)" 46 46
within "260 ranks over Arbor, one piece: >= 39.8 us + 20 us" "$(field "$TMP/h260p.json" iteration iter_time_us)" 59.8 1000
within "260 ranks over Arbor: no invariant error" "$(field "$TMP/h260.json" iteration arbor invariant_errors)" 0 0
within "260 ranks over Arbor: the phases' bytes" "$(field "$TMP/h260.json" iteration iter_time_us)" 49.8 1000
if [ "$(field "$TMP/h260.json" iteration arbor correct)" = "True" ]; then
    pass "260 ranks over Arbor: values checked"
else
    fail "260 ranks over Arbor: values checked" "$(head -c 300 "$TMP/h260.json")"
fi
expect_err "inner groups that do not divide" 2 "arbor.inner_ranks: .*h260.txt:4: inner_ranks: 260 members do not cut into groups of 7" \
    "$ARBOR" sim -s topology=leafspine:9,32,4 -s workload.kind=iteration -s workload.file="$TMP/h260.txt" \
    -s backend=arbor -s arbor.inner_ranks=7
printf 'arbor-trace 1\nranks 260\n* 1 coll allreduce 80\n' >"$TMP/s260.txt"
expect_err "pieces of fewer elements than shards" 2 "s260.txt:3: bytes: a piece of 40 bytes does not cut into 20 shards" \
    "$ARBOR" sim -s topology=leafspine:9,32,4 -s workload.kind=iteration -s workload.file="$TMP/s260.txt" \
    -s backend=arbor -s arbor.inner_ranks=20
printf 'arbor-trace 1\nranks 260\n* 1 coll broadcast 1MiB\n' >"$TMP/bc260.txt"
expect_err "only AllReduce beyond 256 ranks" 2 "workload.file: .*bc260.txt:3: collective: an Arbor group has at most 256 ranks" \
    "$ARBOR" sim -s topology=leafspine:9,32,4 -s workload.kind=iteration -s workload.file="$TMP/bc260.txt" -s backend=arbor
printf 'arbor-trace 1\nranks 4\n* 1 coll allreduce 6\n' >"$TMP/b6.txt"
expect_err "a collective the planner refuses: its record" 2 "workload.file: .*b6.txt:3: plan: 6 bytes is not a whole number of f32" \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=iteration -s workload.file="$TMP/b6.txt" -s backend=arbor
expect_err "backend for iterations only" 2 "workload.backend: arbor only for workload.kind = iteration" \
    "$ARBOR" sim -s backend=arbor

# errors: one line, status 2, naming where
expect_err "algorithm the collective lacks" 2 "host.algorithm: algorithm: alltoall has no algorithm tree" \
    "$ARBOR" sim -s workload.kind=host_collective -s host.coll=alltoall -s host.algorithm=tree
expect_err "root out of range" 2 "host.root_rank: root: rank 20 is not below the 16 ranks" \
    "$ARBOR" sim -s workload.kind=host_collective -s host.coll=broadcast -s host.root_rank=20 \
    -s ranks=16 -s size=1KiB
printf 'arbor-trace 1\nranks 2\n0 1 comp 1us\n0 2 comp 1us deps=9\n' >"$TMP/bad.txt"
expect_err "malformed trace: file, line, field, rule" 2 \
    "workload.file: .*bad.txt:4: deps: dependency 9 is not a node of rank 0" \
    "$ARBOR" sim -s workload.kind=iteration -s workload.file="$TMP/bad.txt"
printf 'arbor-trace 1\nranks 64\n' >"$TMP/big.txt"
expect_err "more ranks than hosts" 2 "hosts: the trace has 64 ranks, but 32 hosts" \
    "$ARBOR" sim -s workload.kind=iteration -s workload.file="$TMP/big.txt"
head -c 100 "$S/traces/dp-step.0.et" >"$TMP/t.0.et"
expect_err "truncated Chakra file" 2 "t.0.et: record [0-9]+ \(byte [0-9]+\): (length|truncated)|protobuf-c" \
    "$ARBOR" sim -s workload.kind=iteration -s workload.file="$TMP/t.0.et"
expect_err "missing trace" 2 "workload.file: .*nothere.txt: cannot read" \
    "$ARBOR" sim -s workload.kind=iteration -s workload.file="$TMP/nothere.txt"
expect_err "bare collective stays arbor's" 2 "arbor.collective: 'x' is not one of" \
    "$ARBOR" sim -s collective=x

finish
