# The `arbor sim` command: errors (exit 2, one line naming file, line and
# key), the JSON keys, overrides, determinism, CSV, and the example scenarios.
. "$(dirname "$0")/lib.sh"

has() { if printf '%s' "$2" | grep -q -- "$3"; then pass "$1"; else fail "$1" "no $3 in: $(printf '%s' "$2" | head -c 300)"; fi; }
nohost() { sed 's/,"host":{[^}]*}//'; }
# jnum KEY JSON: the first number after "KEY": in JSON.
jnum() { printf '%s' "$2" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
# le NAME A B: pass when A <= B (decimal numbers).
le() { if awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0) }'; then pass "$1"; else fail "$1" "$2 > $3"; fi; }
# jv JSON KEY: the number after "KEY": (the first one).
jv() { printf '%s' "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
# check NAME AWK_CONDITION: a bound on figures already extracted.
check() { if awk "BEGIN { exit !($2) }"; then pass "$1"; else fail "$1" "not: $2"; fi; }

cat >"$TMP/small.ini" <<'INI'
[fabric]
topology = star:4
[workload]
size = 64KiB
[run]
sample = 5us
INI

# The text summary's counts: one switch, two hosts and links.
T=$("$ARBOR" sim -s topology=star:2 -s workload.kind=perm -s size=64KiB)
has "summary: 1 switch, singular" "$T" '^fabric        star:2: 2 hosts, 1 switch, 2 links, '

# Errors: exit 2, one stderr line, nothing on stdout.
printf '[fabric]\ntopology = star:4\nbogus = 1\n' >"$TMP/bad.ini"
expect_err "unknown key names file:line: key" 2 "bad.ini:3: fabric.bogus: unknown key" "$ARBOR" sim "$TMP/bad.ini"
printf '[fabrik]\n' >"$TMP/bad2.ini"
expect_err "unknown section" 2 "bad2.ini:1: unknown section \[fabrik\]" "$ARBOR" sim "$TMP/bad2.ini"
printf '[switch]\nqueue = lots\n' >"$TMP/bad3.ini"
expect_err "bad value" 2 "bad3.ini:2: switch.queue: 'lots' is not a size" "$ARBOR" sim "$TMP/bad3.ini"
expect_err "a size of an unknown unit lists the units" 2 \
    "sim: -s workload.size: '1X' has an unknown unit \(want B, K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB or TB\)\$" \
    "$ARBOR" sim -s workload.size=1X
expect_err "a size of a fraction of a byte" 2 "sim: -s workload.size: '1.5B' is not a whole number of bytes" \
    "$ARBOR" sim -s workload.size=1.5B
expect_err "a size above the key's range" 2 "sim: -s transport.mtu: '64K' is not in 1..65000" \
    "$ARBOR" sim -s transport.mtu=64K

# One size syntax: K, M, G, T are binary (1M = 1MiB = 2^20 B), KB, MB decimal.
# The runs of 1M and 1MiB are the same but for the echo of the text given.
size_run() { "$ARBOR" sim -s "workload.size=$1" --json | nohost | sed "s/\"size\":\"$1\"/\"size\":\"S\"/"; }
size_run 1M >"$TMP/1m.json"
size_run 1MiB >"$TMP/1mib.json"
if [ -s "$TMP/1m.json" ] && cmp -s "$TMP/1m.json" "$TMP/1mib.json"; then
    pass "-s workload.size=1M: the JSON of =1MiB"
else
    fail "-s workload.size=1M" "$(diff "$TMP/1m.json" "$TMP/1mib.json" | head -4)"
fi
same "1M is 2^20 bytes" "$((1024 * 1024))" "$(jv "$(cat "$TMP/1m.json")" bytes)"
same "1MB is 10^6 bytes" "$((1000 * 1000))" "$(jv "$("$ARBOR" sim -s size=1mb --json)" bytes)"
printf '[fabric]\ntopology = star:1x\n' >"$TMP/bad4.ini"
expect_err "bad topology at run time" 2 "bad4.ini:2: fabric.topology: " "$ARBOR" sim "$TMP/bad4.ini"
printf '[workload]\nkind = htsim\nfile = missing.cm\n' >"$TMP/bad5.ini"
expect_err "missing trace file" 2 "bad5.ini:3: workload.file: .*missing.cm: cannot open" "$ARBOR" sim "$TMP/bad5.ini"
expect_err "missing scenario file" 2 "nope.ini: cannot open" "$ARBOR" sim "$TMP/nope.ini"
expect_err "bad -s value" 2 "sim: -s transport.rto: 'x' is not a time" "$ARBOR" sim "$TMP/small.ini" -s transport.rto=x
expect_err "ambiguous -s key" 2 "sim: -s window: ambiguous key" "$ARBOR" sim "$TMP/small.ini" -s window=3
expect_err "-s without =" 2 "expected section.key=value" "$ARBOR" sim -s fabric.topology
expect_err "unknown option" 2 "unknown option '--bogus'" "$ARBOR" sim --bogus
expect_err "two files" 2 "one scenario file only" "$ARBOR" sim a.ini b.ini
expect_err "bad --seed" 2 "sim: --seed: 'x' is not a number" "$ARBOR" sim --seed x
expect_err "fail_at: item checked against the fabric" 2 "sim: -s fabric.fail_at: fail: 'switch:L9.0': no node L9.0" "$ARBOR" sim -s 'fabric.fail_at=10us switch:L9.0'
expect_err "fail_at: a time first" 2 "'switch:L2.0': expected a time" "$ARBOR" sim -s 'fabric.fail_at=switch:L2.0'
expect_err "fail_at: a time needs items" 2 "no link or switch after 10us" "$ARBOR" sim -s 'fabric.fail_at=10us'
printf '[fabric]\ntopology = leafspine:2,4,2\nfail_at = 10us up:L1.0:0\n    20us switch:L2.7\n' >"$TMP/fa.ini"
expect_err "fail_at: continuation line named" 2 "fa.ini:4: fabric.fail_at: .*no node L2.7" "$ARBOR" sim "$TMP/fa.ini"
# fabric.fail: items separated by commas, blanks or both, continued on
# indented lines with or without a comma before; every form fails the same 4
# of leafspine:2,2,4's 8 uplinks. A ';' is refused naming the line.
printf '[fabric]\ntopology = leafspine:2,2,4\nfail = up:L1.0:0,\n    up:L1.1:1 up:L1.1:2\n    link:L1.0-L2.3\n[run]\nstop = 1us\nsample = 0\n' \
    >"$TMP/fail.ini"
for l in "" "up:L1.0:0,up:L1.1:1,up:L1.1:2,link:L1.0-L2.3" "up:L1.0:0, up:L1.1:1 ,up:L1.1:2 link:L1.0-L2.3"; do
    J=$("$ARBOR" sim "$TMP/fail.ini" ${l:+-s "fabric.fail=$l"} --json 2>/dev/null)
    has "fabric.fail '${l:-(the file)}': 4 uplinks live" "$J" '"tier1_up":{"ports_of":"leaf->spine","ports":4,'
done
printf '[fabric]\ntopology = leafspine:2,2,4\nfail = up:L1.0:0\n    up:L1.1:1;up:L1.1:2\n' >"$TMP/fails.ini"
expect_err "fabric.fail: ';' refused, the line named" 2 \
    "^arbor sim: $TMP/fails.ini:4: fabric.fail: fail: 'up:L1.1:1;up:L1.1:2': items are separated by commas or blanks, not ';'$" \
    "$ARBOR" sim "$TMP/fails.ini"
expect_err "arbor.fail: the same lists" 2 \
    "^arbor sim: -s arbor.fail: fail: 'switch:L2.9': no node L2.9" \
    "$ARBOR" sim -s topology=leafspine:2,2,4 -s "arbor.fail=switch:L2.0 switch:L2.9"
expect_status "help" 0 "$ARBOR" sim --help
expect_status "keys" 0 "$ARBOR" sim --keys

# JSON keys. Ring AllReduce over 4 ranks: 2 (N - 1) = 6 steps of one
# message per rank, 24 flows.
J=$("$ARBOR" sim "$TMP/small.ini" --json --quiet)
for k in '"scenario":{"file":' '"sim_time_us":' '"events":' '"packet_hops":' '"flows":{"count":24' \
    '"fct_us":{"mean":' '"p50":' '"p99":' '"collective":{"kind":"ring_allreduce","ranks":4' \
    '"cct_us":' '"algbw_gbps":' '"busbw_gbps":' '"drops":0' '"ecn_marks":' '"pfc":{"pauses":' \
    '"paused_us":' '"ooo_pkts":' '"retx_bytes":' '"reorder_peak_bytes":' \
    '"queues":{"tier0_up":{' '"max_bytes":' '"mean_bytes":' '"p99_bytes":' \
    '"utilisation":{"tier0_up":' '"host":{"wall_s":' '"peak_rss_mb":'; do
    has "json has $k" "$J" "$k"
done
same "json is one line" 1 "$(printf '%s\n' "$J" | wc -l)"

# A spine failing mid-run: its packets are dropped, every flow still
# completes (ECMP moves to the other spine, IRN repairs), later.
FA="-s fabric.topology=leafspine:2,4,2 -s workload.kind=pattern -s workload.traffic=perm:3
    -s workload.size=400000 -s transport.kind=irn -s transport.rto=100us --json"
F0=$("$ARBOR" sim $FA)
F1=$("$ARBOR" sim $FA -s 'fabric.fail_at=10us switch:L2.0')
has "no failure, no drops" "$F0" '"drops":0,'
has "fail_at: every flow done" "$F1" '"count":8,"done":8'
if printf '%s' "$F1" | grep -q '"drops":[1-9]'; then pass "fail_at: the spine's packets dropped"; else fail "fail_at: the spine's packets dropped" "$F1"; fi

# Arbor, a spine failing 2 ms in: its 8 trees go silent, are declared dead,
# and what they carried is credited again on the live trees. Dynamic
# selection finishes within 3% of the same run without the failure (each
# channel pays about one timer); static selection, which keeps sending every
# other offset's first credit down the dead tree, finishes too, above half
# the ceiling (every such offset pays one fabric loop, then a retry).
J=$("$ARBOR" sim scenarios/arbor-spine-fails.ini --json --quiet)
J0=$("$ARBOR" sim scenarios/arbor-spine-fails.ini --json --quiet -s fabric.fail_at=)
for k in '"ranks_done":32' '"repair_commits":0' '"dead_subchannels":8' \
    '"invariants":{"errors":0'; do
    has "arbor-spine-fails: $k" "$J" "$k"
done
le "arbor-spine-fails: within 3% of no failure" "$(jnum cct_us "$J")" \
    "$(awk -v c="$(jnum cct_us "$J0")" 'BEGIN { print c * 1.03 }')"
le "arbor-spine-fails: below the 99.0 Gb/s wire ceiling" "$(jnum goodput_gbps "$J")" 99.0
J=$("$ARBOR" sim scenarios/arbor-spine-fails.ini --json --quiet -s arbor.subchannel_mode=static)
has "arbor-spine-fails static: done" "$J" '"ranks_done":32'
le "arbor-spine-fails static: above half the ceiling" 49.5 "$(jnum goodput_gbps "$J")"

# A run cut short by run.stop says so: status "incomplete" in the JSON (no
# verdict on correctness), one line on stderr that says how to run on until
# each rank is done or gives up, exit status 1.
"$ARBOR" sim -s mode=values -s run.stop=100us --json >"$TMP/inc.json" 2>"$TMP/inc.err"
rc=$?
J=$(cat "$TMP/inc.json")
if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/inc.err")" -eq 1 ] &&
    grep -Eq "^arbor sim: incomplete: run.stop came first, 0 of 32 ranks done \(last activity at [0-9.]+ us; -s run.stop=0 runs until each is done or gives up, naming what was lost\)$" "$TMP/inc.err"; then
    pass "incomplete: one line, status 1"
