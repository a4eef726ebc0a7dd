# arbor sim --seeds A..B: the runs are those of --seed A, ..., --seed B, and
# the summary is their mean, sample standard deviation and the 95% CI of the
# mean with Student's t, computed here from the single runs.
. "$(dirname "$0")/lib.sh"

set -- -s topology=star:4 -s workload.kind=incast -s senders=3 -s receiver=0 -s size=200KB \
    -s transport.rto=30us -s loss=0.01
fig() { grep -o "\"$1\":[-0-9.e+]*" | head -1 | cut -d: -f2; }
for s in 1 2 3 4; do
    "$ARBOR" sim "$@" --seed $s --json --quiet | fig sim_time_us >>"$TMP/single"
done
"$ARBOR" sim "$@" --seeds 1..4 --json --quiet >"$TMP/seeds.json"
rc=$?
if [ $rc -eq 0 ]; then pass "--seeds 1..4 runs"; else fail "--seeds 1..4 runs" "status $rc"; fi
runs=$(grep -o '"sim_time_us":[-0-9.e+]*' "$TMP/seeds.json" | head -4 | cut -d: -f2)
if [ "$(echo "$runs" | awk '{printf "%.6f\n", $1}')" = "$(awk '{printf "%.6f\n", $1}' "$TMP/single")" ]
then
    pass "run k is the run of --seed k"
else
    fail "run k is the run of --seed k" "$runs" "$(cat "$TMP/single")"
fi
# mean, sd (n - 1), ci95 = t(0.975, 3) x sd / sqrt(4), t = 3.182
want=$(awk '{ x[NR] = $1; s += $1 } END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2
    sd = sqrt(v / (NR - 1)); printf "%.6f %.6f %.6f", m, sd, 3.182 * sd / sqrt(NR) }' "$TMP/single")
got=$(grep -o '"summary":{.*' "$TMP/seeds.json" | grep -o '"sim_time_us":{[^}]*}' |
    sed 's/.*"mean":\([^,]*\),"sd":\([^,]*\),"ci95":\([^,]*\),.*/\1 \2 \3/')
if awk -v w="$want" -v g="$got" 'BEGIN { split(w, a, " "); split(g, b, " ")
        for (i = 1; i <= 3; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > 1e-5 * (1 + a[i])) exit 1 }
        exit 0 }'; then
    pass "mean, sd and 95% CI of sim_time_us: $got"
else
    fail "mean, sd and 95% CI of sim_time_us" "want $want" "got  $got"
fi
"$ARBOR" sim "$@" --seeds 1..4 --quiet >"$TMP/text"
if grep -q "^4 runs of (built-in), seeds 1..4" "$TMP/text" && grep -q "^sim_time_us " "$TMP/text"
then pass "text summary"; else fail "text summary" "$(cat "$TMP/text")"; fi
# counts (every run's value whole) as integers, their mean, sd and CI with
# two decimals (an integer when whole); times and rates with three
if grep -Eq '^drops +[0-9]+(\.[0-9]{2})? +[0-9]+(\.[0-9]{2})? +[0-9]+(\.[0-9]{2})? +[0-9]+ +[0-9]+$' "$TMP/text" &&
    grep -Eq '^pfc\.pauses +0 +0 +0 +0 +0$' "$TMP/text" &&
    grep -Eq '^sim_time_us +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$' "$TMP/text" &&
    ! grep -q '\.000000' "$TMP/text"; then
    pass "text summary: counts as integers, means to two decimals, times to three"
else
    fail "text summary: counts as integers" "$(cat "$TMP/text")"
fi
# runs whose figures are all alike (a loss-free Arbor AllReduce: the seed
# changes nothing) have a spread of exactly 0, not the sum's rounding, and
# their mean is the single run's figure. That figure is bounded below by the
# wire: a host link carries its 64 KiB up in 8 frames of 8274 B at 100 Gb/s
# (661.92 ns each), and a block crosses two links of 1 us: 7.295 us.
set -- -s topology=star:4 -s workload.size=64KiB
one=$("$ARBOR" sim "$@" --seed 0 --json -q | fig cct_us)
"$ARBOR" sim "$@" --seed 2 --json -q | fig cct_us >"$TMP/two"
"$ARBOR" sim "$@" --seeds 0..2 --json -q >"$TMP/alike.json"
if [ -n "$one" ] && [ "$(cat "$TMP/two")" = "$one" ] &&
    awk -v c="$one" 'BEGIN { exit !(c >= 8 * 0.66192 + 2) }' &&
    grep -q "\"cct_us\":{\"mean\":$one,\"sd\":0.000000,\"ci95\":0.000000," "$TMP/alike.json"; then
    pass "identical runs: the single run's CCT ($one us, >= 7.295), sd and ci95 exactly 0"
