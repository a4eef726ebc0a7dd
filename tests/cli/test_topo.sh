# The `arbor topo` command against hand-counted fabrics (docs/topology.md).
. "$(dirname "$0")/lib.sh"

# field NAME < TEXT: the value of a "NAME  value" line of describe's text output.
field() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }'; }
# row KEY N < TEXT: the line starting with N in the table whose header starts with KEY,
# blanks squeezed.
row() {
    awk -v k="$1" -v n="$2" '$1 == k { t = 1; next } /^$/ { t = 0 } t && $1 == n { print; exit }' |
        tr -s ' '
}
# same NAME WANT GOT: a check on text already captured.
same() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $2" "got:  $3"; fi
}
# describe ARGS...: run describe into $TMP/d (status must be 0).
describe() {
    "$ARBOR" topo describe "$@" >"$TMP/d" 2>"$TMP/e" || fail "describe $*" "$(cat "$TMP/e")"
}

# PGFT(3; 4,4,8; 1,4,4; 1,1,1): 128 hosts, 32 leaves, 32 middle, 16 tops;
# 128 links per tier, 768 directed ports.
describe 'pgft:3;4,4,8;1,4,4;1,1,1'
same "pgft 128 hosts" 128 "$(field hosts <"$TMP/d")"
same "pgft 128 switches" 80 "$(field switches <"$TMP/d")"
same "pgft 128 links" 384 "$(field links <"$TMP/d")"
same "pgft 128 ports" 768 "$(field ports <"$TMP/d")"
same "pgft 128 level 0" "0 host 128 0 1 128 0" "$(row level 0 <"$TMP/d")"
same "pgft 128 level 1" "1 leaf 32 4 4 256 0" "$(row level 1 <"$TMP/d")"
same "pgft 128 level 2" "2 L2 32 4 4 256 0" "$(row level 2 <"$TMP/d")"
same "pgft 128 level 3" "3 top 16 8 0 128 0" "$(row level 3 <"$TMP/d")"
same "pgft 128 tier 2" "2 L2-top 128 1 100G 0" "$(row tier 2 <"$TMP/d")"
same "pgft 128 shape" rlft "$(field shape <"$TMP/d")"
same "pgft canonical form" "PGFT(3; 4,4,8; 1,4,4; 1,1,1)" "$(field pgft <"$TMP/d")"

# leafspine:4,4,2,200G: 16 hosts, 4 leaves of 4 down + 2 up, 2 spines; slimmed 2:1 in
# ports, 1:1 in capacity with 200G uplinks.
describe leafspine:4,4,2,200G
same "leafspine tier 0" "0 host-leaf 16 1 100G 0" "$(row tier 0 <"$TMP/d")"
same "leafspine tier 1" "1 leaf-spine 8 1 200G 0" "$(row tier 1 <"$TMP/d")"
same "leafspine ratio" "1 4 2 2:1 1.00" "$(awk '/ratio/ {t = 1; next} t && $1 == 1 {print; exit}' "$TMP/d" | tr -s ' ')"
same "leafspine shape" slimmed "$(field shape <"$TMP/d")"
describe leafspine:4,4,2 --rate 10G --up-rate 25G
same "rate options" "1 leaf-spine 8 1 25G 0" "$(row tier 1 <"$TMP/d")"

# JSON: dual-plane 2 pairs of 3 hosts, 2 aggregation switches per plane:
# 6 hosts of 2 ports, 4 ToRs, 4 aggs, 12 + 8 links.
J=$("$ARBOR" topo describe dualplane:2,3,2 --json)
ok=1
for kv in '"hosts":6' '"switches":8' '"links":20' '"ports":40' \
    '"class":"host-tor","links":12' '"class":"tor-agg","links":8' '"up_ports":2,"ports":12'; do
    case $J in *"$kv"*) ;; *) ok=0 missing=$kv ;; esac
done
if [ $ok -eq 1 ]; then pass "describe --json dualplane"; else fail "describe --json" "missing $missing" "$J"; fi

# rail:2,3,4,2: 24 GPUs, 8 rail switches, 2 spines, 24 + 16 links.
describe rail:2,3,4,2
same "rail counts" "24 10 40" "$(field hosts <"$TMP/d") $(field switches <"$TMP/d") $(field links <"$TMP/d")"

# Failures: a spine of kary:2,2 takes its 2 links; a named link and a port.
describe kary:2,2 --fail switch:L2.0
same "fail switch" "2 links, 1 switch" "$(field failed <"$TMP/d")"
describe kary:2,2 --fail link:h0-L1.0,up:L1.1:1 --fail down:L2.0:0
same "fail list and repeat" "3 links, 0 switches" "$(field failed <"$TMP/d")"
# Items separated by commas, blanks or both, as the scenario keys take them.
for l in "link:h0-L1.0, up:L1.1:1" "link:h0-L1.0 up:L1.1:1" "link:h0-L1.0 ,up:L1.1:1,"; do
    describe kary:2,2 --fail "$l"
    same "fail list '$l'" "2 links, 0 switches" "$(field failed <"$TMP/d")"
