# The Wireshark dissector (contrib/wireshark/arbor.lua) under tshark: frames
# built by `arbor wire encode --frame` (and by hand for malformed packets)
# are written to a classic pcap file, and every field tshark prints is
# compared with the value encoded. Skipped (exit 77) when tshark (with Lua) is
# absent.
. "$(dirname "$0")/lib.sh"

LUA=$(cd "$(dirname "$0")/../../contrib/wireshark" && pwd)/arbor.lua

if ! command -v tshark >/dev/null 2>&1; then
    skip_all "tshark not found (scripts/deps.sh --install installs it)"
fi
if ! tshark -v 2>/dev/null | grep -q "with Lua"; then
    skip_all "this tshark is built without Lua"
fi

# A private configuration: the user's preferences, "Decode As" entries and
# personal plugins (perhaps an installed arbor.lua) must not interfere.
mkdir -p "$TMP/home"
ts() {
    HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config WIRESHARK_CONFIG_DIR=$TMP/home/ws \
        tshark -n -X "lua_script:$LUA" "$@" 2>>"$TMP/tshark.err"
}

# hexval HEX: the value of lower-case hex digits (POSIX awk has no strtonum).
AWK_HEX='function hexval(s,  i, v) {
    v = 0
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
}'

# wrap UDP_PAYLOAD_HEX [DST_PORT]: an Ethernet/IPv4/UDP frame around a
# packet the encoder would refuse (10.0.0.1:50000 -> 10.0.0.2:DST_PORT),
# with a correct IPv4 checksum and UDP checksum 0 ("not computed").
wrap() {
    awk -v p="$1" -v port="${2:-17470}" "$AWK_HEX"'
    BEGIN {
        n = length(p) / 2
        ip = sprintf("4500%04x00004000401100000a0000010a000002", 28 + n)
        s = 0
        for (i = 1; i <= 40; i += 4) s += hexval(substr(ip, i, 4))
        while (s > 65535) s = int(s / 65536) + s % 65536
        ip = substr(ip, 1, 20) sprintf("%04x", 65535 - s) substr(ip, 25)
        printf "020000000002020000000001" "0800" "%s%04x%04x%04x0000%s\n", ip, 50000, port, 8 + n, p
    }'
}

# pcap OUT < lines "FRAME_HEX [ORIGINAL_LENGTH]": a classic little-endian
# pcap file (LINKTYPE_ETHERNET); a record whose original length is larger
# than its bytes stands for a frame cut by the snapshot length.
pcap() {
    awk "$AWK_HEX"'
    function le32(v,  i, s) {
        s = ""
        for (i = 0; i < 4; i++) { s = s sprintf("\\%03o", v % 256); v = int(v / 256) }
        return s
    }
    BEGIN { print "\\324\\303\\262\\241\\002\\000\\004\\000" le32(0) le32(0) le32(262144) le32(1) }
    NF {
        n = length($1) / 2
        s = le32(1700000000 + NR) le32(0) le32(n) le32($2 != "" ? $2 : n)
        for (i = 1; i < 2 * n; i += 2) s = s sprintf("\\%03o", hexval(substr($1, i, 2)))
        print s
    }' | while IFS= read -r line; do
        # shellcheck disable=SC2059 # the line is octal escapes only, made for printf
        printf "$line"
    done >"$1"
}

# The header fields in the order of `arbor wire decode`, then the payload.
HDR="-e arbor.version -e arbor.packet_type -e arbor.repair -e arbor.op -e arbor.message_id
 -e arbor.payload_valid -e arbor.payload_kind -e arbor.credit_valid -e arbor.ext
 -e arbor.agg_depth -e arbor.aggregated -e arbor.offset_a -e arbor.offset_b -e arbor.agg_loc0
 -e arbor.agg_loc1 -e arbor.agg_loc2 -e arbor.fanin0 -e arbor.fanin1 -e arbor.fanin2
 -e arbor.attempt -e arbor.dtype -e arbor.header_len -e arbor.payload.len -e arbor.payload.count"

# fields CAPTURE -e ...: one tab-separated line per frame.
fields() {
    f=$1
    shift
    # shellcheck disable=SC2086
    ts -r "$f" -T fields "$@"
}

# expect_lines NAME EXPECTED_FILE GOT_FILE
expect_lines() {
    if cmp -s "$2" "$3"; then
        pass "$1"
    else
        fail "$1" "$(diff "$2" "$3" | head -20)" "tshark stderr: $(grep -v 'Running as user' "$TMP/tshark.err" | head -5)"
    fi
}

tab=$(printf '\t')