else
    fail "incomplete: one line, status 1" "status $rc" "stderr: $(cat "$TMP/inc.err")"
fi
has "incomplete: status in the JSON" "$J" '"status":"incomplete"'
has "incomplete: no verdict" "$J" '"correct":null'
# The line's time is the JSON's sim_time_us, the last event that did
# something, also when RTO timers of acknowledged flows fire after it (a ring
# whose steps start 50 us after their deliveries, cut at 1 ms and at 2 ms:
# timers armed at 0 and later fire with nothing to do up to run.stop).
for stop in 1ms 2ms; do
    "$ARBOR" sim scenarios/allreduce-leafspine.ini -s workload.start_delay=50us -s run.stop=$stop \
        --json >"$TMP/inc.json" 2>"$TMP/inc.err"
    want=$(awk -v t="$(jnum sim_time_us "$(cat "$TMP/inc.json")")" 'BEGIN { printf "%.3f", t }')
    got=$(sed -n 's/.*(last activity at \([0-9.]*\) us)$/\1/p' "$TMP/inc.err")
    same "incomplete at $stop: the line's time is sim_time_us" "$want" "$got"
done
# Utilisation is over the run to its last activity: one packet of 4096 B
# (4178 B on the wire) from host 0 to host 1 of star:2, acked at 4.68224 us
# (two hops of 1 us + 334.24 ns, two of 1 us + 6.88 ns); its 8 us timeout
# then fires with nothing to do, which is not part of the run. Host 0's
# link: 4178 x 8 / (100 Gb/s x 4.68224 us) = 0.071385.
J=$("$ARBOR" sim -s topology=star:2 -s workload.kind=incast -s senders=1 -s size=4096 \
    -s transport.rto=8us --json)
