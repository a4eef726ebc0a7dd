# The `arbor route` command: exact D-mod-k loads, the figures of fabric.md
# section 6, failures, files and errors (docs/routing.md).
. "$(dirname "$0")/lib.sh"

# jget KEY < JSON: the number after "KEY": (first match).
jget() { grep -o "\"$1\":[-0-9.e+]*" | head -1 | cut -d: -f2; }
# near NAME WANT GOT TOL: |GOT - WANT| <= TOL.
near() {
    if awk -v w="$2" -v g="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; then
        pass "$1"
    else
        fail "$1" "want $2 +- $4" "got  $3"
    fi
}
same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $2" "got:  $3"; fi; }
route() { "$ARBOR" route "$@" --json 2>"$TMP/e" || echo "{\"status\":$?}"; }

# D-mod-k: one flow per link for every shift on RLFTs, parallel links at two levels.
for spec in 'pgft:2;4,4;1,2;1,2' 'pgft:3;4,2,2;1,2,2;1,2,2' 'pgft:3;4,4,8;1,4,4;1,1,1' kary:4,3; do
    J=$(route --topo "$spec" --routing dmodk --traffic shift:all)
    same "dmodk shift:all $spec" "1 1 0" "$(echo "$J" | jget max_link_load) $(echo "$J" | jget max_link_demand) $(echo "$J" | jget unroutable)"
done
# The slimmed tree: the contention is reported.
J=$(route --topo 'pgft:2;4,4;1,2;1,1' --routing dmodk --traffic shift:all)
same "slimmed contention" "2 2" "$(echo "$J" | jget max_link_load) $(echo "$J" | grep -o '"fabric":{[^}]*}' | jget max_link_load)"
J=$(route --topo leafspine:4,4,2 --routing dmodk --traffic shift:4)
same "slimmed leaf-spine shift:4" 2 "$(echo "$J" | jget max_link_load)"

# Balls in bins: closed form and Monte Carlo.
for row in "4 0.667 1.35 0.03" "8 0.121 2.1 0.05" "16 1.1e-06 3.1 0.06" "32 0 4.8 0.08" "64 0 7.9 0.1" "1000 0 77 1"; do
    set -- $row
    J=$("$ARBOR" route --model bins --flows "$1" --links 16 --trials 4000 --json)
    near "bins $1 p_no_collision" "$2" "$(echo "$J" | jget p_no_collision)" 0.0015
    near "bins $1 expected_busiest" "$3" "$(echo "$J" | jget expected_busiest)" "$4"
done
J=$("$ARBOR" route --model bins --flows 16 --links 60 --json)
near "bins 16 on 60" 0.109 "$(echo "$J" | jget p_no_collision)" 0.002

# The leaf-spine figures through the real engines (rack model: slowdown = max(1, busiest demand)).
up() { echo "$1" | grep -o '"uplinks":{[^}]*}' | jget "$2"; }
J=$(route --model rack --gpus 8 --qps 4 --uplinks 16)
near "8 GPUs x 4 QPs slowdown 1.21" 1.21 "$(up "$J" slowdown)" 0.03
J=$(route --model rack --gpus 8 --qps 16 --uplinks 16 --trials 1000)
near "8 GPUs x 16 QPs: no slowdown" 1 "$(up "$J" slowdown)" 0
near "8 GPUs x 16 QPs busiest 13.4 flows" 13.4 "$(up "$J" busiest_flows)" 0.3
J=$(route --model rack --gpus 16 --qps 4 --uplinks 16)
near "16 GPUs x 4 QPs slowdown 1.97" 1.97 "$(up "$J" slowdown)" 0.04
J=$(route --model rack --gpus 16 --qps 4 --uplinks 32)
near "16 GPUs on 32 uplinks slowdown 1.35" 1.35 "$(up "$J" slowdown)" 0.04
J=$(route --model rack --gpus 16 --qps 1 --uplinks 60 --trials 4000)
near "16 flows on 60 uplinks: no shared" 0.109 "$(up "$J" p_no_collision)" 0.02
near "16 flows on 60 uplinks: busiest" 2.0 "$(up "$J" busiest_flows)" 0.15
# eecmp sees the QP: on one pair with 16 QPs ecmp and eecmp spread alike (ports vary too),
# and the same seed repeats a run exactly.
A=$(route --model rack --gpus 8 --qps 4 --uplinks 16 --trials 50 --seed 9)
B=$(route --model rack --gpus 8 --qps 4 --uplinks 16 --trials 50 --seed 9)
same "same seed, same figures" "$A" "$B"
C=$(route --model rack --gpus 8 --qps 4 --uplinks 16 --trials 50 --seed 10)
if [ "$A" != "$C" ]; then pass "another seed, other draws"; else fail "another seed"; fi

# Path pinning: k half racks give 16/(16-k); k = 8 leaves half the uplinks idle.
J=$(route --model pinning --half 4)
near "pinning k=4 busiest 1.33" 1.3333 "$(up "$J" busiest_demand)" 0.0001
J=$(route --model pinning --half 8)
near "pinning k=8 busiest 2.0" 2.0 "$(up "$J" busiest_demand)" 0.0001
same "pinning k=8 idle uplinks" 8 "$(up "$J" idle)"
J=$(route --model pinning --half 0)
near "pinning full racks" 1.0 "$(up "$J" busiest_demand)" 0.0001
J=$(route --model pinning --half 0 --fail up:L1.0:3 --trials 20)
if awk -v g="$(up "$J" busiest_demand)" 'BEGIN { exit !(g > 1.05) }'; then
    pass "pinning failure falls back to ECMP on top of pinned slices"
else
    fail "pinning failure" "$J"
fi

