#!/bin/sh
# arbor sim's host model (arbor.host_pkt, host_wake, switch_pkt,
# switch_wake, spin, host_call), its repeated calls (arbor.calls, warmup),
# scenario includes (include = FILE) and bench/lab_calibrate's fit
# (--from FILE, no lab needed). Usage: test_hostmodel.sh PATH_TO_ARBOR
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARBOR=$(cd "$(dirname "$ARBOR")" && pwd)/$(basename "$ARBOR") # the include test runs from /

# jv JSON KEY: the number after "KEY": (the first one).
jv() { printf '%s' "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
# check NAME AWK_CONDITION: a bound on figures already extracted.
check() { if awk "BEGIN { exit !($2) }"; then pass "$1"; else fail "$1" "not: $2"; fi; }
nohost() { sed 's/,"host":{"wall_s[^}]*}//'; }

cat >"$TMP/s.ini" <<'INI'
[fabric]
topology = star:4
link_rate = 1G
delay = 0
[workload]
kind = arbor
size = 1KiB
[arbor]
collective = allreduce
[run]
stop = 0
INI
sim() { "$ARBOR" sim "$TMP/s.ini" --json "$@" 2>"$TMP/err" | nohost; }

# --- defaults off: the keys at 0 change nothing, not even the report ----
J0=$(sim)
JZ=$(sim -s arbor.host_pkt=0 -s arbor.host_wake=0 -s arbor.switch_pkt=0 -s arbor.switch_wake=0 \
    -s arbor.spin=0 -s arbor.host_call=0 -s arbor.calls=1 -s arbor.warmup=0)
same "every key at 0: the same report, byte for byte" "$J0" "$JZ"
case $J0 in *host_pkt* | *'"calls"'*) fail "defaults: no key echoed, no calls object" ;; *) pass "defaults: no key echoed, no calls object" ;; esac
C0=$(jv "$J0" cct_us)

# --- per packet: small costs change no event's order, so the CCT grows by
# an integer number of handlings on the critical path, linearly ---------
C1=$(jv "$(sim -s arbor.host_pkt=1ns)" cct_us)
C2=$(jv "$(sim -s arbor.host_pkt=2ns)" cct_us)
D=$(jv "$J0" delivered)
check "host_pkt: linear in the cost ($C0, $C1, $C2 us)" \
    "($C2 - $C0) > 0 && ($C2 - $C0) - 2 * ($C1 - $C0) < 1e-9 && ($C2 - $C0) - 2 * ($C1 - $C0) > -1e-9"
N=$(awk -v a="$C0" -v b="$C1" 'BEGIN { printf "%.6f", (b - a) * 1000 }')
check "host_pkt: n = $N handlings on the critical path, a whole number in 1..$D (packets delivered)" \
    "$N == int($N) && $N >= 1 && $N <= $D"
S1=$(jv "$(sim -s arbor.switch_pkt=1ns)" cct_us)
S2=$(jv "$(sim -s arbor.switch_pkt=2ns)" cct_us)
check "switch_pkt: linear in the cost ($S1, $S2 us)" \
    "($S2 - $C0) > 0 && ($S2 - $C0) - 2 * ($S1 - $C0) < 1e-9 && ($S2 - $C0) - 2 * ($S1 - $C0) > -1e-9"
# a cost far above every other time: the handlings on the critical path
# are serial, so the CCT is at least the n handlings found above
CB=$(jv "$(sim -s arbor.host_pkt=1ms)" cct_us)
check "host_pkt 1 ms: at least n ms ($CB us, n = $N)" "$CB >= $N * 1000"

# --- wake-up: only after an idle spell longer than the spin -------------
W=$(jv "$(sim -s arbor.host_wake=100us)" cct_us)
check "host_wake 100us after any idle time: at least 100 us more ($W against $C0)" "$W >= $C0 + 100"
WS=$(sim -s arbor.host_wake=100us -s arbor.switch_wake=100us -s arbor.spin=1s)
same "a spin longer than the run: no wake-up, the same CCT" "$C0" "$(jv "$WS" cct_us)"

# --- repeated calls ----------------------------------------------------------
JC=$(sim -s arbor.calls=4 -s arbor.warmup=1)
case $JC in *'"calls":{"calls":3,"warmup":1,'*) pass "calls 4, warmup 1: three timed calls" ;; *) fail "calls 4, warmup 1: three timed calls" "$(printf %s "$JC" | grep -o '"calls":{[^}]*}')" ;; esac
EACH=$(printf '%s' "$JC" | grep -o '"each":\[[^]]*\]' | tr -d '"each:[]')
MEAN=$(printf '%s' "$EACH" | awk -F, '{ for (i = 1; i <= NF; i++) s += $i; printf "%.6f", s / NF }')
check "cct_us is the timed calls' mean ($(jv "$JC" cct_us), each $EACH)" \
    "$(jv "$JC" cct_us) - $MEAN < 1e-6 && $MEAN - $(jv "$JC" cct_us) < 1e-6"
