# Real runtime traffic captured on loopback with tshark and dissected with the
# project's dissector (contrib/wireshark/arbor.lua): a switch and three
# ranks run one AllReduce and one Broadcast; every captured datagram must
# dissect without a malformed mark, with the JOINs, WELCOMEs and the Arbor
# packet types the protocol sends. Skipped (exit 77) where tshark (with
# Lua) is absent or cannot capture on the loopback interface.
. "$(dirname "$0")/lib.sh"

LUA=$(cd "$(dirname "$0")/../../contrib/wireshark" && pwd)/arbor.lua
command -v tshark >/dev/null 2>&1 || skip_all "tshark not found (install it with scripts/deps.sh)"
tshark -v 2>/dev/null | grep -q "with Lua" || skip_all "this tshark is built without Lua"
mkdir -p "$TMP/home"
ts() {
    HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config WIRESHARK_CONFIG_DIR=$TMP/home/ws \
        tshark -n -X "lua_script:$LUA" "$@" 2>>"$TMP/tshark.err"
}

# A capture on loopback sees a GSO send as one unsegmented super-datagram:
# plain sends here (--no-gso, ARBOR_GSO=0), one datagram per packet.
# Wireshark tries the dissector of a datagram's lower port first, and the
# ranks' ports are ephemeral (32768 and up here): one that happens to be a
# registered port (TZSP's 37008, say) would win over Arbor. The switch
# listens below the ephemeral range, so its port, Arbor's, is the lower.
lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
SW=
for try in 1 2 3 4 5; do
    P=$((20000 + ($$ * 7 + try * 1031) % (lo > 21000 ? lo - 21000 : 1000)))
    rm -f "$TMP/port"
    "$ARBOR" switch --listen 127.0.0.1:$P --port-file "$TMP/port" --job 3:capture-secret --for 20 \
        --no-gso 2>"$TMP/sw.err" &
    SW=$!
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$TMP/port" ] && break; sleep 0.1; done
    [ -s "$TMP/port" ] && break
    kill $SW 2>/dev/null
    wait $SW 2>/dev/null
done
[ -s "$TMP/port" ] || skip_all "no free port below the ephemeral range for the switch: $(cat "$TMP/sw.err")"
P=$(cat "$TMP/port")

# Capture: can this user open the loopback interface?
: >"$TMP/cap.err"
tshark -i lo -f "udp port $P" -w "$TMP/cap.pcapng" -q >"$TMP/cap.out" 2>"$TMP/cap.err" &
TS=$!
ready=0
for _ in $(seq 1 50); do
    if grep -q "Capturing on" "$TMP/cap.err"; then ready=1; break; fi
    kill -0 $TS 2>/dev/null || break
    sleep 0.1
done
if [ $ready -eq 0 ]; then
    kill $TS $SW 2>/dev/null
    wait 2>/dev/null
    skip_all "tshark cannot capture on lo here: $(grep -v 'Running as user' "$TMP/cap.err" | head -1)"
fi
sleep 0.3
run() {
    "$ARBOR" run -n 3 --no-gso --switch "127.0.0.1:$P" --job 3 --secret capture-secret -- "$ARBOR" bench "$@" \
        >>"$TMP/bench.out" 2>>"$TMP/bench.err"
}
if run allreduce -b 12K -e 12K -n 1 -w 0 -c && run broadcast -b 20K -e 20K -n 1 -w 0 -c -r 1; then
    pass "two collectives through the switch"
else
    fail "collectives" "$(cat "$TMP/bench.err")"
fi
sleep 0.5
kill -INT $TS 2>/dev/null
wait $TS 2>/dev/null
kill $SW 2>/dev/null
wait $SW 2>/dev/null

ts -r "$TMP/cap.pcapng" -o "arbor.udp_port:$P" -T fields -e frame.protocols -e arbor_rt.kind \
    -e arbor.packet_type -e _ws.malformed -e _ws.expert.message >"$TMP/fields"
