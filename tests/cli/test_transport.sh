# The transport's timers as keys: transport.rto, rto_low, rto_high,
# rto_low_n and tlp; their defaults derived from the fabric and echoed in the
# JSON as the simulator ran them, and bad values refused (exit 2, one line).
. "$(dirname "$0")/lib.sh"

# jstr JSON KEY: the string after "KEY": (the first one).
jstr() { printf '%s' "$1" | grep -o "\"$2\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
# us TEXT: a time the JSON echoes ("18.72896us", "1ms") in microseconds.
us() { awk -v t="$1" 'BEGIN { n = t + 0; if (t ~ /ms$/) n *= 1000; printf "%.6f", n }'; }
# eq NAME A B: the same number to the picosecond.
eq() { if awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; exit !(a != "" && d < 5e-7 && d > -5e-7) }'; then
    pass "$1"; else fail "$1" "want $3, got $2"; fi; }

SMALL="-s workload.kind=perm -s workload.size=64KiB -s run.sample=0 --json"

# The loop of a fabric of h switch levels at the defaults (100 Gb/s, 1 us,
# 4096 + 82 B data, 86 B acks): 2h data hops and 2h ack hops, in us.
loop() { awk -v h="$1" 'BEGIN { printf "%.6f", 2 * h * ((1 + 4178 * 8 / 1e5) + (1 + 86 * 8 / 1e5)) }'; }
# A 2 MiB queue at 100 Gb/s, in us.
QUEUE_US=$(awk 'BEGIN { printf "%.6f", 2097152 * 8 / 1e5 }')

# IRN's defaults: rto_low 4 loops, rto_high rto_low + a full queue at the
# slowest link at each of the longest path's 2h - 1 switch ports, the probe
# on; rto stays auto (the two timers are in force).
j=$("$ARBOR" sim -s topology=star:4 -s transport.kind=irn $SMALL)
L1=$(loop 1)
eq "irn star: rto_low = 4 loops" "$(us "$(jstr "$j" rto_low)")" "$(awk -v l="$L1" 'BEGIN { printf "%.6f", 4 * l }')"
eq "irn star: rto_high = rto_low + a queue" "$(us "$(jstr "$j" rto_high)")" \
    "$(awk -v l="$L1" -v q="$QUEUE_US" 'BEGIN { printf "%.6f", 4 * l + q }')"
same "irn: rto stays auto" "auto" "$(jstr "$j" rto)"
same "irn: rto_low_n 3" "3" "$(jstr "$j" rto_low_n)"
same "irn: probes on" "on" "$(jstr "$j" tlp)"
# Two switch levels: twice the loop, three switch ports out; a queue of 8
# packets in place of 2 MiB.
j=$("$ARBOR" sim -s topology=leafspine:2,2,2 -s transport.kind=irn $SMALL)
L2=$(loop 2)
eq "irn leafspine: rto_low = 4 loops of 4 hops" "$(us "$(jstr "$j" rto_low)")" \
    "$(awk -v l="$L2" 'BEGIN { printf "%.6f", 4 * l }')"
eq "irn leafspine: rto_high = rto_low + 3 queues" "$(us "$(jstr "$j" rto_high)")" \
    "$(awk -v l="$L2" -v q="$QUEUE_US" 'BEGIN { printf "%.6f", 4 * l + 3 * q }')"
j=$("$ARBOR" sim -s topology=leafspine:2,2,2 -s transport.kind=irn -s switch.queue=33424 $SMALL)
eq "irn queue of 8 packets: rto_high = rto_low + 3 x 8 packets" "$(us "$(jstr "$j" rto_high)")" \
    "$(awk -v l="$L2" 'BEGIN { printf "%.6f", 4 * l + 3 * 8 * 4178 * 8 / 1e5 }')"
# An explicit rto is IRN's one fixed timeout.
j=$("$ARBOR" sim -s topology=star:4 -s transport.kind=irn -s transport.rto=30us $SMALL)
same "irn rto=30us: rto_low" "30us" "$(jstr "$j" rto_low)"
same "irn rto=30us: rto_high" "30us" "$(jstr "$j" rto_high)"
# Go-back-N: rto 1 ms, no probe, IRN's timers not echoed.
j=$("$ARBOR" sim -s topology=star:4 $SMALL)
same "gbn: rto 1ms" "1ms" "$(jstr "$j" rto)"
same "gbn: probes off" "off" "$(jstr "$j" tlp)"
same "gbn: no rto_low echoed" "" "$(jstr "$j" rto_low)"
j=$("$ARBOR" sim -s topology=star:4 -s transport.tlp=on $SMALL)
same "gbn tlp=on: on" "on" "$(jstr "$j" tlp)"