# ------------------------------------------------------------------
# Hand-written vectors (those of test_wire.sh, from docs/wire.md's table)
# ------------------------------------------------------------------

# RESPONSE, SUM, message 7, payload, DATA, credit, depth 1, offset_a 258,
# offset_b 261, agg_loc 12, fanin 31, f32, payload 1.0 2.0.
F1=$("$ARBOR" wire encode --frame packet_type=RESPONSE op=SUM message_id=7 credit_valid=1 \
    agg_depth=1 offset_a=258 offset_b=261 agg_loc=12 fanin=31 dtype=f32 payload=0000803f00000040)
# DATA_REQUEST, MAX, message 255, 20 B header, depth 3, aggregated, offset_a
# 0xabcdef, count 3, agg_loc 0x1234 1 0xffff, fanin 4 2 1, i64 payload 1.
F2=$("$ARBOR" wire encode --frame packet_type=DATA_REQUEST op=MAX message_id=255 header_len=20 \
    agg_depth=3 aggregated=1 offset_a=0xabcdef offset_b=3 agg_loc=4660,1,65535 fanin=4,2,1 \
    dtype=i64 payload=0100000000000000)
# END, message 2, start_seq 16, f16 (no payload).
F3=$("$ARBOR" wire encode --frame packet_type=END message_id=2 offset_a=16 dtype=f16)
printf '%s\n%s\n%s\n' "$F1" "$F2" "$F3" | pcap "$TMP/hand.pcap"

# The Info column field is _ws.col.Info up to 4.0 and _ws.col.info later.
COL=_ws.col.Info
[ -n "$(fields "$TMP/hand.pcap" -e $COL | head -1)" ] || COL=_ws.col.info

if [ "$(fields "$TMP/hand.pcap" -e frame.protocols | head -1)" = "eth:ethertype:ip:udp:arbor" ]; then
    pass "the dissector loads and claims UDP port 17470"
else
    fail "dissector loads" "protocols: $(fields "$TMP/hand.pcap" -e frame.protocols | head -1)" \
        "stderr: $(grep -v 'Running as user' "$TMP/tshark.err" | head -5)"
fi

cat >"$TMP/want" <<EOF
2	2	0	1	7	1	0	1	0	1	0	258	261	12			31	0	0	0	2	16	8	2
2	1	0	2	255	1	0	0	1	3	1	11259375	3	4660	1	65535	4	2	1	0	5	20	8	1
2	3	0	0	2	0	0	0	0	0	0	16	0	0			0	0	0	0	0	16		
EOF
# shellcheck disable=SC2086
fields "$TMP/hand.pcap" $HDR >"$TMP/got"
expect_lines "hand-written vectors: every header field" "$TMP/want" "$TMP/got"

cat >"$TMP/want" <<EOF
1,2			0	RESPONSE credit=261 payload@258 depth=1 msg=7 SUM 2xf32
	1		0	DATA_REQUEST offset=11259375 count=3 aggregated depth=3 msg=255 MAX 1xi64
			0	END start_seq=16 msg=2
EOF
fields "$TMP/hand.pcap" -e arbor.payload.f32 -e arbor.payload.i64 -e arbor.payload.f64 \
    -e arbor.attempt -e $COL >"$TMP/got"
expect_lines "hand-written vectors: payload values and Info column" "$TMP/want" "$TMP/got"

# ------------------------------------------------------------------
# Every example of `arbor wire examples`, rebuilt into a frame
# ------------------------------------------------------------------