# the summary speaks of one call's ranks and bytes, and the calls
"$ARBOR" sim "$TMP/s.ini" -s arbor.calls=4 -s arbor.warmup=1 >"$TMP/sum.txt" 2>&1
if grep -Eq "^arbor +allreduce of 1024 B over 4 ranks x 4 calls \(1 warm-up\)," "$TMP/sum.txt" &&
    grep -Eq "^result .* 16/16 rank-calls done, correct " "$TMP/sum.txt"; then
    pass "calls 4: the summary says 4 ranks x 4 calls of 1024 B"
else
    fail "calls 4: the summary says 4 ranks x 4 calls of 1024 B" "$(grep -E '^(arbor|result) ' "$TMP/sum.txt")"
fi
# one call: the same run, 250 us later
J1=$(sim -s arbor.host_call=250us)
same "host_call, one call: it starts 250 us after workload.start" "250.000000" "$(jv "$J1" start_us)"
same "host_call, one call: the same CCT" "$C0" "$(jv "$J1" cct_us)"
check "host_call, one call: it ends 250 us later" \
    "$(jv "$J1" finish_us) - $(jv "$J0" finish_us) - 250 < 1e-6 && $(jv "$J1" finish_us) - $(jv "$J0" finish_us) - 250 > -1e-6"
# two calls: every rank's second call starts 250 us after its first ended,
# and the last rank done with the first call ends it 250 us + C0 in
JH=$(sim -s arbor.calls=2 -s arbor.host_call=250us)
check "host_call, two calls: the last ends after 2 x 250 us and the first call's CCT" \
    "$(jv "$JH" finish_us) > 500 + $C0"
expect_err "warmup must leave a timed call" 2 "arbor.warmup: leaves no timed call" \
    "$ARBOR" sim "$TMP/s.ini" -s arbor.calls=2 -s arbor.warmup=2
expect_err "calls of one job only" 2 "arbor.calls: .*arbor.jobs must be 1" \
    "$ARBOR" sim "$TMP/s.ini" -s arbor.calls=2 -s arbor.jobs=2

# --- a partitioned run refuses the model, naming the key -------------------
if ! "$ARBOR" sweep --help | grep -q "built with MPI"; then
    skip "--partition refuses the model" "this arbor was built without MPI"
elif ! command -v mpirun >/dev/null 2>&1; then
    skip "--partition refuses the model" "mpirun is not installed (Debian: openmpi-bin)"
else
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 \
        mpirun --oversubscribe -np 2 "$ARBOR" sim "$TMP/s.ini" --partition 2 -s arbor.host_pkt=1us 2>&1)
    case $out in
    *"arbor.host_pkt: not supported by a partitioned run"*) pass "--partition refuses the model, naming the key" ;;
    *) fail "--partition refuses the model, naming the key" "$(printf '%s' "$out" | head -3)" ;;
    esac
fi

# --- include --------------------------------------------------------------
mkdir -p "$TMP/inc/sub"
printf '[arbor]\nhost_pkt = 1ns\n' >"$TMP/inc/sub/cost.ini"
sed 's/^\[run\]/include = sub\/cost.ini\n[run]/' "$TMP/s.ini" >"$TMP/inc/with.ini"
same "include: relative to the including file, from another directory" "$C1" \
    "$(cd / && "$ARBOR" sim "$TMP/inc/with.ini" --json | nohost | grep -o '"cct_us":[0-9.]*' | head -1 | cut -d: -f2)"
same "include: a key after it overrides it" "$C0" \
    "$(jv "$("$ARBOR" sim "$TMP/inc/with.ini" --json -s arbor.host_pkt=0)" cct_us)"
printf '[fabric]\ntopology = star:4\n\ninclude = none.ini\n' >"$TMP/inc/miss.ini"
expect_err "include: a missing file names the including file and line" 2 \
    "miss.ini:4: include: .*none.ini: cannot open" "$ARBOR" sim "$TMP/inc/miss.ini"
printf '[arbor]\nhost_pkt = lots\n' >"$TMP/inc/sub/bad.ini"
printf 'include = sub/bad.ini\n' >"$TMP/inc/bad.ini"
expect_err "include: an error in the included file names its file and line" 2 \
    "sub/bad.ini:2: arbor.host_pkt: 'lots' is not a time" "$ARBOR" sim "$TMP/inc/bad.ini"