same "utilisation to the last activity: sim_time_us" "4.682240" "$(jnum sim_time_us "$J")"
same "utilisation to the last activity: host 0's link" \
    "$(awk 'BEGIN { printf "%.6f", 4178 * 8 / (100e9 * 4.68224e-6) }')" \
    "$(printf '%s' "$J" | grep -o '"tier0_up":{[^}]*}' | grep -o '"max":[0-9.]*' | cut -d: -f2)"
# A run that cannot finish (hosts 0 and 1 cut off 100 us in, after
# registration) ends with the JSON of what it got, a line naming the channel,
# the offset and the hosts that never answered, and status 1.
"$ARBOR" sim -s topology=leafspine:4,2,2 -s "fail_at=100us switch:L1.0" -s mode=values \
    -s size=4MiB -s run.stop=0 --json >"$TMP/fail.json" 2>"$TMP/fail.err"
rc=$?
J=$(cat "$TMP/fail.json")
if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/fail.err")" -eq 1 ] &&
    grep -Eq "arbor sim: failed at [0-9.]+ us: channel [0-9]+ \(responder h[0-9]+\): offset [0-9]+ lost on tree [0-9]+ after [0-9]+ credits?; [12] members? had not answered its 8 repair credits \(the last waited [0-9.]+ us\): h[01](,h1)?; the fabric: switch:L1.0 failed at 100us; no path is left between h[0-9]+ and h[01](,h1)?$" "$TMP/fail.err"; then
    pass "failed: one line naming what was lost, status 1"
else
    fail "failed: one line naming what was lost, status 1" "status $rc" "stderr: $(cat "$TMP/fail.err")"
fi
has "failed: status in the JSON" "$J" '"status":"failed"'
has "failed: the failure in the JSON" "$J" '"failure":"channel'
has "failed: what it did get" "$J" '"commits":[1-9]'

# A channel that cannot close after every rank is done (a spine link fails;
# ECMP keeps hashing some ENDs into the spine that lost its way down, so they
# find no route) is a warning: the outputs are final and exact, status 0,
# and the line names the failure and the unroutable packets.
"$ARBOR" sim -s topology=leafspine:4,8,8 -s subchannels=2 -s subchannel_mode=dynamic \
    -s "fail_at=300us link:L1.0-L2.0" -s size=8MiB -s mode=values -s run.stop=0 --json \
    >"$TMP/warn.json" 2>"$TMP/warn.err"