"$ARBOR" wire examples >"$TMP/ex" 2>&1 || fail "examples run"
: >"$TMP/ex.frames"
: >"$TMP/want"
n=0
bad=""
while read -r name hex _; do
    n=$((n + 1))
    # decode --json gives the keys encode takes; the payload is the rest of the hex.
    keys=$("$ARBOR" wire decode --json "$hex" | sed -e 's/[{}"]//g' \
        -e 's/\[\([0-9]*\),\([0-9]*\),\([0-9]*\)\]/\1;\2;\3/g' \
        -e 's/,/ /g' -e 's/;/,/g' -e 's/:/=/g' -e 's/ payload_len=[0-9]*//')
    hlen=$(echo "$keys" | sed 's/.*header_len=\([0-9]*\).*/\1/')
    payload=$(echo "$hex" | cut -c$((2 * hlen + 1))-)
    # shellcheck disable=SC2086
    frame=$("$ARBOR" wire encode --frame $keys ${payload:+payload=$payload}) || bad="$bad $name"
    [ "$(echo "$frame" | cut -c85-)" = "$hex" ] || bad="$bad $name"
    echo "$frame" >>"$TMP/ex.frames"
    # The values the C decoder prints, in the order of $HDR; agg_loc[1..2]
    # exist only in a 20 B header, the payload fields only with a payload.
    "$ARBOR" wire decode "$hex" | awk -v OFS="$tab" '
        { v = $NF; gsub(/[()]/, "", v); val[$1] = v }
        $1 == "agg_loc" || $1 == "fanin" {
            for (i = 2; i <= 4; i++) { x = $i; gsub(/[][,]/, "", x); val[$1 (i - 2)] = x }
        }
        END {
            if (val["ext"] == 0) val["agg_loc1"] = val["agg_loc2"] = ""
            if (val["payload_len"] == 0) val["payload_len"] = ""
            print val["version"], val["packet_type"], val["repair"], val["op"], val["message_id"],
                val["payload_valid"], val["payload_kind"], val["credit_valid"], val["ext"],
                val["agg_depth"], val["aggregated"], val["offset_a"], val["offset_b"],
                val["agg_loc0"], val["agg_loc1"], val["agg_loc2"], val["fanin0"], val["fanin1"],
                val["fanin2"], val["attempt"], val["dtype"], val["header_len"], val["payload_len"],
                val["elements"]
        }' >>"$TMP/want"
done <"$TMP/ex"
if [ "$n" -ge 15 ] && [ -z "$bad" ]; then
    pass "examples rebuilt into frames by wire encode --frame ($n)"
else
    fail "examples into frames" "n=$n bad:$bad"
fi
pcap "$TMP/ex.pcap" <"$TMP/ex.frames"
# shellcheck disable=SC2086
fields "$TMP/ex.pcap" $HDR >"$TMP/got"
expect_lines "examples: every field equals arbor wire decode ($n packets)" "$TMP/want" "$TMP/got"

cat >"$TMP/want" <<EOF
REGISTER start_seq=0 msg=1
REGISTER_ACK start_seq=0 msg=1
RESPONSE credit=5 depth=1 msg=1 SUM
RESPONSE credit=9 payload@2 depth=1 msg=1 SUM 4xf32
RESPONSE credit=5 payload@2 attempt=1 depth=1 msg=1 SUM 4xf32
DATA_REQUEST offset=5 count=1 depth=1 msg=1 SUM 4xf32
DATA_REQUEST offset=5 count=31 aggregated msg=1 SUM 4xf32
DATA_REQUEST offset=5 count=1 depth=3 msg=1 SUM 8xbf16
RESPONSE tail payload@7 msg=1 SUM 4xf32
RESPONSE credit=8 commit@4 depth=1 msg=1 SUM
AGG_MISS offset=5 msg=1
RESPONSE repair credit=5 replay@2 msg=1 SUM 4xf32
DATA_REQUEST repair offset=5 count=1 msg=1 SUM 4xf32
RESPONSE repair tail replay@7 msg=1 SUM 4xf32
END start_seq=0 msg=1
END_ACK start_seq=0 msg=1
RESPONSE credit=5 seed@5 msg=1 SUM 4xf32
DATA_REQUEST offset=5 count=31 aggregated whole result msg=1 SUM 4xf32
EOF
fields "$TMP/ex.pcap" -e $COL >"$TMP/got"
expect_lines "examples: Info column" "$TMP/want" "$TMP/got"

got=$(fields "$TMP/ex.pcap" -e _ws.expert.message -e _ws.malformed | tr -d '\t\n')
if [ -z "$got" ]; then pass "examples: no expert info"; else fail "examples: expert info" "$got"; fi

# Seeded credits (docs/protocol.md section 5): a credit carrying its own
# offset's input, and a seeded slot's aggregate, the whole result
{
    "$ARBOR" wire encode --frame type=response credit_valid=1 payload_kind=SEED op=sum \
        message_id=1 offset_a=5 offset_b=5 agg_depth=1 dtype=f32 payload=0000803f0000803f
    "$ARBOR" wire encode --frame type=data_request payload_kind=SEED aggregated=1 op=sum \
        message_id=1 offset_a=5 offset_b=3 dtype=f32 payload=0000803f0000803f
} | pcap "$TMP/seed.pcap"
printf 'RESPONSE credit=5 seed@5 depth=1 msg=1 SUM 2xf32\nDATA_REQUEST offset=5 count=3 aggregated whole result msg=1 SUM 2xf32\n' >"$TMP/want"
fields "$TMP/seed.pcap" -e $COL >"$TMP/got"
expect_lines "seeded credit and aggregate: Info column" "$TMP/want" "$TMP/got"
got=$(fields "$TMP/seed.pcap" -e _ws.expert.message -e _ws.malformed | tr -d '\t\n')
if [ -z "$got" ]; then pass "seeded packets: no expert info"; else fail "seeded: expert info" "$got"; fi