done
expect_err "fail list with ';'" 2 \
    "^arbor topo describe: fail: 'link:h0-L1.0;up:L1.1:1': items are separated by commas or blanks, not ';'$" \
    "$ARBOR" topo describe kary:2,2 --fail "link:h0-L1.0;up:L1.1:1"
expect_out "fail json" '"failed":{"links":1,"switches":0}' sh -c \
    "'$ARBOR' topo describe 'pgft:2;4,4;1,2;1,2' --fail link:L1.0-L2.1/1 --json | grep -o '\"failed\":{[^}]*}'"

# ports: leafspine:4,2,2 leaf 1 holds h2, h3 and reaches spine u at its down port 1.
expect_out "ports of L1.1" "0 down 0 0 h2 up 0 100G 1us no
1 down 1 0 h3 up 0 100G 1us yes
2 up 0 0 L2.0 down 1 100G 1us no
3 up 1 0 L2.1 down 1 100G 1us no" sh -c \
    "'$ARBOR' topo ports leafspine:4,2,2 L1.1 --fail link:h3-L1.1 | tail -n +2 | tr -s ' '"
expect_out "ports parallel" "6 up 2 1 L2.0 down 5 100G 500ns no" sh -c \
    "'$ARBOR' topo ports 'pgft:2;4,4;1,2;1,2' L1.1 --delay 500ns | awk 'NR == 8' | tr -s ' '"

# dot: an undirected graph with one edge per link.
expect_out "dot header" "graph \"star:3\" {" sh -c "'$ARBOR' topo dot star:3 | head -1"
expect_out "dot edges" "3" sh -c "'$ARBOR' topo dot star:3 | grep -c -- ' -- '"
expect_out "dot kary:2,3 edges" "24" sh -c "'$ARBOR' topo dot kary:2,3 | grep -c -- ' -- '"
expect_out "dot failed edge" "1" sh -c "'$ARBOR' topo dot kary:2,2 --fail link:h0-L1.0 | grep -c dashed"
expect_err "dot too large" 2 "704 nodes.*--force" "$ARBOR" topo dot kary:8,3
expect_out "dot --force" "512" sh -c "'$ARBOR' topo dot kary:8,3 --force | grep -c -- '\"h[0-9]*\" -- '"

# Bad specs and options: status 2, one line naming the field.
expect_err "unknown kind" 2 "unknown topology 'torus'" "$ARBOR" topo describe torus:4
expect_err "star zero" 2 "star: N is 0" "$ARBOR" topo describe star:0
expect_err "leafspine count" 2 "leafspine: expected LEAVES,DOWN,UP" "$ARBOR" topo describe leafspine:4,2
expect_err "leafspine field" 2 "DOWN 'x'" "$ARBOR" topo describe leafspine:4,x,2
expect_err "leafspine uprate" 2 "UPRATE 'fast'" "$ARBOR" topo describe leafspine:4,2,2,fast
expect_err "kary zero" 2 "kary: K is 0" "$ARBOR" topo describe kary:0,3
expect_err "pgft list" 2 "pgft: m list has 2 values, H is 3" "$ARBOR" topo describe 'pgft:3;4,4;1,4,4;1,1,1'
expect_err "pgft w zero" 2 "pgft: w_2 is 0" "$ARBOR" topo describe 'pgft:2;4,4;1,0;1,1'
expect_err "pgft too many hosts" 2 "hosts" "$ARBOR" topo describe 'pgft:2;65536,65536;1,1;1,1'
expect_err "dualplane pods" 2 "CORES" "$ARBOR" topo describe dualplane:2,3,2,2
expect_err "rail count" 2 "GROUPS,SERVERS,RAILS,SPINES" "$ARBOR" topo describe rail:1,2
expect_err "fail unknown node" 2 "no node L9.0" "$ARBOR" topo describe kary:2,2 --fail switch:L9.0
expect_err "fail syntax" 2 "frob" "$ARBOR" topo describe kary:2,2 --fail frob:L1.0
expect_err "fail not linked" 2 "not linked" "$ARBOR" topo describe kary:2,2 --fail link:h0-L2.0
expect_err "bad rate" 2 "rate: 'fast'" "$ARBOR" topo describe star:2 --rate fast
expect_err "bad delay" 2 "delay: '10'" "$ARBOR" topo describe star:2 --delay 10
expect_err "missing spec" 2 "missing SPEC" "$ARBOR" topo describe
expect_err "missing value" 2 "fail needs a value" "$ARBOR" topo describe star:2 --fail
expect_err "unknown option" 2 "unknown option '--colour'" "$ARBOR" topo describe star:2 --colour
expect_err "extra argument" 2 "unexpected argument" "$ARBOR" topo describe star:2 star:3
expect_err "ports unknown node" 2 "no node L3.0" "$ARBOR" topo ports kary:2,2 L3.0
expect_err "ports bad name" 2 "not a node name" "$ARBOR" topo ports kary:2,2 leaf0
expect_err "unknown subcommand" 2 "unknown subcommand 'draw'" "$ARBOR" topo draw star:2
expect_status "topo help" 0 "$ARBOR" topo --help
expect_status "help topo" 0 "$ARBOR" help topo
expect_status "describe help" 0 "$ARBOR" topo describe --help
expect_status "no subcommand" 2 "$ARBOR" topo

finish