rc=$?
J=$(cat "$TMP/warn.json")
if [ $rc -eq 0 ] && [ "$(wc -l <"$TMP/warn.err")" -eq 1 ] &&
    grep -Eq "arbor sim: warning at [0-9.]+ us: channel [0-9]+ \(responder h[0-9]+\): every offset committed, but [0-9]+ members? sent no END .*\(after every rank was done\): h[0-9].*; the fabric: link:L1.0-L2.0 failed at 300us; [0-9]+ packets found no route \(routing.scheme ecmp" "$TMP/warn.err"; then
    pass "closing failed after every rank was done: a warning, status 0"
else
    fail "closing failed after every rank was done: a warning, status 0" "status $rc" "stderr: $(cat "$TMP/warn.err")"
fi
has "warning: done in the JSON" "$J" '"status":"done"'
has "warning: exact" "$J" '"correct":true'
has "warning: the warning in the JSON" "$J" '"warning":"channel'

# arbor.subchannels past the distinct trees the fabric offers the group (a
# tree per candidate root: star's one switch; leafspine:4,4,4's 4 spines
# for a group on every leaf) is legal and runs, with one warning line on
# stderr saying so; up to them, nothing. --seeds says it once.
"$ARBOR" sim -s topology=star:32 -s arbor.subchannels=300 -s size=1MiB -s run.stop=0 --json \
    >"$TMP/sub.json" 2>"$TMP/sub.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$TMP/sub.err")" -eq 1 ] &&
    grep -q '"status":"done"' "$TMP/sub.json" &&
    grep -Eq "^arbor sim: warning: -s arbor\.subchannels: 300 subchannels, but the fabric offers the group 1 distinct tree a channel \(1 candidate root\): subchannel s takes the links of subchannel s - 1\$" "$TMP/sub.err"; then
    pass "subchannels 300 over star:32: runs, one warning (1 distinct tree)"
else
    fail "subchannels 300 over star:32: runs, one warning" "status $rc" "stderr: $(cat "$TMP/sub.err")"
fi
SUB="-s topology=leafspine:4,4,4 -s workload.kind=arbor -s size=1MiB -s run.stop=0"
# shellcheck disable=SC2086
"$ARBOR" sim $SUB -s arbor.subchannels=6 -q >/dev/null 2>"$TMP/sub.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$TMP/sub.err")" -eq 1 ] &&
    grep -q "6 subchannels, but the fabric offers the group 4 distinct trees a channel (4 candidate roots): subchannel s takes the links of subchannel s - 4\$" "$TMP/sub.err"; then
    pass "subchannels 6 over 4 spines: one warning (4 distinct trees)"
else
    fail "subchannels 6 over 4 spines: one warning" "status $rc" "stderr: $(cat "$TMP/sub.err")"
fi
# shellcheck disable=SC2086
expect_status "subchannels 4 over 4 spines: runs" 0 "$ARBOR" sim $SUB -s arbor.subchannels=4 -q
if [ ! -s "$TMP/err" ]; then pass "  ... without a warning"; else fail "  ... without a warning" "$(cat "$TMP/err")"; fi
# shellcheck disable=SC2086
"$ARBOR" sim $SUB -s arbor.subchannels=6 --seeds 1..2 -q >/dev/null 2>"$TMP/sub.err"
same "--seeds: the warning once" "1" "$(grep -c 'warning: -s arbor.subchannels' "$TMP/sub.err")"
# The same for an iteration's Arbor collectives (workload.backend = arbor),
# for the group of all its hosts: 8 subchannels on star:8 (one tree) warn,
# 2 on leafspine:2,4,2 (two spines) do not.
ITER=scenarios/iteration-dp-arbor.ini
"$ARBOR" sim "$ITER" -s arbor.subchannels=8 -q >/dev/null 2>"$TMP/sub.err"
rc=$?
same "iteration, backend arbor, 8 subchannels on star:8: runs, one warning (1 distinct tree)" "0 1 1" \
    "$rc $(wc -l <"$TMP/sub.err" | tr -d ' ') $(grep -c '^arbor sim: warning: -s arbor.subchannels: 8 subchannels, but the fabric offers the group 1 distinct tree a channel' "$TMP/sub.err")"
"$ARBOR" sim "$ITER" -s arbor.subchannels=2 -s topology=leafspine:2,4,2 -q >/dev/null 2>"$TMP/sub.err"
rc=$?
same "iteration, backend arbor, 2 subchannels on leafspine:2,4,2: runs, no warning" "0 0" \
    "$rc $(wc -l <"$TMP/sub.err" | tr -d ' ')"

# One flaky uplink (fabric.link loss=) at 1%, the rest clean, dynamic
# subchannels: only the credits and aggregates of the trees through that
# link cross it (two packets per offset of those trees), so about 2% of
# their offsets are credited again, and the run keeps >= 90% of its
# loss-free goodput, exactly.
FL="-s topology=leafspine:4,8,8 -s subchannels=2 -s subchannel_mode=dynamic -s mode=values -s size=8MiB -s run.stop=0"
# shellcheck disable=SC2086
J0=$("$ARBOR" sim $FL --json --quiet)
# shellcheck disable=SC2086
J=$("$ARBOR" sim $FL -s "fabric.link=link:L1.0-L2.0 loss=0.01" --json --quiet)
has "flaky uplink: exact" "$J" '"correct":true'
has "flaky uplink: losses there" "$J" '"drops":[1-9]'
has "flaky uplink: no loss without it" "$J0" '"drops":0,'
le "flaky uplink: >= 90% of the loss-free goodput" \
    "$(awk -v g="$(jnum goodput_gbps "$J0")" 'BEGIN { print 0.9 * g }')" "$(jnum goodput_gbps "$J")"