# Probes act and are counted: a ring under loss over IRN probes, with
# tlp=off it does not, and the text summary names them.
RING="-s topology=star:8 -s workload.kind=ring_allreduce -s size=1MiB -s transport.kind=irn
      -s fabric.loss=0.01 -s run.stop=0 -s run.sample=0"
p_on=$("$ARBOR" sim $RING --json | grep -o '"tlp_probes":[0-9]*' | cut -d: -f2)
p_off=$("$ARBOR" sim $RING -s transport.tlp=off --json | grep -o '"tlp_probes":[0-9]*' | cut -d: -f2)
if [ "${p_on:-0}" -gt 0 ]; then pass "irn under loss probes ($p_on)"; else fail "irn under loss probes" "tlp_probes '$p_on'"; fi
same "tlp=off: no probe" "0" "$p_off"
"$ARBOR" sim $RING >"$TMP/text" 2>&1
if grep -q "timeouts, $p_on tail-loss probes, " "$TMP/text"; then pass "the summary counts the probes"; else
    fail "the summary counts the probes" "$(grep losses "$TMP/text")"; fi

# Nothing is lost, so nothing times out: an IRN flow of window 15 behind the
# megabyte Arbor keeps queued at the port it shares (scenarios/arbor-cc-irn.ini:
# about 100 us of queue, five times rto_low) waits for its acks, and a probe
# goes only after twice its smoothed round trip of silence.
# (The run's own counters: "drops" before "drop_bytes", "timeouts" before
# "tlp_probes"; the Arbor section has counters of the same names.)
j=$("$ARBOR" sim scenarios/arbor-cc-irn.ini -s workload.size=16MiB -s run.sample=0 --json)
same "a lossless IRN run behind a deep queue: no drop" "0" \
    "$(printf '%s' "$j" | grep -o '"drops":[0-9]*,"drop_bytes"' | cut -d: -f2 | cut -d, -f1)"
same "... and no timeout" "0" \
    "$(printf '%s' "$j" | grep -o '"timeouts":[0-9]*,"tlp_probes"' | cut -d: -f2 | cut -d, -f1)"

# Bad values: one line, exit 2, naming the key.
expect_err "rto_low not a time" 2 "^arbor sim: -s transport.rto_low: 'x' is not a time \\(a number with ps, ns, us, ms or s, or auto\\)$" \
    "$ARBOR" sim -s transport.kind=irn -s transport.rto_low=x
expect_err "rto_high of 0" 2 "^arbor sim: -s transport.rto_high: '0': must be above 0$" \
    "$ARBOR" sim -s transport.kind=irn -s transport.rto_high=0
expect_err "rto_low_n not a number" 2 "^arbor sim: -s transport.rto_low_n: '-1' is not a whole number$" \
    "$ARBOR" sim -s transport.kind=irn -s transport.rto_low_n=-1
expect_err "tlp not a choice" 2 "^arbor sim: -s transport.tlp: 'maybe' is not one of auto\\|on\\|off$" \
    "$ARBOR" sim -s transport.tlp=maybe
for k in rto_low=10us rto_high=10us rto_low_n=2; do
    expect_err "gbn refuses transport.${k%%=*}" 2 \
        "^arbor sim: -s transport.${k%%=*}: IRN's timers; go-back-N has one, transport.rto$" \
        "$ARBOR" sim -s topology=star:4 -s transport.$k
done
expect_err "rto with rto_high" 2 \
    "^arbor sim: -s transport.rto_high: transport.rto is set, which makes IRN's timeout one fixed value; set rto_low and rto_high, or rto$" \
    "$ARBOR" sim -s topology=star:4 -s transport.kind=irn -s transport.rto=30us -s transport.rto_high=100us
expect_err "rto_low above rto_high" 2 \
    "^arbor sim: -s transport.rto_low: above transport.rto_high \\(100us\\)$" \
    "$ARBOR" sim -s topology=star:4 -s transport.kind=irn -s transport.rto_low=200us -s transport.rto_high=100us

finish
