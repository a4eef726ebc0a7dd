# The `arbor wire` command against packets written by hand from docs/wire.md's
# byte table (docs/protocol.md section 4), not produced by the encoder.
. "$(dirname "$0")/lib.sh"

# Every decode --json starts with its schema and the program's version.
H='{"schema":"arbor-wire/1","arbor_version":"'$("$ARBOR" -V | cut -d' ' -f2)'",'

# RESPONSE, SUM, message 7, payload_valid, DATA, credit, depth 1, offset_a
# 0x000102, offset_b 0x000105, agg_loc 12, fanin 31, f32, payload 1.0 2.0.
V1=910792000102000105000c1f000000020000803f00000040
J1=$H'"version":2,"packet_type":"RESPONSE","repair":0,"op":"SUM","message_id":7,"payload_valid":1,"payload_kind":"DATA","credit_valid":1,"ext":0,"agg_depth":1,"aggregated":0,"offset_a":258,"offset_b":261,"agg_loc":[12,0,0],"fanin":[31,0,0],"attempt":0,"dtype":"f32","header_len":16,"payload_len":8}'
expect_out "decode response json" "$J1" "$ARBOR" wire decode --json "$V1"

# DATA_REQUEST, MAX, message 255, 20 B header, depth 3, aggregated,
# offset_a 0xabcdef, offset_b 3, agg_loc 0x1234 1 0xffff, fanin 4 2 1, i64.
V2=8aff8fabcdef000003123404020100050001ffff0100000000000000
J2=$H'"version":2,"packet_type":"DATA_REQUEST","repair":0,"op":"MAX","message_id":255,"payload_valid":1,"payload_kind":"DATA","credit_valid":0,"ext":1,"agg_depth":3,"aggregated":1,"offset_a":11259375,"offset_b":3,"agg_loc":[4660,1,65535],"fanin":[4,2,1],"attempt":0,"dtype":"i64","header_len":20,"payload_len":8}'
expect_out "decode 20 B request json" "$J2" "$ARBOR" wire decode --json "$V2"

# END, message 2, start_seq 16, f16; REGISTER, message 1, f32.
V3=98020000001000000000000000000000
J3=$H'"version":2,"packet_type":"END","repair":0,"op":"NOP","message_id":2,"payload_valid":0,"payload_kind":"DATA","credit_valid":0,"ext":0,"agg_depth":0,"aggregated":0,"offset_a":16,"offset_b":0,"agg_loc":[0,0,0],"fanin":[0,0,0],"attempt":0,"dtype":"f16","header_len":16,"payload_len":0}'
expect_out "decode end json" "$J3" "$ARBOR" wire decode --json "$V3"
V4=84010000000000000000000000000002
expect_out "decode register (text, from stdin, spaced)" "REGISTER (0)" \
    sh -c "echo '84 01 00 00:00:00 000000 0000 000000 00 02' | '$ARBOR' wire decode - | awk '/^packet_type/ {print \$2, \$3}'"

# Text output names every field.
"$ARBOR" wire decode "$V2" >"$TMP/text" 2>&1
missing=""
for f in version packet_type repair op message_id payload_valid payload_kind credit_valid ext \
    agg_depth aggregated offset_a offset_b agg_loc fanin dtype header_len payload_len; do
    grep -q "^$f " "$TMP/text" || missing="$missing $f"
done
if [ -z "$missing" ]; then pass "text output has every field"; else fail "text output" "missing:$missing"; fi

# encode gives the hand-written bytes back; decode(encode(x)) == x.
expect_out "encode response" "$V1" "$ARBOR" wire encode packet_type=RESPONSE op=SUM message_id=7 \
    credit_valid=1 agg_depth=1 offset_a=258 offset_b=261 agg_loc=12 fanin=31 dtype=f32 \
    payload=0000803f00000040
expect_out "encode 20 B request" "$V2" "$ARBOR" wire encode packet_type=DATA_REQUEST op=MAX \
    message_id=255 header_len=20 agg_depth=3 aggregated=1 offset_a=0xabcdef offset_b=3 \
    agg_loc=4660,1,65535 fanin=4,2,1 dtype=i64 payload=0100000000000000
expect_out "encode end" "$V3" "$ARBOR" wire encode packet_type=END message_id=2 offset_a=16 dtype=f16
expect_out "encode register" "$V4" "$ARBOR" wire encode packet_type=REGISTER repair=1 message_id=1 \
    dtype=f32