expect_err "flaky uplink: loss of 1 refused" 2 "fabric.link: 'loss=1': not a loss probability" \
    "$ARBOR" sim -s topology=leafspine:4,8,8 -s "fabric.link=link:L1.0-L2.0 loss=1"

# Loss: 0.1% on 4 MiB. By default every loss is found by order or by a
# timer of a few loops and credited again in the network: exact results
# within twice the loss-free time. The original recovery (a fixed 50 ms timer,
# then the bypass repair) waits that timer at least once.
JL=$("$ARBOR" sim scenarios/arbor-loss.ini -s size=4MiB -s loss=0 --json --quiet)
JD=$("$ARBOR" sim scenarios/arbor-loss.ini -s size=4MiB --json --quiet)
JS=$("$ARBOR" sim scenarios/arbor-loss.ini -s size=4MiB -s arbor.timeout_mode=fixed \
    -s arbor.detection=timer -s arbor.attempts=1 --json --quiet)
has "loss, default: exact" "$JD" '"correct":true'
has "loss, default: retried in the network" "$JD" '"retries":[1-9]'
has "loss, default: no bypass repair" "$JD" '"bypass":0'
le "loss, default: within twice the loss-free time" "$(jnum cct_us "$JD")" \
    "$(awk -v c="$(jnum cct_us "$JL")" 'BEGIN { print 2 * c }')"
has "loss, seed: exact" "$JS" '"correct":true'
has "loss, seed: bypass repairs" "$JS" '"repairs":[1-9]'
le "loss, seed: waits its 50 ms timer" 50000 "$(jnum cct_us "$JS")"
expect_err "timer floor above the ceiling" 2 "sim: -s arbor.timeout_min: above arbor.timeout" "$ARBOR" sim -s arbor.timeout_min=60ms
expect_err "timer below a microsecond" 2 "sim: -s arbor.timeout: below 1 us" "$ARBOR" sim -s arbor.timeout=20ns

# The switches' re-credit timers (arbor.recredit_*): checked, the error
# naming the key; echoed only when set; they reach the switches. lab-twin at
# 16 credits a channel, no host model and its re-credit keys left out: the
# default timers (20 us .. 1 ms) re-credit; with a floor of 1 s and no port
# order no timer can fire in a run that ends before 1 s, so none does.
expect_err "re-credit floor of 0" 2 "sim: -s arbor.recredit_min: '0': must be above 0" \
    "$ARBOR" sim -s arbor.recredit_min=0
expect_err "re-credit floor below a microsecond" 2 "sim: -s arbor.recredit_min: below 1 us" \
    "$ARBOR" sim -s arbor.recredit_min=500ns
expect_err "re-credit floor above its ceiling" 2 "sim: -s arbor.recredit_min: above arbor.recredit_max" \
    "$ARBOR" sim -s arbor.recredit_min=2ms -s arbor.recredit_max=1500us
expect_err "re-credit ceiling above 1 s" 2 "sim: -s arbor.recredit_max: above 1 s" \
    "$ARBOR" sim -s arbor.recredit_min=2ms -s arbor.recredit_max=1001ms
expect_err "re-credit order not a switch" 2 "sim: -s arbor.recredit_order: 'maybe' is not on/off" \
    "$ARBOR" sim -s arbor.recredit_order=maybe
sed '/^recredit_/d' scenarios/lab-twin.ini >"$TMP/twin.ini"
cp scenarios/lab-host.ini "$TMP/lab-host.ini"
TW="$TMP/twin.ini -s arbor.window=16 -s arbor.calls=1 -s arbor.warmup=0"
for k in host_pkt host_rate host_wake switch_pkt switch_rate switch_wake host_call; do
    TW="$TW -s arbor.$k=0"
done
# shellcheck disable=SC2086 # TW is a list of arguments
RD=$("$ARBOR" sim $TW --json --quiet)
# shellcheck disable=SC2086
RS=$("$ARBOR" sim $TW -s arbor.recredit_min=1s -s arbor.recredit_max=1s \
    -s arbor.recredit_order=off --json --quiet)
if printf '%s' "$RD" | grep -q recredit_; then fail "re-credit keys unset: not echoed" "$RD"; else pass "re-credit keys unset: not echoed"; fi
has "re-credit keys set: echoed" "$RS" '"recredit_min":"1s","recredit_max":"1s","recredit_order":"off"'
check "default re-credit timers re-credit at 16 credits" "$(jnum recredits "$RD") > 0"
check "a run shorter than the 1 s floor" "$(jnum sim_time_us "$RS") < 1000000"
same "no re-credit with a 1 s floor and no port order" 0 "$(jnum recredits "$RS")"

# Determinism, overrides, --seed.
A=$("$ARBOR" sim "$TMP/small.ini" --json | nohost)
B=$("$ARBOR" sim "$TMP/small.ini" --json | nohost)
same "same scenario, same JSON" "$A" "$B"
C=$("$ARBOR" sim "$TMP/small.ini" --json -s workload.size=128KiB | nohost)
if [ "$A" != "$C" ]; then pass "-s changes the result"; else fail "-s changes the result"; fi
has "-s echoed" "$C" '"size":"128KiB"'
D=$("$ARBOR" sim "$TMP/small.ini" --json --seed 7 | nohost)
has "--seed sets run.seed" "$D" '"run":{"seed":"7"'
E=$("$ARBOR" sim "$TMP/small.ini" --json -s size=128KiB | nohost)
same "key without section when unambiguous" "$C" "$E"

