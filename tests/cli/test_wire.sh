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

# Every example's name is encode's input: `encode NAME` is its bytes, and
# its decode --json fields (with its payload bytes) encode to them again.
# keys JSON: decode --json's fields as KEY=VALUE words, arrays as a,b,c,
# payload_len left out (the payload is given as bytes).
keys() {
    printf '%s\n' "$1" | tr -d '{}"' | sed 's/\[\([0-9]*\),\([0-9]*\),\([0-9]*\)\]/\1;\2;\3/g' |
        tr ',' '\n' | sed 's/:/=/; s/;/,/g' | grep -v '^payload_len='
}
n=0
bad=""
while read -r name hex _; do
    n=$((n + 1))
    [ "$("$ARBOR" wire encode "$name" 2>&1)" = "$hex" ] || bad="$bad $name(by-name)"
    json=$("$ARBOR" wire decode --json "$hex")
    hlen=$(printf '%s' "$json" | grep -o '"header_len":[0-9]*' | cut -d: -f2)
    payload=$(printf '%s' "$hex" | cut -c$((hlen * 2 + 1))-)
    # shellcheck disable=SC2046 # one word per key
    again=$("$ARBOR" wire encode $(keys "$json") ${payload:+payload=$payload} 2>&1)
    [ "$again" = "$hex" ] || bad="$bad $name(by-keys:$again)"
    [ "$("$ARBOR" wire decode --json "$again" 2>&1)" = "$json" ] || bad="$bad $name(decode)"
done <"$TMP/ex"
if [ "$n" -ge 15 ] && [ -z "$bad" ]; then
    pass "every example: encode NAME, and encode of its decoded keys, give its bytes ($n)"
else
    fail "examples round trip" "n=$n bad:$bad"
