# The per-flow table of `arbor sim --csv PREFIX` (PREFIX-flows.csv): the
# 5-tuple and QP, bytes, retransmitted bytes, FCT, and the slowdown against
# the flow's ideal time alone on the fabric (docs/simulator.md).
. "$(dirname "$0")/lib.sh"

HEAD="id,src,dst,bytes,start_us,finish_us,fct_us,src_ip,dst_ip,proto,sport,dport,qp,retx_bytes,ideal_us,slowdown,gave_up_us"

# One 100 KB flow alone on star:2 (100 Gb/s, 1 us links, 4096 B packets with
# 82 B of headers): 25 packets, 102,050 B on the wire; the first packet
# (4178 B, 334.24 ns) is stored and forwarded on two links, the rest streams
# behind it: 2 x (334,240 + 1,000,000) + 97,872 x 80 ps = 10,498,240 ps.
"$ARBOR" sim -s topology=star:2 -s workload.kind=incast -s senders=1 -s receiver=1 \
    -s size=100KB --csv "$TMP/one" --quiet >/dev/null
expect_out "header" "$HEAD" head -1 "$TMP/one-flows.csv"
row=$(sed -n 2p "$TMP/one-flows.csv")
f() { echo "$row" | cut -d, -f"$1"; }
same "5-tuple: addresses, protocol, RoCE port" "10.0.0.0 10.0.0.1 udp 4791" "$(f 8) $(f 9) $(f 10) $(f 12)"
same "bytes, no retransmission" "100000 0" "$(f 4) $(f 14)"
same "ideal time derived" "10.498240" "$(f 15)"
same "alone: FCT is the ideal, slowdown 1" "10.498240 1.000000" "$(f 7) $(f 16)"
same "a finished flow did not give up: gave_up_us empty" "" "$(f 17)"
if echo "$(f 11) $(f 13)" | grep -Eq '^[0-9]+ [0-9]+$'; then pass "sport and qp are numbers"; else
    fail "sport and qp are numbers" "$row"; fi

# Across a spine (leafspine:2,2,1, host 2 to host 1): four links, so two
# more stores of the first packet and two more link delays.
"$ARBOR" sim -s topology=leafspine:2,2,1 -s workload.kind=incast -s senders=1 -s receiver=1 \
    -s size=100KB --csv "$TMP/two" --quiet >/dev/null
row=$(sed -n 2p "$TMP/two-flows.csv")
same "across the spine: ideal 4 x (334,240 + 1,000,000) + 97,872 x 80 ps" "13.166720 1.000000" \
    "$(f 15) $(f 16)"

# Under loss the flows' retransmitted bytes add up to the run's.
"$ARBOR" sim -s topology=star:4 -s workload.kind=incast -s senders=3 -s receiver=0 \
    -s size=200KB -s transport.rto=30us -s loss=0.01 --seed 3 --json --csv "$TMP/loss" \
    --quiet >"$TMP/loss.json"
want=$(grep -o '"retx_bytes":[0-9]*' "$TMP/loss.json" | head -1 | cut -d: -f2)
got=$(awk -F, 'NR > 1 { s += $14 } END { print s }' "$TMP/loss-flows.csv")
same "retx_bytes: the flows' sum is the run's" "$want" "$got"
[ "${want:-0}" -gt 0 ] && pass "the lossy run retransmitted" || fail "the lossy run retransmitted"
awk -F, 'NR > 1 && $16 < 1 { bad = 1 } END { exit bad }' "$TMP/loss-flows.csv" &&
    pass "no flow beats its ideal" || fail "no flow beats its ideal" "$(cat "$TMP/loss-flows.csv")"
finish
