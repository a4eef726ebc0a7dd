# arbor.background (transport flows beside an Arbor collective) and
# run.watch (a port's queue and the bytes of each party that crossed it)
# from the command: errors, an unset key changes nothing, the summary.
. "$(dirname "$0")/lib.sh"

has() { if printf '%s' "$2" | grep -q -- "$3"; then pass "$1"; else fail "$1" "no $3 in: $(printf '%s' "$2" | head -c 300)"; fi; }
hasnt() { if printf '%s' "$2" | grep -q -- "$3"; then fail "$1" "$3 found"; else pass "$1"; fi; }
nohost() { sed 's/,"host":{[^}]*}//'; }

printf 'src,dst,bytes,start_us\n3,0,1048576,0\n' >"$TMP/bulk.csv"
cat >"$TMP/mix.ini" <<'INI'
; an Arbor AllReduce on hosts 0-2 of star:4 while host 3 sends to host 0
[fabric]
topology = star:4
[transport]
kind = irn
window = 15
[workload]
kind = arbor
size = 1MiB
ranks = 3
[arbor]
background = bulk.csv
[run]
sample = 2us
watch = host:h0
INI

# Errors: exit 2, one line naming the key.
expect_err "background needs an Arbor collective" 2 "arbor.background: only beside an Arbor collective" \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=incast -s arbor.background="$TMP/bulk.csv"
expect_err "background file missing" 2 "arbor.background: .*nope.csv" \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=arbor -s arbor.background="$TMP/nope.csv"
printf 'src,dst,bytes,start_us\n3,9,100,0\n' >"$TMP/badhost.csv"
expect_err "background host out of range" 2 "arbor.background: " \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=arbor -s arbor.background="$TMP/badhost.csv"
expect_err "watch names a node" 2 "run.watch: .*no node h9" "$ARBOR" sim -s topology=star:4 -s run.watch=host:h9

# Unset keys leave the report as it was: no new objects, and an empty value is unset.
A=$("$ARBOR" sim -s topology=star:4 -s workload.kind=arbor -s size=256KiB --json --quiet | nohost)
B=$("$ARBOR" sim -s topology=star:4 -s workload.kind=arbor -s size=256KiB -s arbor.background= -s run.watch= --json --quiet | nohost)
same "empty background and watch change nothing" "$A" "$B"
hasnt "no background object" "$A" '"background"'
hasnt "no watch array" "$A" '"watch"'

# The figures themselves are checked in tests/unit/test_cc_sim.c.
J=$("$ARBOR" sim "$TMP/mix.ini" --json --quiet)
has "json: background" "$J" '"background":{"flows":1,"done":1,"bytes":1048576,'
has "json: the echo names the file" "$J" '"background":"bulk.csv"'
has "json: watch" "$J" '"watch":\[{"port":"h0->L1.0",'
# workload.qps and shared_sport split the background's flows as they split
# any trace's: one flow of 1 MiB over 3 QPs is three flows, the same bytes
J=$("$ARBOR" sim "$TMP/mix.ini" -s workload.qps=3 --json --quiet)
has "json: background over 3 QPs" "$J" '"background":{"flows":3,"done":3,"bytes":1048576,'
J=$("$ARBOR" sim "$TMP/mix.ini" -s workload.qps=3 -s workload.shared_sport=on --json --quiet)
has "json: background over 3 QPs, one source port" "$J" '"background":{"flows":3,"done":3,'
T=$("$ARBOR" sim "$TMP/mix.ini" --quiet)
has "summary: background line" "$T" "^background    1 of 1 flows done over irn"
has "summary: watch line" "$T" "^watch         L1.0->h0: p99"

finish