# ------------------------------------------------------------------
# Payload values of every dtype (little-endian)
# ------------------------------------------------------------------

resp() { "$ARBOR" wire encode --frame packet_type=RESPONSE credit_valid=1 offset_b=1 "$@"; }
{
    resp dtype=f16 payload=003c00c0ff7b0038      # 1, -2, 65504, 0.5
    resp dtype=bf16 payload=803f20c0             # 1, -2.5
    resp dtype=f32 payload=0000c0bfcdcccc3d      # -1.5, 0.1f
    resp dtype=f64 payload=000000000000f83f000000000000d0bf # 1.5, -0.25
    resp dtype=i32 payload=ffffffffffffff7f      # -1, 2^31 - 1
    resp dtype=i64 payload=feffffffffffffff0100000000002000 # -2, 2^53 + 1
} | pcap "$TMP/values.pcap"
cat >"$TMP/want" <<EOF
1,-2,65504,0.5						4	8
	1,-2.5					2	4
		-1.5,0.1				2	8
			1.5,-0.25			2	16
				-1,2147483647		2	8
					-2,9007199254740993	2	16
EOF
fields "$TMP/values.pcap" -e arbor.payload.f16 -e arbor.payload.bf16 -e arbor.payload.f32 \
    -e arbor.payload.f64 -e arbor.payload.i32 -e arbor.payload.i64 -e arbor.payload.count \
    -e arbor.payload.len >"$TMP/got"
expect_lines "payload values of every dtype" "$TMP/want" "$TMP/got"