# Summary and CSV.
S=$("$ARBOR" sim "$TMP/small.ini")
has "summary: allreduce line" "$S" "^allreduce     4 ranks"
has "summary: port table" "$S" "^tier0_down"
"$ARBOR" sim "$TMP/small.ini" --quiet --csv "$TMP/run" >/dev/null
same "csv util header" "time_us,tier0_up,tier0_down" "$(head -1 "$TMP/run-util.csv")"
same "csv queue header" "time_us,tier0_up_mean,tier0_up_max,tier0_down_mean,tier0_down_max" "$(head -1 "$TMP/run-queue.csv")"
same "csv flows rows: a header and the 24 flows" 25 "$(wc -l <"$TMP/run-flows.csv")"
expect_status "csv into a missing directory: refused before the run" 2 "$ARBOR" sim "$TMP/small.ini" --csv /nonexistent/dir/x

# The built-in default and the example scenarios (not the benchmarks: seconds).
expect_status "built-in default" 0 "$ARBOR" sim --quiet -s workload.size=256KiB
for f in scenarios/all2all-star.ini scenarios/htsim.ini scenarios/trace.ini scenarios/shift-leafspine.ini \
    scenarios/perm-kary.ini scenarios/incast.ini; do
    J=$("$ARBOR" sim "$f" --json --quiet)
    has "$f completes" "$J" '"completed":true'
done
J=$("$ARBOR" sim scenarios/allreduce-rr-pipelined.ini --json --quiet -s size=2MiB)
has "rr pipelined allreduce completes" "$J" '"completed":true'
J=$("$ARBOR" sim scenarios/allreduce-leafspine.ini --json --quiet -s size=1MiB)
has "leaf-spine allreduce completes" "$J" '"completed":true'
# Arbor: the built-in default is the star-32 AllReduce (64 MiB, header-only).
J=$("$ARBOR" sim --json --quiet)
has "default: arbor workload" "$J" '"workload":{"kind":"arbor"'
has "default: star-32" "$J" '"spec":"star:32"'
# goodput: at most the wire ceiling 100 x 8192 / 8274 = 99.0 Gb/s; the
# 90 Gb/s floor is a regression bound (docs/arbor-sim.md measures 96.7 for
# window 4), not a derivation.
G=$(jv "$J" goodput_gbps)
check "default: goodput $G in [90, 99.0]" "$G >= 90 && $G <= 100 * 8192 / 8274"
# 64 MiB in 8192 B offsets: 8192 commits.
has "default: 8192 commits" "$J" "\"commits\":$((67108864 / 8192)),"
has "default: correct null in header-only mode" "$J" '"correct":null'
has "default: no invariant broken" "$J" '"invariants":{"errors":0,'
has "default: 16 B headers" "$J" '"header_bytes":16,'
S=$("$ARBOR" sim --quiet)
has "summary: arbor line" "$S" "^arbor         allreduce of 67108864 B over 32 ranks"
has "summary: result line" "$S" "^result        CCT"
# -s overrides: every collective in values mode, exact results, the wire checked.
for c in allreduce reduce reducescatter broadcast allgather barrier; do
    J=$("$ARBOR" sim --json --quiet --wire-check -s topology=leafspine:2,4,2 -s collective=$c \
        -s size=1MiB -s dtype=i32 -s mode=values -s payload=4096)
    has "$c: values correct" "$J" '"correct":true'
    has "$c: wire checked" "$J" '"wire_errors":0,'
    has "$c: invariants" "$J" '"invariants":{"errors":0,'
done
# a block per rank: fewer elements than ranks is refused, naming the size
expect_err "reducescatter below one element per rank: refused" 2 \
    "^arbor sim: -s workload.size: reducescatter of 4 bytes over 8 ranks: below one f32 element per rank \(want 32 B or more\)\$" \
    "$ARBOR" sim -s topology=star:8 -s collective=reducescatter -s size=4
expect_err "  ... allgather too" 2 "^arbor sim: -s workload.size: allgather of 28 bytes over 8 ranks: below one i32 element" \
    "$ARBOR" sim -s topology=star:8 -s collective=allgather -s dtype=i32 -s size=28