printf '[run]\ninclude = /dev/null\n' >"$TMP/inc/dev.ini"
expect_err "include: only a regular file" 2 "dev.ini:2: include: /dev/null: not a regular file" \
    "$ARBOR" sim "$TMP/inc/dev.ini"
printf 'include = b.ini\n' >"$TMP/inc/a.ini"
printf '[fabric]\ninclude = a.ini\n' >"$TMP/inc/b.ini"
expect_err "include: a loop is refused" 2 "b.ini:2: include: .*a.ini: an include loop" \
    "$ARBOR" sim "$TMP/inc/a.ini"
printf 'include = self.ini\n' >"$TMP/inc/self.ini"
expect_err "include: a file including itself is refused" 2 "self.ini:1: include: .*an include loop" \
    "$ARBOR" sim "$TMP/inc/self.ini"

# --- the calibration's fit, from given measurements --------------------------
# measurements made by the model itself (wake 50 us, 5 us and 2.5 Gbit/s per
# packet at hosts and switches, two cores): the fit must find the model again
TWIN=$ROOT/scenarios/lab-twin.ini
MODEL="-s arbor.host_wake=50us -s arbor.switch_wake=50us -s arbor.host_pkt=5us \
 -s arbor.switch_pkt=5us -s arbor.host_rate=2.5G -s arbor.switch_rate=2.5G -s arbor.cores=2"
: >"$TMP/meas.txt"
for b in 1024 65536 4194304; do
    # shellcheck disable=SC2086 # MODEL is a list of options
    t=$(jv "$("$ARBOR" sim "$TWIN" -s workload.size=$b $MODEL --json)" cct_us)
    echo "$b $t" >>"$TMP/meas.txt"
done
if ARBOR="$ARBOR" CORES=2 sh "$ROOT/bench/lab_calibrate" --from "$TMP/meas.txt" --out "$TMP/fit.ini" \
    >"$TMP/fit.out" 2>&1; then
    pass "lab_calibrate --from: exit 0"
else
    fail "lab_calibrate --from: exit 0" "$(tail -5 "$TMP/fit.out")"
fi
same "fit: the cores it was given" "cores = 2" "$(grep '^cores = ' "$TMP/fit.ini")"
for k in host_pkt host_wake switch_pkt switch_wake; do
    if grep -Eq "^$k = [0-9.]+us$" "$TMP/fit.ini"; then pass "fit: $k, a time"; else fail "fit: $k, a time" "$(cat "$TMP/fit.ini")"; fi
done
for k in host_rate switch_rate; do
    if grep -Eq "^$k = [0-9]+$" "$TMP/fit.ini"; then pass "fit: $k, bits/s"; else fail "fit: $k, bits/s" "$(cat "$TMP/fit.ini")"; fi
done
val() { grep "^$1 = " "$TMP/fit.ini" | sed 's/.* = //; s/us$//'; }
# three sizes need not pin the three parameters down (a longer wake-up and a
# shorter packet can give the same CCTs): what the fit owes is the figures
# (below), with every parameter inside the range it searches
check "fit: wake in 1 ns .. 10 ms ($(val host_wake) us)" "$(val host_wake) >= 0.001 && $(val host_wake) <= 10000"
check "fit: per packet in 1 ns .. 10 ms ($(val host_pkt) us)" "$(val host_pkt) >= 0.001 && $(val host_pkt) <= 10000"
check "fit: rate in 10 Mbit/s .. 1 Tbit/s ($(val host_rate))" "$(val host_rate) >= 1e7 && $(val host_rate) <= 1e12"
# the file is an include: the twin with it gives the measurements again
printf 'include = %s\n' "$TMP/fit.ini" | cat - "$TWIN" | sed '/^include = lab-host.ini/d' >"$TMP/fitted.ini"
while read -r b t; do
    g=$(jv "$("$ARBOR" sim "$TMP/fitted.ini" -s workload.size="$b" --json)" cct_us)
    check "the fitted include at $b B: within 3% of the measurement ($g against $t us)" \
        "$g > 0.97 * $t && $g < 1.03 * $t"
done <"$TMP/meas.txt"
printf '# nothing\n' >"$TMP/empty.txt"
expect_err "lab_calibrate --from: a file without figures" 2 "no 'SIZE_BYTES CCT_US' line" \
    env ARBOR="$ARBOR" sh "$ROOT/bench/lab_calibrate" --from "$TMP/empty.txt" --out "$TMP/x.ini"

finish