# Subnormals: f16 0x0001 is 2^-24, bf16 0x0001 is 2^-133 (compared as
# numbers: how many digits tshark prints differs between versions).
{
    resp dtype=f16 payload=0100
    resp dtype=bf16 payload=0100
} | pcap "$TMP/sub.pcap"
got=$(fields "$TMP/sub.pcap" -e arbor.payload.f16 -e arbor.payload.bf16 | awk -F"$tab" '
    NR == 1 { r = $1 * 2 ^ 24 } NR == 2 { r2 = $2 * 2 ^ 133 }
    END { print (r > 0.9999 && r < 1.0001 && r2 > 0.9999 && r2 < 1.0001) ? "ok" : "f16 " r " bf16 " r2 }')
if [ "$got" = ok ]; then pass "f16 and bf16 subnormals"; else fail "subnormals" "$got"; fi

# A full 8192 B payload: 2048 elements, the first 8 shown (a preference).
Z=$(awk 'BEGIN { while (i++ < 2048) printf "0000803f" }')
resp dtype=f32 payload="$Z" | pcap "$TMP/big.pcap"
expect_out "8192 B payload: 2048 elements, 8 values" "2048${tab}8192${tab}1,1,1,1,1,1,1,1" \
    fields "$TMP/big.pcap" -e arbor.payload.count -e arbor.payload.len -e arbor.payload.f32
expect_out "preference arbor.max_values" "2048${tab}1,1" \
    fields "$TMP/big.pcap" -o arbor.max_values:2 -e arbor.payload.count -e arbor.payload.f32

# A frame cut by the snapshot length: the count comes from the UDP length.
C=$(resp dtype=f32 payload=0000803f000000400000404000008040)
echo "$(echo "$C" | cut -c1-132) $((${#C} / 2))" | pcap "$TMP/cut.pcap"
expect_out "frame cut by the snapshot length" \
    "4${tab}16${tab}1,2${tab}Payload cut by the capture: 8 of 16 bytes captured${tab}" \
    fields "$TMP/cut.pcap" -e arbor.payload.count -e arbor.payload.len -e arbor.payload.f32 \
    -e _ws.expert.message -e _ws.malformed

# ------------------------------------------------------------------
# Port preference and Decode As
# ------------------------------------------------------------------

"$ARBOR" wire encode --frame udp_src=50000 udp_dst=9999 packet_type=END message_id=3 offset_a=9 |
    pcap "$TMP/port.pcap"
expect_out "another port is not Arbor by default" "" fields "$TMP/port.pcap" -e arbor.packet_type
expect_out "preference arbor.udp_port" "3${tab}9" \
    fields "$TMP/port.pcap" -o arbor.udp_port:9999 -e arbor.packet_type -e arbor.offset_a
expect_out "Decode As (-d udp.port==9999,arbor)" "3${tab}9" \
    fields "$TMP/port.pcap" -d udp.port==9999,arbor -e arbor.packet_type -e arbor.offset_a

# Installed as a personal plugin (README), without -X.
mkdir -p "$TMP/home/.local/lib/wireshark/plugins"
cp "$LUA" "$TMP/home/.local/lib/wireshark/plugins/"
expect_out "loads from the personal plugins folder" "2${tab}258" sh -c \
    "HOME='$TMP/home' XDG_CONFIG_HOME='$TMP/home/.config' WIRESHARK_CONFIG_DIR='$TMP/home/ws' \
     tshark -n -r '$TMP/hand.pcap' -T fields -e arbor.packet_type -e arbor.offset_a 2>/dev/null | head -1"
rm -f "$TMP/home/.local/lib/wireshark/plugins/arbor.lua"

# ------------------------------------------------------------------
# Malformed packets: the rule broken as an error of the Malformed group
# ------------------------------------------------------------------

# malformed NAME UDP_PAYLOAD_HEX MESSAGE: the packet gets an expert item
# with MESSAGE, the _ws.malformed marker and "[Malformed]" in Info.
malformed() {
    wrap "$2" | pcap "$TMP/bad.pcap"
    fields "$TMP/bad.pcap" -e _ws.malformed -e _ws.expert.severity -e _ws.expert.message \
        -e $COL >"$TMP/got"
    if grep -q "^_ws.malformed" "$TMP/got" && grep -qF "$3" "$TMP/got" &&
        grep -q "\[Malformed\]\$" "$TMP/got"; then
        pass "malformed: $1"
    else
        fail "malformed: $1" "want: $3" "got:  $(cat "$TMP/got")"
    fi
}
malformed "2 bytes" 9107 "Buffer shorter than the Arbor header (2 of at least 16 bytes)"
malformed "16 B header cut" 910792000102000105000c1f0000 \
    "Buffer shorter than the Arbor header (14 of 16 bytes)"
malformed "20 B header cut" 8aff8fabcdef000003123404020100050001 \
    "Buffer shorter than the Arbor header (18 of 20 bytes)"
malformed "version 1" 44010000000000000000000000000002 "Version is 1, not 2"
malformed "packet_type 7" b8010000000000000000000000000002 "packet_type 7 is invalid"
malformed "a seed of another offset" 9107f2000102000105000c1f000000020000803f \
    "a seed of offset 258 on the credit of offset 261"
malformed "a seed on a request that is no aggregate" 8907e2000102000001000c0300000002 \
    "a SEED request that is no switch's aggregate"
malformed "agg_depth 2 with ext 0" 910794000102000105000c1f00000002 \
    "agg_depth 2 needs the 20 B header (ext = 1)"
malformed "dtype 6" 84010000000000000000000000000006 "dtype 6 is not 0..5"
malformed "payload cut inside an element" 910792000102000105000c1f000000020000803f000000 \
    "Payload of 7 bytes is not a whole number of f32 elements (4 B each)"
malformed "payload_valid without payload" 910792000102000105000c1f00000002 \
    "payload_valid = 1 but no payload follows"
malformed "payload without payload_valid" 9801000000100000000000000000000200000000 \
    "payload_valid = 0 but 4 payload bytes follow"
malformed "payload over 8192 B" \
    "910192000002000009000d1f00000002${Z}00000000" "Payload of 8196 bytes is longer than 8192"
malformed "REGISTER without repair" 80010000000000000000000000000002 \
    "Per-type table forbids REGISTER with repair = 0"
malformed "credit on a request" 890192000005000001000c1f000000020000803f \
    "Per-type table forbids DATA_REQUEST with credit_valid = 1"
malformed "bare RESPONSE tail" 91010000000700000000000000000002 \
    "Per-type table forbids RESPONSE with payload_valid = 0 / payload_kind DATA"
malformed "END with op SUM" 99010000000000000000000000000002 \
    "Per-type table forbids END with op SUM (must be NOP)"
malformed "fan-in 0 below agg_depth" 890182000005000001000c00000000020000803f \
    "fanin[0] is 0 with agg_depth 1"

# Byte 14 is the attempt: shown on a credit, malformed on a REGISTER.
wrap 91091200004200004200071f00000302 | pcap "$TMP/att.pcap"
expect_out "attempt on a credit" \
    "3${tab}${tab}RESPONSE credit=66 attempt=3 depth=1 msg=9 SUM" \
    fields "$TMP/att.pcap" -e arbor.attempt -e _ws.expert.message -e $COL
malformed "attempt on a REGISTER" 84010000000000000000000000000102 \
    "REGISTER with attempt 1 (must be 0)"

finish
