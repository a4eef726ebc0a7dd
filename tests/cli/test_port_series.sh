# Per-port time series (run.sample_ports, PREFIX-ports.csv): a port's
# utilisation samples add up to the bytes it sent.
. "$(dirname "$0")/lib.sh"

# One 100 KB flow from h0 on star:2: h0's NIC sends its 25 data frames,
# 100,000 B of payload and 25 x 82 B of headers = 102,050 B; the switch's
# port to h0 carries the ACKs back, one per packet (transport.ack_every = 1),
# 25 x 86 B = 2,150 B.
"$ARBOR" sim -s topology=star:2 -s workload.kind=incast -s senders=1 -s receiver=1 -s size=100KB \
    -s run.sample=1us -s run.sample_ports=host:h0 --csv "$TMP/p" --quiet >/dev/null
expect_out "header: both directions of h0's link" \
    "time_us,h0:p0->L1.0_util,h0:p0->L1.0_queue,L1.0:p0->h0_util,L1.0:p0->h0_queue" \
    head -1 "$TMP/p-ports.csv"
# bytes = sum of util x interval x 100 Gb/s / 8
bytes() {
    awk -F, -v c="$1" 'NR > 1 { dt = $1 - prev; prev = $1; s += $c * dt }
        END { printf "%.0f\n", s * 1e-6 * 100e9 / 8 }' "$TMP/p-ports.csv"
}
expect_out "h0's NIC: 102,050 B" 102050 bytes 2
expect_out "the switch to h0: 25 ACKs, 2,150 B" 2150 bytes 4
# without the key: a header, and the JSON as before (no run.sample_ports)
"$ARBOR" sim -s topology=star:2 -s size=1MiB --csv "$TMP/q" --json --quiet >"$TMP/q.json"
expect_out "no key: header only" "time_us" cat "$TMP/q-ports.csv"
if grep -q sample_ports "$TMP/q.json"; then fail "no key: not in the JSON"; else
    pass "no key: not in the JSON"; fi
expect_err "a bad link list names the key" 2 "run.sample_ports: 'host:h9': no node h9" \
    "$ARBOR" sim -s topology=star:2 -s run.sample_ports=host:h9
finish