else
    fail "identical runs: the single run's CCT, sd and ci95 exactly 0" "single runs: $one $(cat "$TMP/two")" \
        "$(grep -o '"cct_us":{[^}]*}' "$TMP/alike.json")"
fi
# an Arbor run's health per seed: each run's trees declared dead, offsets
# bypassed, results checked and wrong are those of its single run; values
# over star:4 check all 4 x 256 KiB / 4 B = 262,144 f32 results a run
set -- -s topology=star:4 -s workload.size=256KiB -s mode=values -s loss=0.01
for s in 1 2; do
    "$ARBOR" sim "$@" --seed $s --json -q >"$TMP/a$s.json"
done
"$ARBOR" sim "$@" --seeds 1..2 --json -q >"$TMP/as.json"
health() { # FILE [RUN]: "deaths bypass checked wrong" of a run or of runs[RUN]
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    r=d["runs"][int(sys.argv[2])]; print(*[int(r[k]) for k in ("arbor.recovery.tree_deaths", "arbor.recovery.bypass", "arbor.checked", "arbor.wrong")])
else:
    a=d["arbor"]; print(a["recovery"]["tree_deaths"], a["recovery"]["bypass"], a["checked"], a["wrong"])' "$@" 2>/dev/null
}
same "--seeds: run 1's trees dead, bypassed, checked, wrong" "$(health "$TMP/a1.json")" "$(health "$TMP/as.json" 0)"
same "--seeds: run 2's trees dead, bypassed, checked, wrong" "$(health "$TMP/a2.json")" "$(health "$TMP/as.json" 1)"
same "--seeds: every result of a values run checked, none wrong" "262144 0" \
    "$(health "$TMP/as.json" 0 | cut -d' ' -f3-)"
# each run's verdict as its single run gives it: a Barrier checks no
# element (arbor.checked 0), so only correct says it was exact; a
# header-only run has none (null)
verdicts() { # FILE: each run's correct
    python3 -c 'import json,sys; print(*[json.dumps(r["correct"]) for r in json.load(open(sys.argv[1]))["runs"]])' "$1" 2>/dev/null
}
"$ARBOR" sim -s topology=star:4 -s collective=barrier -s mode=values --seeds 1..2 --json -q >"$TMP/b.json"
same "--seeds: a values Barrier's runs correct, checking no element" "true true" "$(verdicts "$TMP/b.json")"
same "--seeds: runs of the values run above correct" "true true" "$(verdicts "$TMP/as.json")"
"$ARBOR" sim -s topology=star:4 --seeds 1..2 --json -q >"$TMP/h.json"
same "--seeds: header-only runs have no verdict" "null null" "$(verdicts "$TMP/h.json")"
expect_err "--seeds B below A" 2 "sim: --seeds: .4..1. is not A..B" "$ARBOR" sim --seeds 4..1
expect_err "--seeds with --csv" 2 "not with --csv" "$ARBOR" sim --seeds 1..2 --csv "$TMP/x"
# A seed the file sets is a default, as every key of the file: --seeds
# overrides it (run k is the file's run with --seed k, not with its own
# seed 5, whose run differs here); one the command line sets is refused
# (tests/cli/test_errors.sh).
printf '[fabric]\ntopology = star:4\nloss = 0.01\n[transport]\nrto = 30us\n[workload]\nkind = incast\nsenders = 3\nreceiver = 0\nsize = 200KB\n[run]\nseed = 5\n' \
    >"$TMP/seed5.ini"
own=$("$ARBOR" sim "$TMP/seed5.ini" --json -q | fig sim_time_us)
s1=$("$ARBOR" sim "$TMP/seed5.ini" --seed 1 --json -q | fig sim_time_us)
s2=$("$ARBOR" sim "$TMP/seed5.ini" --seed 2 --json -q | fig sim_time_us)
"$ARBOR" sim "$TMP/seed5.ini" --seeds 1..2 --json -q >"$TMP/f.json"
rc=$?
runs=$(grep -o '"sim_time_us":[-0-9.e+]*' "$TMP/f.json" | head -2 | cut -d: -f2 |
    awk '{printf "%.6f ", $1}')
want=$(printf '%s\n%s\n' "$s1" "$s2" | awk '{printf "%.6f ", $1}')
if [ $rc -eq 0 ] && [ -n "$own" ] && [ "$runs" = "$want" ] && [ "$s1" != "$own" ]; then
    pass "a file's run.seed: --seeds overrides it (runs $runs; the file's seed 5: $own)"
else
    fail "a file's run.seed: --seeds overrides it" "status $rc" "want: $want (not $own)" \
        "got:  $runs"
fi
finish