# Every example decodes, and re-encoding its fields gives the same bytes.
"$ARBOR" wire examples >"$TMP/ex" 2>&1 || fail "examples run"
n=0
bad=""
while read -r name hex _; do
    n=$((n + 1))
    "$ARBOR" wire decode "$hex" >/dev/null 2>&1 || bad="$bad $name"
done <"$TMP/ex"
if [ "$n" -ge 15 ] && [ -z "$bad" ]; then pass "examples decode ($n)"; else fail "examples" "n=$n bad:$bad"; fi

# Frames: encode --frame, decode --frame, checksums verified.
F=$("$ARBOR" wire encode --frame ip_src=10.1.2.3 ip_dst=10.9.8.7 udp_src=1000 packet_type=END \
    message_id=2 offset_a=16 dtype=f16)
expect_out "frame round trip" "$("$ARBOR" wire decode "$V3")" sh -c \
    "'$ARBOR' wire decode --frame $F | grep -Ev '^(eth|ip|udp|ttl|tos)'"
expect_out "frame fields" "10.1.2.3 10.9.8.7 1000 17470" sh -c \
    "'$ARBOR' wire decode --frame $F | awk '/^(ip_src|ip_dst|udp_src|udp_dst) / {printf \"%s%s\", s, \$2; s=\" \"} END {print \"\"}'"
# Flip one bit of the IPv4 header checksum (frame byte 24).
BADF=$(echo "$F" | sed 's/^\(.\{48\}\)\(.\)/\1X/' | sed "s/X/$(echo "$F" | cut -c49 | tr '0-9a-f' '1-9a-f0')/")
expect_err "frame bad ip checksum" 2 "EFRAME_IP_CHECKSUM" "$ARBOR" wire decode --frame "$BADF"

# Malformed packets: status 2, one line naming the rule.
expect_err "short" 2 "EWIRE_SHORT" "$ARBOR" wire decode 9107
expect_err "version 1" 2 "EWIRE_VERSION" "$ARBOR" wire decode 44010000000000000000000000000002
expect_err "type 7" 2 "EWIRE_TYPE" "$ARBOR" wire decode b8010000000000000000000000000002
expect_err "payload_kind 3" 2 "EWIRE_KIND" "$ARBOR" wire decode 9107f2000102000105000c1f00000002
expect_err "register without repair" 2 "EWIRE_REPAIR" "$ARBOR" wire decode 80010000000000000000000000000002
expect_err "depth 2 in 16 B" 2 "EWIRE_DEPTH_EXT" "$ARBOR" wire decode 910794000102000105000c1f00000002
expect_err "dtype 6" 2 "EWIRE_DTYPE" "$ARBOR" wire decode 84010000000000000000000000000006
expect_err "payload cut in an element" 2 "EWIRE_PAYLOAD_ALIGN" "$ARBOR" wire decode 910792000102000105000c1f000000020000803f000000
expect_err "20 B header cut" 2 "EWIRE_SHORT" "$ARBOR" wire decode 8aff8fabcdef000003123404020100050001
expect_err "not hex" 2 "hex digit" "$ARBOR" wire decode 84zz
expect_err "odd digits" 2 "odd number" "$ARBOR" wire decode 840
expect_err "empty stdin" 2 "EWIRE_SHORT" sh -c "printf '' | '$ARBOR' wire decode -"
expect_err "missing argument" 2 "missing HEX" "$ARBOR" wire decode
expect_err "encode unknown key" 2 "unknown key 'colour'" "$ARBOR" wire encode colour=blue
expect_err "encode bad value" 2 "offset_a" "$ARBOR" wire encode offset_a=0x1000000
expect_err "encode invalid packet" 2 "EWIRE_REPAIR" "$ARBOR" wire encode packet_type=REGISTER
expect_err "encode twice" 2 "twice" "$ARBOR" wire encode op=SUM op=MAX
expect_err "unknown command" 2 "unknown command" "$ARBOR" frobnicate
expect_err "unknown subcommand" 2 "unknown subcommand" "$ARBOR" wire frob

# Help and version.
expect_status "help" 0 "$ARBOR" --help
expect_status "wire help" 0 "$ARBOR" wire --help
expect_status "wire decode help" 0 "$ARBOR" wire decode --help
expect_status "help wire" 0 "$ARBOR" help wire
expect_status "version" 0 "$ARBOR" --version
expect_status "no arguments" 2 "$ARBOR"

finish