fi
# decode --json has payload_len, not the bytes: its keys alone encode the
# header and as many zero bytes (docs/wire.md section 7)
hex=$(awk '$1 == "request" { print $2 }' "$TMP/ex")
json=$("$ARBOR" wire decode --json "$hex")
# shellcheck disable=SC2046 # one word per key
zeroed=$("$ARBOR" wire encode $(keys "$json") \
    "$(printf '%s' "$json" | grep -o '"payload_len":[0-9]*' | tr -d '"' | tr : =)" 2>&1)
want=$(printf '%s' "$hex" | cut -c1-32)$(printf '%s' "$hex" | cut -c33- | tr '0-9a-f' '0')
same "encode of decode's keys with payload_len: the header, the payload zeroed" "$want" "$zeroed"
# an example with keys over it: the keys kept, the rest adjusted to stay valid
expect_out "encode credit_result offset_b=3: the example, offset_b 3" \
    "$(sed -n 's/^credit_result *\([0-9a-f]\{12\}\)[0-9a-f]\{6\}\([0-9a-f]*\) .*/\1000003\2/p' "$TMP/ex")" \
    "$ARBOR" wire encode credit_result offset_b=3

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
expect_err "payload_kind 3 (SEED) naming another offset" 2 "EWIRE_PAYLOAD_FLAG" "$ARBOR" wire decode 9107f2000102000105000c1f00000002
expect_out "decode a seeded credit" "SEED (3)" \
    sh -c "'$ARBOR' wire decode 9107f2000105000105000c1f000000020000803f | awk '/^payload_kind/ {print \$2, \$3}'"
expect_err "register without repair" 2 "EWIRE_REPAIR" "$ARBOR" wire decode 80010000000000000000000000000002
expect_err "depth 2 in 16 B" 2 "EWIRE_DEPTH_EXT" "$ARBOR" wire decode 910794000102000105000c1f00000002
expect_err "dtype 6" 2 "EWIRE_DTYPE" "$ARBOR" wire decode 84010000000000000000000000000006
expect_err "payload cut in an element" 2 "EWIRE_PAYLOAD_ALIGN" "$ARBOR" wire decode 910792000102000105000c1f000000020000803f000000
expect_err "20 B header cut" 2 "EWIRE_SHORT" "$ARBOR" wire decode 8aff8fabcdef000003123404020100050001
expect_err "not hex" 2 "hex digit" "$ARBOR" wire decode 84zz
expect_err "odd digits" 2 "odd number" "$ARBOR" wire decode 840
expect_err "empty stdin" 2 "EWIRE_SHORT" sh -c "printf '' | '$ARBOR' wire decode -"
expect_err "missing argument" 2 "missing HEX" "$ARBOR" wire decode
expect_err "encode -: refused, saying it reads no stdin" 2 \
    "^arbor wire encode: '-': encode reads no stdin; give KEY=VALUE \\.\\.\\. \\(or an example's name first\\) as arguments\$" \
    "$ARBOR" wire encode -
expect_err "  ... after keys too" 2 "^arbor wire encode: '-': encode reads no stdin" \
    "$ARBOR" wire encode type=end -
expect_err "encode unknown key" 2 "unknown key 'colour'" "$ARBOR" wire encode colour=blue
expect_err "encode bad value" 2 "offset_a" "$ARBOR" wire encode offset_a=0x1000000
expect_err "encode: a given field the type refuses, named with what it needs" 2 \
    "^arbor wire encode: repair=0: a REGISTER needs repair=1 \(EWIRE_REPAIR\)\$" \
    "$ARBOR" wire encode packet_type=REGISTER repair=0
expect_err "encode: offset_b=0 on a request" 2 \
    "^arbor wire encode: offset_b=0: a DATA_REQUEST needs offset_b=1 \(EWIRE_OFFSET_B\)\$" \
    "$ARBOR" wire encode packet_type=DATA_REQUEST offset_b=0
expect_err "encode: two given fields that conflict, each way out" 2 \
    "^arbor wire encode: repair=1 with offset_b=5: a DATA_REQUEST needs offset_b=1, or repair=0 \(EWIRE_OFFSET_B\)\$" \
    "$ARBOR" wire encode type=data_request repair=1 offset_b=5
expect_err "encode: a payload on a control packet" 2 \
    "^arbor wire encode: payload_len=4: a REGISTER needs no payload \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire encode type=register payload_len=4
expect_err "encode: op on a control packet" 2 "^arbor wire encode: op=SUM: an END needs op=NOP \(EWIRE_OP\)\$" \
    "$ARBOR" wire encode type=end op=sum
expect_err "encode: the field to add" 2 \
    "^arbor wire encode: a RESPONSE with payload_kind=REPLAY, repair=1, credit_valid=0 needs a payload \(payload=HEX or payload_len=N\) \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire encode type=response payload_kind=REPLAY repair=1 credit_valid=0
expect_out "encode: a seeded credit (its own offset's input)" "9000f0000005000005000000000000000000803f" \
    "$ARBOR" wire encode type=response payload_kind=SEED offset_a=5 offset_b=5 payload=0000803f
expect_err "encode: a seed of another offset, named" 2 \
    "^arbor wire encode: payload_kind=SEED: a credit's seed is the input to its own offset, so offset_a=4 must equal offset_b=5 \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire encode type=response payload_kind=SEED offset_a=4 offset_b=5 payload=0000803f
expect_err "encode: the tail example with a seed: a tail carries none" 2 \
    "^arbor wire encode: payload_kind=SEED: a tail \(credit_valid=0\) carries no seed, and a credit's seed is the input to its own offset, so offset_a=7 must equal offset_b=0 \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire encode tail payload_kind=seed
expect_err "decode: a seed on a request that is no aggregate, named" 2 \
    "a request carries a seed only as a switch's aggregate \(aggregated 1, repair 0\) \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire decode 8901e2000005000001000c1f000000020000803f
expect_err "encode: a seed on a request, the rule named" 2 \
    "^arbor wire encode: payload_kind=SEED: a request carries a seed only as a switch's aggregate \(aggregated=1, repair=0\) \(EWIRE_PAYLOAD_FLAG\)\$" \
    "$ARBOR" wire encode type=data_request payload_kind=seed payload_len=4
expect_err "encode: a seed on a repair credit, the rule named" 2 \
    "only a normal credit \(credit_valid=1, repair=0\) carries a seed" \
    "$ARBOR" wire encode repair_credit payload_kind=seed offset_a=5
expect_err "encode: agg_depth 2 on the 16 B header" 2 \
    "^arbor wire encode: agg_depth=2: needs the 20 B header, header_len=20 \(or ext=1\)" \
    "$ARBOR" wire encode type=data_request agg_depth=2
expect_err "encode: payload_valid=1 without a payload" 2 \
    "^arbor wire encode: payload_valid=1 and no payload: add payload=HEX or payload_len=N" \
    "$ARBOR" wire encode type=data_request payload_valid=1
expect_err "encode: an unknown packet type lists the names" 2 \
    "^arbor wire encode: packet_type: 'bogus' is not REGISTER, DATA_REQUEST, RESPONSE, END, END_ACK, REGISTER_ACK, AGG_MISS \(any case\) or 0\.\.7\$" \
    "$ARBOR" wire encode packet_type=bogus
expect_err "encode: an example's name as packet_type points at the example" 2 \
    "packet_type: 'request' is not REGISTER, .* or 0\.\.7; 'request' is an example: arbor wire encode request" \
    "$ARBOR" wire encode packet_type=request
expect_err "encode: an unknown operand lists the examples" 2 \
    "^arbor wire encode: expected KEY=VALUE or an example's name \(register, register_ack, credit, .*\), got 'bogus'\$" \
    "$ARBOR" wire encode bogus

# encode starts from a valid header of the type. Bytes from section 1's
# layout: byte 0 = version << 6 | type << 3 | repair << 2 | op, message_id,
# byte 2 the flags (credit_valid << 4 | ext << 3 | agg_depth << 1), offset_a
# (3), offset_b (3), agg_loc[0] (2), fanin (3), attempt, dtype; with ext,
# agg_loc[1], agg_loc[2] (2 each).
b0() { printf '%02x' $((2 << 6 | $1 << 3)); }
expect_out "encode type=register: repair=1 (REGISTER's only row)" "$V4" \
    "$ARBOR" wire encode type=register message_id=1 dtype=f32
expect_out "encode type=data_request: offset_b=1 (a request's contributions)" \
    "$(b0 1)00""00""000000""000001""0000""000000""00""00" "$ARBOR" wire encode type=data_request
expect_out "encode type=response: a credit" \
    "$(b0 2)00""10""000000""000000""0000""000000""00""00" "$ARBOR" wire encode type=response
expect_out "encode type=data_request agg_depth=2 header_len=20: fan-in 1 below the depth" \
    "$(b0 1)00$(printf '%02x' $((1 << 3 | 2 << 1)))000000""000001""0000""010100""00""00""0000""0000" \
    "$ARBOR" wire encode type=data_request agg_depth=2 header_len=20
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