J=$("$ARBOR" sim --json --quiet -s topology=star:8 -s collective=reducescatter -s size=32 -s mode=values)
has "  ... one element per rank runs, exact" "$J" '"correct":true'
J=$("$ARBOR" sim --json --quiet -s topology=leafspine:2,4,2 -s size=512KiB -s dtype=f16 -s mode=values -s link_rate=400G)
has "f16 at 400G correct" "$J" '"correct":true'
has "leaf-spine: 20 B headers" "$J" '"header_bytes":20,'
J=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=2MiB -s mode=values -s loss=0.01 -s arbor.timeout=200us -s run.seed=3)
has "loss: correct" "$J" '"correct":true'
has "loss: retries reported" "$J" '"retries":[1-9]'
A=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=2MiB -s loss=0.01 -s arbor.timeout=200us | nohost)
B=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=2MiB -s loss=0.01 -s arbor.timeout=200us | nohost)
same "arbor: deterministic" "$A" "$B"
expect_err "arbor: bad collective" 2 "sim: -s arbor.collective: 'gather' is not one of" "$ARBOR" sim -s collective=gather
expect_err "arbor: bad size" 2 "workload.size: plan: 6 bytes is not a whole number of f32" "$ARBOR" sim -s size=6
expect_err "arbor: one rank" 2 "workload.ranks: 1 ranks" "$ARBOR" sim -s workload.ranks=1
expect_err "arbor: 16 B header on two tiers" 2 "arbor.profile: plan: a path has 2" "$ARBOR" sim -s topology=leafspine:2,4,2 -s profile=16
expect_err "arbor: loss of 1" 2 "fabric.loss: .1. is not below 1 \(a probability in 0..1, 1 excluded\)$" "$ARBOR" sim -s loss=1
J=$("$ARBOR" sim scenarios/arbor-star32-values.ini --json --quiet -s size=4MiB)
has "arbor-star32-values.ini correct" "$J" '"correct":true'
# arbor.jobs: several jobs on one fabric, a JSON entry per job beside the whole.
J=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=1MiB -s arbor.jobs=2 | nohost)
has "jobs: completes" "$J" '"completed":true'
has "jobs: echoed above 1" "$J" '"jobs":"2"'
has "jobs: per-job entries" "$J" '"jobs":\[{"job":0,"ranks":4,"ranks_done":4,"bytes":1048576,"done":true,"goodput_gbps":'
has "jobs: fairness of identical jobs" "$J" '"fairness":{"jain":1.000000,'
has "jobs: second job" "$J" '{"job":1,"ranks":4,'
has "jobs: the whole's ranks" "$J" '"ranks":8,"ranks_done":8'
has "jobs: no invariant error" "$J" '"invariants":{"errors":0,'
B=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=1MiB -s arbor.jobs=2 | nohost)
same "jobs: deterministic" "$J" "$B"
J=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=1MiB)
if printf '%s' "$J" | grep -q '"jobs"'; then fail "one job: no jobs key" "$J"; else pass "one job: no jobs key"; fi
S=$("$ARBOR" sim -s topology=star:8 -s size=1MiB -s arbor.jobs=4)
has "jobs: a summary line per job" "$S" "job 3 .*JCT .* goodput .* peak .* slots"
has "jobs: a summary line for all" "$S" "^jobs  *4, slots shared: Jain 1.000000 "
# staggered starts, sizes and ranks per job; the slot pool shared or cut
J=$("$ARBOR" sim --json --quiet -s topology=star:8 -s size=1MiB -s arbor.jobs=3 \
    -s job_ranks=2,4,2 -s job_size=1MiB,512KiB,256KiB -s job_start=0,20us,1.5us | nohost)
has "jobs: job_ranks" "$J" '{"job":1,"ranks":4,"ranks_done":4,"bytes":524288,'
has "jobs: job_start" "$J" '{"job":2,"ranks":2,.*"start_us":1.500000,'
has "jobs: keys echoed when set" "$J" '"job_start":"0,20us,1.5us","job_size":"1MiB,512KiB,256KiB","job_ranks":"2,4,2"'
S=$("$ARBOR" sim -s topology=star:8 -s size=1MiB -s arbor.jobs=2 -s slots=16 -s slot_partition=static)
has "jobs: static partition in the summary" "$S" "^jobs  *2, slots static: "
has "jobs: static parts of 8 slots" "$S" "job 1 .*peak 8 slots"
expect_err "jobs: a start per job" 2 "sim: -s arbor.job_start: 2 values for arbor.jobs = 3 \(one per job, in job order\)" \
    "$ARBOR" sim -s topology=star:8 -s arbor.jobs=3 -s job_ranks=2,4,2 -s job_start=0,1us
expect_err "jobs: ranks add up" 2 "arbor.job_ranks: the jobs' ranks add up to 6, but there are 8 ranks" \
    "$ARBOR" sim -s topology=star:8 -s workload.ranks=8 -s arbor.jobs=2 -s job_ranks=2,4
expect_err "jobs: a job of one rank" 2 "arbor.job_ranks: job 1: 1 ranks \(a job has 2..256\)" \
    "$ARBOR" sim -s topology=star:8 -s arbor.jobs=2 -s job_ranks=4,1
expect_err "jobs: a list of sizes" 2 "sim: -s arbor.job_size: 'lots' in '1MiB,lots': expected a list of sizes" \
    "$ARBOR" sim -s arbor.job_size=1MiB,lots
expect_err "jobs: static needs a slot per job" 2 "arbor.slot_partition: static: 4 jobs need at least a slot each" \
    "$ARBOR" sim -s topology=star:8 -s arbor.jobs=4 -s slots=3 -s slot_partition=static
printf '[fabric]\ntopology = star:8\n[workload]\nkind = arbor\n[arbor]\njobs = 2\njob_start = 0\n    5us,7us\n' >"$TMP/js.ini"
expect_err "jobs: a list continued, file and line" 2 "js.ini:8: arbor.job_start: 3 values for arbor.jobs = 2" "$ARBOR" sim "$TMP/js.ini"
expect_err "jobs: not a divisor" 2 "sim: -s arbor.jobs: 3 jobs: 8 ranks do not split into equal groups" \
    "$ARBOR" sim -s topology=star:8 -s arbor.jobs=3
