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

if ! command -v python3 >/dev/null 2>&1; then
    echo "skip: python3 is not installed (JSON fields, the trace generator)"
    finish
    exit 0
fi

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
    echo "skip: arbor built without protobuf-c"
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
if ! command -v python3 >/dev/null 2>&1; then
    skip "gen_perm.py reproduces bench/data/perm1024.cm" "python3 is not installed"
elif python3 scripts/gen_perm.py >"$TMP/perm.cm" && cmp -s "$TMP/perm.cm" bench/data/perm1024.cm; then
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