n=$(grep -c . "$TMP/fields")
if [ "$n" -ge 50 ]; then pass "captured $n datagrams"; else fail "capture" "$n frames" "$(cat "$TMP/cap.err")"; fi
if [ "$(cut -f1 "$TMP/fields" | sort -u)" = "eth:ethertype:ip:udp:arbor" ] ||
    [ "$(cut -f1 "$TMP/fields" | sort -u | grep -cv 'udp:arbor')" -eq 0 ]; then
    pass "every datagram is dissected as Arbor"
else
    fail "protocols" "$(cut -f1 "$TMP/fields" | sort | uniq -c)"
fi
# (Wireshark's UDP layer notes "Possible traceroute" for a datagram to a port
# in 33434-33523 with a low TTL: a rank's ephemeral port can be one; not Arbor's)
bad=$(awk -F'\t' '{ m = $5; gsub(/Possible traceroute: hop #[0-9]+, attempt #[0-9]+,?/, "", m) }
    $4 != "" || m != ""' "$TMP/fields" | head -3)
if [ -z "$bad" ]; then pass "no datagram is malformed"; else fail "malformed datagrams" "$bad"; fi
# two runs of three ranks: six JOINs, six WELCOMEs
joins=$(awk -F'\t' '$2 == 2' "$TMP/fields" | wc -l)
welcomes=$(awk -F'\t' '$2 == 3' "$TMP/fields" | wc -l)
if [ "$joins" -ge 6 ] && [ "$welcomes" -ge 6 ]; then
    pass "JOIN and WELCOME dissected ($joins, $welcomes)"
else
    fail "join" "$joins joins, $welcomes welcomes"
fi
# REGISTER 0, DATA_REQUEST 1, RESPONSE 2, END 3, END_ACK 4, REGISTER_ACK 5
types=$(awk -F'\t' '$2 == 1 { print $3 }' "$TMP/fields" | sort -un | tr '\n' ' ')
if [ "$types" = "0 1 2 3 4 5 " ]; then
    pass "the Arbor packets inside: types $types"
else
    fail "arbor types" "got: $types"
fi
# a request's payload decodes: 12 KiB on 3 ranks is min(3, ceil(12 KiB / 8 KiB))
# = 2 channels (docs/protocol.md section 10) of 6 KiB of f32 each (and bench's
# own one-element f64 AllReduces of its timings)
cnt=$(ts -r "$TMP/cap.pcapng" -o "arbor.udp_port:$P" -Y "arbor.packet_type == 1 && arbor.payload_valid == 1" \
    -T fields -e arbor.payload.count | sort -u | tr '\n' ' ')
if [ "$cnt" = "1 1536 " ]; then pass "AllReduce requests carry 1536 f32 each"; else fail "payload count" "$cnt"; fi
# one-packet AllReduce channels are seeded (docs/protocol.md section 5): each
# credit carries its responder's 1536 f32 (kind SEED, 3; bench's own timing
# AllReduces, one f64 each, too) to the switch, and the
# switch sends each result down itself (a tail, from the switch's source)
seeds=$(ts -r "$TMP/cap.pcapng" -o "arbor.udp_port:$P" \
    -Y "arbor.packet_type == 2 && arbor.credit_valid == 1 && arbor.payload_kind == 3" \
    -T fields -e arbor.payload.count | sort -u | tr '\n' ' ')
if [ "$seeds" = "1 1536 " ]; then pass "seeded credits carry 1536 f32"; else fail "seeds" "$seeds"; fi
nres=$(ts -r "$TMP/cap.pcapng" -o "arbor.udp_port:$P" \
    -Y "arbor.packet_type == 2 && arbor.credit_valid == 0 && arbor_rt.from_switch == 1" \
    -T fields -e arbor.payload.count | grep -c 1536)
if [ "$nres" -ge 4 ]; then pass "the switch sends results down ($nres)"; else fail "results down" "$nres"; fi
has_job=$(ts -r "$TMP/cap.pcapng" -o "arbor.udp_port:$P" -T fields -e arbor_rt.job | sort -u | tr '\n' ' ')
if [ "$has_job" = "3 " ]; then pass "runtime header: job 3"; else fail "job field" "$has_job"; fi

finish