# Degraded trees: D-mod-k loses flows, updown and dmodc route around the failure.
F='link:L1.0-L2.1,switch:L2.2'
same "dmodk degraded unroutable" yes "$(route --topo kary:4,2 --routing dmodk --traffic all2all --fail "$F" | jget unroutable | awk '{print ($1 > 0) ? "yes" : "no"}')"
same "updown degraded routes all" 0 "$(route --topo kary:4,2 --routing updown --traffic all2all --fail "$F" | jget unroutable)"
same "dmodc degraded routes all" 0 "$(route --topo kary:4,2 --routing dmodc --traffic all2all --fail "$F" | jget unroutable)"
# cut a leaf off: its 4 hosts cannot send to or receive from the 12 others
same "disconnected leaf reported" 96 "$(route --topo kary:4,2 --routing updown --traffic all2all --fail link:L1.0-L2.0,link:L1.0-L2.1,link:L1.0-L2.2,link:L1.0-L2.3 | jget unroutable)"

# Every engine runs; QPs multiply flows; the histogram sums to links x phases.
for e in dmodk smodk rnca:3 pinning table updown dmodc ecmp ecmp:polarized eecmp; do
    J=$(route --topo kary:4,3 --routing "$e" --traffic perm:2 --qps 2)
    same "engine $e" "128 0" "$(echo "$J" | jget flows) $(echo "$J" | jget unroutable)"
done
J=$(route --topo kary:2,2 --routing dmodk --traffic shift:all)
same "histogram: 16 directed links x 3 phases, 40 hops" '"histogram":[8,40]' "$(echo "$J" | grep -o '"histogram":\[[^]]*\]')"
J=$(route --topo kary:4,3 --routing ecmp --traffic perm:1 --trials 20)
same "trials n" 20 "$(echo "$J" | grep -o '"trials":{[^{]*' | jget n)"
if echo "$J" | grep -q '"min":{"max_link_load":[0-9]' && echo "$J" | grep -q '"max":{"max_link_load":[0-9]'; then
    pass "trials min and max"
else
    fail "trials min and max" "$J"
fi

# Table file, CSV and text output.
printf 'switch,pod,in_port,out_port\nL1.0,2,*,3\n' >"$TMP/t.csv"
printf 'src,dst\n0,5\n1,4\n' >"$TMP/f.csv"
"$ARBOR" route --topo leafspine:4,2,2 --routing "table:$TMP/t.csv" --traffic "file:$TMP/f.csv" --csv "$TMP/l.csv" >/dev/null 2>"$TMP/e"
same "csv header" "port,node,peer,tier,role,flows,demand" "$(head -1 "$TMP/l.csv")"
same "csv: table sends pod 2 on up port 1" "11,L1.0,L2.1,1,up,2,2" "$(grep '^11,' "$TMP/l.csv")"
same "text output" "max_link_load 2 2 2" "$("$ARBOR" route --topo leafspine:4,2,2 --routing "table:$TMP/t.csv" --traffic "file:$TMP/f.csv" | awk '$1 == "max_link_load"' | tr -s ' ')"

# --plot: a PNG from gnuplot; without gnuplot a clear error and status 1.
"$ARBOR" route --topo kary:4,2 --routing ecmp --traffic perm:1 --plot "$TMP/p.png" >/dev/null 2>"$TMP/e"
if [ "$(head -c 4 "$TMP/p.png" | od -An -c | tr -d ' ')" = "211PNG" ]; then pass "plot png"; else fail "plot png" "$(cat "$TMP/e")"; fi
expect_err "plot without gnuplot" 1 "needs gnuplot" env PATH=/nonexistent "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --plot "$TMP/q.png"

# Errors: one line naming the field, status 2.
expect_err "no topo" 2 "missing --topo" "$ARBOR" route --routing dmodk --traffic ring
expect_err "bad topo" 2 "route: --topo: .*kary" "$ARBOR" route --topo kary:0,2 --routing dmodk --traffic ring
expect_err "bad routing" 2 "unknown engine 'dmodx'" "$ARBOR" route --topo kary:2,2 --routing dmodx --traffic ring
expect_err "bad routing option" 2 "ecmp option 'x'" "$ARBOR" route --topo kary:2,2 --routing ecmp:x --traffic ring
expect_err "bad rnca seed" 2 "rnca seed" "$ARBOR" route --topo kary:2,2 --routing rnca:z --traffic ring
expect_err "bad traffic" 2 "route: --traffic: .*shift" "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic shift:9
expect_err "bad qps" 2 "route: --qps: '0'" "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --qps 0
expect_err "bad trials" 2 "route: --trials: 'x'" "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --trials x
expect_err "bad fail" 2 "route: --fail: " "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --fail link:L1.0-L9.9
expect_err "unknown option" 2 "unknown option '--bogus'" "$ARBOR" route --bogus 1
expect_err "missing value" 2 "route: --seed needs a value" "$ARBOR" route --topo kary:2,2 --seed
expect_err "bad model" 2 "unknown model 'x'" "$ARBOR" route --model x
expect_err "bins needs links" 2 "needs --links" "$ARBOR" route --model bins --flows 4
expect_err "pinning half range" 2 "route: --half: '9'" "$ARBOR" route --model pinning --half 9
printf 'switch,pod,in_port,out_port\nL1.0,2,*,0\n' >"$TMP/bad.csv"
expect_err "table file line" 2 "line 2: out_port 0 of L1.0" "$ARBOR" route --topo leafspine:4,2,2 --routing "table:$TMP/bad.csv" --traffic ring
printf 'src,dst\n0,99\n' >"$TMP/badf.csv"
expect_err "traffic file line" 2 "line 2" "$ARBOR" route --topo leafspine:4,2,2 --routing dmodk --traffic "file:$TMP/badf.csv"

finish