expect_err "jobs: groups of one" 2 "arbor.jobs: 8 jobs: 8 ranks do not split" "$ARBOR" sim -s topology=star:8 -s arbor.jobs=8
expect_err "jobs: zero" 2 "sim: -s arbor.jobs: '0' is not in 1..128" "$ARBOR" sim -s arbor.jobs=0
printf '[fabric]\ntopology = star:8\n[workload]\nkind = arbor\n[arbor]\njobs = 5\n' >"$TMP/jobs.ini"
expect_err "jobs: file and line" 2 "jobs.ini:6: arbor.jobs: 5 jobs" "$ARBOR" sim "$TMP/jobs.ini"
# two jobs on the same hosts (a host named twice in workload.hosts): their channels
# on different UDP ports, told apart by run.watch
J=$("$ARBOR" sim --json --quiet -s topology=star:4 -s arbor.jobs=2 -s workload.hosts=0-3,0-3 \
    -s size=256KiB -s run.watch=host:h0 | nohost)
has "jobs on the same hosts: complete" "$J" '"completed":true'
has "jobs on the same hosts: watched apart" "$J" '{"party":"job 0","bytes":[0-9]*,"overlap_gbps":[0-9.]*},{"party":"job 1",'
# eight staggered jobs of several sizes on shared uplinks, against the bounds of
# their file: the makespan >= 13.85 ms, every byte over it <= 290.7 Gb/s, each JCT >=
# the job's buffer at 99.0 Gb/s, Jain in [1/8, 1]; a static part of 16 / 8 slots holds
# at most 2 slots of a job; every job done without an invariant error
if command -v python3 >/dev/null 2>&1; then
    for p in shared static; do
        "$ARBOR" sim scenarios/arbor-8jobs-staggered.ini --json --quiet -s arbor.slots=16 \
            -s arbor.slot_partition=$p >"$TMP/8j.json"
        v=$(python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); a=j["arbor"]; f=a["fairness"]; p=sys.argv[2]
ok = f["makespan_us"] >= 13850 and f["makespan_gbps"] <= 290.7 and 1/8 <= f["jain"] <= 1
ok = ok and all(x["cct_us"] >= x["bytes"] * 8 / 99.0e3 and x["done"] and x["invariant_errors"] == 0 for x in a["jobs"])
ok = ok and (p == "shared" or max(x["peak_slots"] for x in a["jobs"]) <= 2)
ok = ok and (p == "static" or max(x["peak_slots"] for x in a["jobs"]) > 2)
print("yes" if ok and len(a["jobs"]) == 8 else "no")' "$TMP/8j.json" $p 2>&1)
        same "8 staggered jobs, $p pool of 16: within their bounds" "yes" "$v"
    done
fi
# docs/scenarios.md has a line for every key, with its default.
missing=""
for k in $("$ARBOR" sim --keys | grep -v '^ ' | sed 's/ = .*//'); do
    grep -q "^| \`$k\` |" docs/scenarios.md || missing="$missing $k"
done
same "every key documented" "" "$missing"
# --keys names the choices of a key that takes one of a set of names.
K=$("$ARBOR" sim --keys)
has "keys: arbor.cc's six controllers" "$K" "one of: disabled|fixed|timely|swift|dcqcn|oscar"
has "keys: the collectives" "$K" "one of: allreduce|reduce|reducescatter|broadcast|allgather|barrier"

# HPN's host side and shared source ports (ring AllReduce).
cat >"$TMP/hpn.ini" <<'INI'
[fabric]
topology = leafspine:2,4,4
[workload]
hosts = 0,4,1,5,2,6,3,7
size = 1MiB
chunk = 16KiB
qps = 4
qp_mode = hpn
[run]
sample = 0
INI
J=$("$ARBOR" sim "$TMP/hpn.ini" --json --quiet)
has "hpn completes" "$J" '"completed":true'
expect_err "hpn refuses a shared port" 2 "workload.qp_mode: qp_mode: hpn gives every connection its own source port" \
    "$ARBOR" sim "$TMP/hpn.ini" -s workload.shared_sport=on
J=$("$ARBOR" sim "$TMP/hpn.ini" --json --quiet -s qp_mode=split -s shared_sport=on)
has "shared_sport completes" "$J" '"completed":true'

# arbor.early_credit (docs/protocol.md section 5): an 8 KiB AllReduce on four
# ranks is one channel of one offset; with ranks starting 20 us apart the last
# finds its credit waiting and skips the REGISTER and credit passes, so the
# collective ends sooner, exact either way; off is the default
cct() { sed -n 's/.*"cct_us":\([0-9.]*\).*/\1/p'; }
set -- -s topology=star:4 -s size=8KiB -s mode=values -s arbor.skew=20us --json --quiet
off=$("$ARBOR" sim "$@" -s arbor.early_credit=off)
on=$("$ARBOR" sim "$@" -s arbor.early_credit=on)
dflt=$("$ARBOR" sim "$@")
if echo "$off" | grep -q '"correct":true' && echo "$on" | grep -q '"correct":true' &&
    [ "$(echo "$dflt" | cct)" = "$(echo "$off" | cct)" ] &&
    awk -v a="$(echo "$on" | cct)" -v b="$(echo "$off" | cct)" 'BEGIN { exit !(a > 60 && a < b) }'; then
    pass "arbor.early_credit: a late rank's call ends sooner ($(echo "$on" | cct) us against $(echo "$off" | cct)), exact"
else
    fail "arbor.early_credit" "on $(echo "$on" | cct) off $(echo "$off" | cct) default $(echo "$dflt" | cct)"
fi
finish
