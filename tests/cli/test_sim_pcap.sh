# arbor sim --pcap PORTS FILE: the capture of chosen links, read back with
# tshark (its RoCEv2 / InfiniBand dissector): addresses, ports, opcodes,
# PSNs and ECN bits, and only the links named. The reading back is skipped
# (exit 77) without tshark.
. "$(dirname "$0")/lib.sh"


cat >"$TMP/ring.ini" <<'INI'
[fabric]
topology = leafspine:2,2,2
[workload]
kind = ring_allreduce
size = 64KiB
[run]
sample = 5us
INI

# Bad port lists and files: exit 2, naming the key.
expect_err "bad port" 2 "^arbor sim: --pcap \\(run.pcap_ports\\): 'up:L1.0:9': the node has 2 such ports" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet --pcap up:L1.0:9 "$TMP/x.pcap"
expect_err "bad port kind" 2 "^arbor sim: --pcap \\(run.pcap_ports\\): 'leaf:L1.0': unknown kind" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet --pcap leaf:L1.0 "$TMP/x.pcap"
expect_err "unknown node" 2 "^arbor sim: --pcap \\(run.pcap_ports\\): 'host:h9': no node h9" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet --pcap host:h9 "$TMP/x.pcap"
expect_err "file not created" 2 "^arbor sim: --pcap \\(run.pcap\\): $TMP/no/such/dir.pcap: cannot create the file$" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet --pcap all "$TMP/no/such/dir.pcap"
expect_err "file not created, as run.pcap" 2 "^arbor sim: -s run.pcap: $TMP/no/such/dir.pcap: cannot create the file$" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet -s run.pcap="$TMP/no/such/dir.pcap"
printf '[run]\npcap = %s\n' "$TMP/no/such/dir.pcap" >"$TMP/nopcap.ini"
expect_err "file not created, from a file" 2 "^arbor sim: $TMP/nopcap.ini:2: run.pcap: $TMP/no/such/dir.pcap: cannot create the file$" \
    "$ARBOR" sim "$TMP/nopcap.ini" --quiet
expect_err "--snaplen named as written" 2 "^arbor sim: --snaplen \\(run.pcap_snaplen\\): 'x' is not a whole number$" \
    "$ARBOR" sim "$TMP/ring.ini" --quiet --pcap all "$TMP/x.pcap" --snaplen x
expect_err "--pcap needs two values" 2 "pcap needs PORTS and FILE" \
    "$ARBOR" sim "$TMP/ring.ini" --pcap all
expect_err "--pcap with an empty FILE is refused, not a run without capture" 2 \
    "^arbor sim: --pcap all: an empty FILE \\(a capture needs one\\)$" \
    "$ARBOR" sim "$TMP/ring.ini" --pcap all ""

# --snaplen N (run.pcap_snaplen): the file's snap length is N, every record
# keeps at most N bytes and its frame's whole length (read without tshark).
"$ARBOR" sim "$TMP/ring.ini" --quiet --pcap host:h0 "$TMP/snap.pcap" --snaplen=64 >/dev/null
if command -v python3 >/dev/null 2>&1; then
    got=$(python3 - "$TMP/snap.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
snap = struct.unpack_from('<I', d, 16)[0]
off, n, cut, over = 24, 0, 0, 0
while off + 16 <= len(d):
    caplen, length = struct.unpack_from('<II', d, off + 8)
    n += 1
    cut += caplen < length
    over += caplen > snap
    off += 16 + caplen
print(snap, n > 0, cut > 0, over)
PY
)
    expect_out "--snaplen 64: snap length, frames cut, none over" "64 True True 0" echo "$got"
else
    skip "--snaplen" "python3 is not installed"
fi
expect_err "--snaplen above 65535" 2 "^arbor sim: --snaplen \\(run.pcap_snaplen\\): '70000' is not in 0..65535" \
    "$ARBOR" sim "$TMP/ring.ini" --snaplen 70000

if ! command -v tshark >/dev/null 2>&1; then
    skip_all "tshark not found (scripts/deps.sh --install installs it): the capture is not read back"
fi
mkdir -p "$TMP/home"
ts() {
    HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config WIRESHARK_CONFIG_DIR=$TMP/home/ws \
        tshark -n "$@" 2>>"$TMP/tshark.err"
}

# Host h0's NIC link: 4 ranks on 4 hosts; rank 0 sends 6 messages of
# 16 KiB (4 packets each: SEND first, middle, middle, last) to h1 and
# receives as many from h3, acking every packet: 6 x 4 = 24 data frames
# each way and an ack for each. A data frame is 4096 B of payload, 14 + 20 +
# 8 B of Ethernet, IPv4 and UDP headers, the 12 B BTH and the 4 B ICRC: 4154 B.
"$ARBOR" sim "$TMP/ring.ini" --quiet --json --pcap host:h0 "$TMP/h0.pcap" >"$TMP/h0.json"
expect_status "capture written" 0 test -s "$TMP/h0.pcap"
F=$(ts -r "$TMP/h0.pcap" -T fields -e ip.src -e ip.dst -e udp.dstport \
    -e infiniband.bth.opcode -e infiniband.bth.psn -e ip.dsfield.ecn -e frame.len)
