# The path-skew reproductions as scenarios (docs/results.md): one reroute,
# spraying and flowlets over leafspine:2,1,2 with one uplink 20 us longer
# (fabric.link) and, for the reroute, a timed route (routing.steer); each
# checks the qualitative result through `arbor sim --json`. Also the errors
# of the two keys.
. "$(dirname "$0")/lib.sh"

S=$(cd "$(dirname "$0")/../../scenarios" && pwd)

# jv JSON KEY: the number after "KEY": (the first one).
jv() { printf '%s' "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
check() { if awk "BEGIN { exit !($2) }"; then pass "$1"; else fail "$1" "not: $2"; fi; }
run() { "$ARBOR" sim "$@" --json --quiet; }

# One reroute: go-back-N resends about one BDP (400 Gb/s x 22.4 us =
# 1.12 MB), IRN with a window above the skew nothing, IRN without it what
# the old path carried during the skew.
J=$(run "$S/reroute-gbn.ini")
R=$(jv "$J" retx_bytes)
check "reroute, go-back-N: about one BDP resent ($R B)" "$R > 1000000 && $R < 1300000"
check "reroute, go-back-N: some packets out of order" "$(jv "$J" ooo_pkts) > 0"
J=$(run "$S/reroute-irn.ini")
check "reroute, IRN 25 us window: nothing resent" "$(jv "$J" retx_bytes) == 0"
P=$(jv "$J" reorder_peak_bytes)
check "reroute, IRN: reorder buffer near 20 us x 400G ($P B)" "$P > 900000 && $P < 1050000"
J=$(run "$S/reroute-irn.ini" -s transport.irn_reorder=0)
check "reroute, IRN without window resends the skew's worth" "$(jv "$J" retx_bytes) > 800000"
J=$(run "$S/reroute-gbn.ini" -s "routing.steer=L1.0 src=h0 kind=data up=0; L1.1 src=h1 up=1")
check "no move: nothing resent" "$(jv "$J" retx_bytes) == 0 && $(jv "$J" ooo_pkts) == 0"

# Spraying, 2 MB: go-back-N's goodput collapses, IRN's holds.
J=$(run "$S/spray-gbn.ini" -s workload.size=2MB)
G=$(jv "$J" max)
J=$(run "$S/spray-irn.ini" -s workload.size=2MB)
I=$(jv "$J" max)
check "spray: go-back-N below a tenth of IRN's goodput ($G us against $I us)" "$G > 10 * $I"
check "spray: IRN resends nothing" "$(jv "$J" retx_bytes) == 0"
check "spray: IRN above 200 Gb/s" "2000000 * 8 / ($I * 1000) > 200"

# Flowlets: a gap above the skew reorders nothing, one below it does.
ooo() { jv "$(printf '%s' "$1" | grep -o '"qp_order":{[^}]*}')" ooo_pkts; }
J=$(run "$S/flowlet-ar.ini")
check "flowlet AR, 256 us gap: 0 out of order" "$(ooo "$J") == 0"
J=$(run "$S/flowlet-ar.ini" -s routing.scheme=flowlet:gap=25us)
check "flowlet AR, 25 us gap: 0 out of order" "$(ooo "$J") == 0"
J=$(run "$S/flowlet-ar.ini" -s routing.scheme=flowlet:gap=0.25us)
check "flowlet AR, 0.25 us gap: reordered" "$(ooo "$J") > 0"
J=$(run "$S/flowlet-letflow.ini")
check "LetFlow, 256 us gap: 0 out of order" "$(ooo "$J") == 0"
J=$(run "$S/flowlet-letflow.ini" -s routing.scheme=letflow:gap=5us)
check "LetFlow, 5 us gap: reordered" "$(ooo "$J") > 0"

# Errors name the key.
expect_err "fabric.link: bad link" 2 "fabric.link: 'up:L1.0:7': the node has 2 such ports" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "fabric.link=up:L1.0:7 delay=1us"
expect_err "fabric.link: no setting" 2 "fabric.link: 'up:L1.0:0': no rate=, delay=, loss=, dup= or reorder=" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "fabric.link=up:L1.0:0"
expect_err "fabric.link: bad setting" 2 "fabric.link: 'speed=1G': unknown setting" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "fabric.link=up:L1.0:0 speed=1G"
expect_err "routing.steer: not a switch" 2 "routing.steer: 'h0' is not a switch" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "routing.steer=h0 up=0"
expect_err "routing.steer: no port" 2 "routing.steer: 'L1.0': no up=, down= or port=" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "routing.steer=L1.0 src=h0"
expect_err "routing.steer: bad time" 2 "routing.steer: 'from=soon': not a time" \
    "$ARBOR" sim "$S/spray-gbn.ini" -s "routing.steer=L1.0 from=soon up=0"
finish