same "frames: 24 + 24 data, 24 + 24 acks" "96" "$(printf '%s\n' "$F" | wc -l | tr -d ' ')"
same "only h0's link" "" "$(printf '%s\n' "$F" | awk '$1 != "10.0.0.0" && $2 != "10.0.0.0"')"
same "all to UDP 4791" "4791" "$(printf '%s\n' "$F" | cut -f3 | sort -u)"
same "h0's data to h1" "24" "$(printf '%s\n' "$F" | awk '$1 == "10.0.0.0" && $2 == "10.0.0.1" && $7 == 4154' | wc -l | tr -d ' ')"
same "first frame: SEND first, PSN 0, ECT(0)" "10.0.0.0 10.0.0.1 4791 0 0 2 4154" \
    "$(printf '%s\n' "$F" | head -1 | tr '\t' ' ')"
same "opcodes: SEND first/middle/last, Acknowledge" "0 1 17 2" \
    "$(printf '%s\n' "$F" | cut -f4 | sort -u | tr '\n' ' ' | sed 's/ $//')"
same "acks are not ECN-capable" "0" \
    "$(printf '%s\n' "$F" | awk '$4 == 17 { print $6 }' | sort -u)"
same "the AETH says ACK (syndrome 0x1f)" "31" \
    "$(ts -r "$TMP/h0.pcap" -Y 'infiniband.bth.opcode == 17' -T fields -e infiniband.aeth.syndrome | sort -u)"

# One up link of a leaf, and all: every frame of the run.
"$ARBOR" sim "$TMP/ring.ini" --quiet --pcap up:L1.0:1 "$TMP/up.pcap" >/dev/null
N=$(ts -r "$TMP/up.pcap" | wc -l | tr -d ' ')
if [ "$N" -gt 0 ] && [ "$N" -lt 96 ]; then pass "an up link carries part"; else fail "an up link carries part" "$N frames"; fi
same "no tshark malformed frames" "" "$(ts -r "$TMP/up.pcap" -Y '_ws.malformed' | head -1)"
"$ARBOR" sim "$TMP/ring.ini" --quiet --pcap all "$TMP/all.pcap" >/dev/null
"$ARBOR" sim "$TMP/ring.ini" --quiet --pcap all "$TMP/all2.pcap" >/dev/null
expect_status "same capture twice" 0 cmp "$TMP/all.pcap" "$TMP/all2.pcap"

# Arbor frames: a 64 KiB AllReduce on star:4 (8 offsets of 8 KiB, channel c
# of rank c owning 2 of them), captured on h1's link and read back with the
# project's dissector. h1 is channel 1's responder: it registers the other
# three ranks' REGISTERs and sends them credits to the tree's group address.
"$ARBOR" sim -s topology=star:4 -s size=64KiB --quiet --pcap host:h1 "$TMP/arb.pcap" >/dev/null
A=$(ts -X lua_script:contrib/wireshark/arbor.lua -r "$TMP/arb.pcap" -Y arbor -T fields \
    -e ip.src -e ip.dst -e udp.dstport -e arbor.packet_type -e arbor.credit_valid)
if [ -n "$A" ]; then pass "Arbor frames captured"; else fail "Arbor frames captured" "none"; fi
same "all to the channel port 17470" "17470" "$(printf '%s\n' "$A" | cut -f3 | sort -u)"
same "h1 acks three REGISTERs" "3" \
    "$(printf '%s\n' "$A" | awk '$1 == "10.0.0.1" && $4 == 5' | wc -l | tr -d ' ')"
same "h1's credits go to its tree's group address 239.0.1.0" "239.0.1.0" \
    "$(printf '%s\n' "$A" | awk '$1 == "10.0.0.1" && $4 == 2 && $5 == 1 { print $2 }' | sort -u)"
same "the other channels' credits reach h1 from their trees" "239.0.0.0 239.0.2.0 239.0.3.0" \
    "$(printf '%s\n' "$A" | awk '$2 != "10.0.0.1" && $1 != "10.0.0.1" && $4 == 2 { print $2 }' | sort -u | tr '\n' ' ' | sed 's/ $//')"
same "no malformed Arbor frames" "" \
    "$(ts -X lua_script:contrib/wireshark/arbor.lua -r "$TMP/arb.pcap" -Y '_ws.malformed || _ws.expert.severity >= error' | head -1)"

# Every link of an Arbor run on a leaf-spine (--pcap all): source ports are
# 49152 + the subchannel, never 0; each hop's copy has its link's MACs and
# one TTL less per switch crossed (64 at the node that made the frame).
"$ARBOR" sim --quiet -s topology=leafspine:2,2,1 -s size=64KiB --pcap all "$TMP/ls.pcap" >/dev/null
P=$(ts -r "$TMP/ls.pcap" -Y 'udp.dstport == 17470' -T fields -e udp.srcport -e ip.ttl -e eth.src \
    -e eth.dst)
same "Arbor source ports: 49152 + subchannel 0" "49152" "$(printf '%s\n' "$P" | cut -f1 | sort -u)"
# (a REGISTER from a host on one leaf to one on the other crosses three)
same "TTLs: 64 where made, one less per switch, down to 61" "61 62 63 64" \
    "$(printf '%s\n' "$P" | cut -f2 | sort -u | tr '\n' ' ' | sed 's/ $//')"
same "eth.src: 4 hosts, 2 leaves, 1 spine" "7" "$(printf '%s\n' "$P" | cut -f3 | sort -u | wc -l | tr -d ' ')"
same "no frame from a node to itself" "" "$(printf '%s\n' "$P" | awk '$3 == $4' | head -1)"
finish
