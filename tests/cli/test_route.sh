# The `arbor route` command: exact D-mod-k loads, the published collision
# figures (docs/routing.md), failures, files and errors (docs/routing.md).
. "$(dirname "$0")/lib.sh"

# jget KEY < JSON: the number after "KEY": (first match).
jget() { grep -o "\"$1\":[-0-9.e+]*" | head -1 | cut -d: -f2 | awk '{ printf "%.10g\n", $1 }'; }
# near NAME WANT GOT TOL: |GOT - WANT| <= TOL.
near() {
    if awk -v w="$2" -v g="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; then
        pass "$1"
    else
        fail "$1" "want $2 +- $4" "got  $3"
    fi
}
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

# Balls in bins. p_no_collision is the closed form prod_{i<F} (1 - i/L),
# computed here. The busiest of 16 links: the exact expectation E[M] of the
# model and its standard deviation (test_route.c's busiest_exact, which
# also checks them against the published 1.35, 2.1, 3.1, 4.8, 7.9 and 77);
# the Monte Carlo mean of 4000 trials must lie within 4 standard errors,
# 4 sd / sqrt(4000).
pnc() { awk -v f="$1" -v l="$2" 'BEGIN { p = 1; for (i = 0; i < f; i++) p *= 1 - i / l; if (p < 0) p = 0; print p }'; }
for row in "4 1.3486 0.5078" "8 2.0629 0.5758" "16 3.0782 0.7459" "32 4.8304 0.9376" "64 7.8804 1.2261" \
    "1000 76.8477 4.0806"; do
    set -- $row
    J=$("$ARBOR" route --model bins --flows "$1" --links 16 --trials 4000 --json)
    near "bins $1 p_no_collision" "$(pnc "$1" 16)" "$(echo "$J" | jget p_no_collision)" 0.0001
    near "bins $1 expected_busiest" "$2" "$(echo "$J" | jget expected_busiest)" \
        "$(awk -v sd="$3" 'BEGIN { print 4 * sd / sqrt(4000) }')"
done
J=$("$ARBOR" route --model bins --flows 16 --links 60 --json)
near "bins 16 on 60" "$(pnc 16 60)" "$(echo "$J" | jget p_no_collision)" 0.0001

# The leaf-spine figures through the real engines (rack model: slowdown =
# max(1, busiest demand)). With ECMP like uniform hashing, G x Q flows of
# 1/Q link each are balls in the U uplinks: busiest demand E[M] / Q, with
# E[M] and sd as above (test_route.c); tolerances 4 sd / sqrt(trials) / Q.
# 8 x 4 on 16: E[M] 4.8304 (sd 0.9376) -> 1.2076 (published: 1.21x)
# 8 x 16 on 16: 13.3569 (1.6277) -> 0.835: no slowdown
# 16 x 4 on 16: 7.8804 (1.2261) -> 1.9701 (published: 1.97x)
# 16 x 4 on 32: 5.4148 (0.9517) -> 1.3537 (about 1.35x)
# 16 x 1 on 60: 2.0240 (0.5108); no shared uplink prod (1 - i/60) = 0.111
up() { echo "$1" | grep -o '"uplinks":{[^}]*}' | jget "$2"; }
tol() { awk -v sd="$1" -v n="$2" -v q="$3" 'BEGIN { print 4 * sd / sqrt(n) / q }'; }
J=$(route --model rack --gpus 8 --qps 4 --uplinks 16)
near "8 GPUs x 4 QPs slowdown 1.21" 1.2076 "$(up "$J" slowdown)" "$(tol 0.9376 2000 4)"
J=$(route --model rack --gpus 8 --qps 16 --uplinks 16 --trials 1000)
near "8 GPUs x 16 QPs: no slowdown" 1 "$(up "$J" slowdown)" 0
near "8 GPUs x 16 QPs busiest 13.36 flows" 13.3569 "$(up "$J" busiest_flows)" "$(tol 1.6277 1000 1)"
J=$(route --model rack --gpus 16 --qps 4 --uplinks 16)
near "16 GPUs x 4 QPs slowdown 1.97" 1.9701 "$(up "$J" slowdown)" "$(tol 1.2261 2000 4)"
J=$(route --model rack --gpus 16 --qps 4 --uplinks 32)
near "16 GPUs on 32 uplinks slowdown 1.35" 1.3537 "$(up "$J" slowdown)" "$(tol 0.9517 2000 4)"
J=$(route --model rack --gpus 16 --qps 1 --uplinks 60 --trials 4000)
near "16 flows on 60 uplinks: no shared" "$(pnc 16 60)" "$(up "$J" p_no_collision)" \
    "$(awk -v p="$(pnc 16 60)" 'BEGIN { print 4 * sqrt(p * (1 - p) / 4000) }')"
near "16 flows on 60 uplinks: busiest" 2.0240 "$(up "$J" busiest_flows)" "$(tol 0.5108 4000 1)"
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
if command -v gnuplot >/dev/null 2>&1; then
    "$ARBOR" route --topo kary:4,2 --routing ecmp --traffic perm:1 --plot "$TMP/p.png" >/dev/null 2>"$TMP/e"
    if [ "$(head -c 4 "$TMP/p.png" | od -An -c | tr -d ' ')" = "211PNG" ]; then pass "plot png"; else fail "plot png" "$(cat "$TMP/e")"; fi
else
    skip "plot png" "gnuplot is not installed"
fi
expect_err "plot without gnuplot" 1 "needs gnuplot" env PATH=/nonexistent "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --plot "$TMP/q.png"

# Errors: one line naming the field, status 2.
expect_err "no topo" 2 "missing --topo" "$ARBOR" route --routing dmodk --traffic ring
expect_err "bad topo" 2 "route: --topo: .*kary" "$ARBOR" route --topo kary:0,2 --routing dmodk --traffic ring
expect_err "bad routing" 2 "unknown engine 'dmodx'" "$ARBOR" route --topo kary:2,2 --routing dmodx --traffic ring
expect_err "  ... one prefix, and the engines route takes, adaptive not among them" 2 \
    "^arbor route: --routing: unknown engine 'bad' \\(dmodk, smodk, rnca\\[:SEED\\], pinning, table\\[:PATH\\], updown, dmodc, ecmp\\[:polarized\\], eecmp\\[:polarized\\]\\)$" \
    "$ARBOR" route --topo kary:2,2 --routing bad --traffic ring
expect_err "adaptive: the simulator's, not route's" 2 \
    "^arbor route: --routing: adaptive chooses as packets flow: the simulator's \\(routing = adaptive in a scenario\\); route takes dmodk, .*eecmp\\[:polarized\\]$" \
    "$ARBOR" route --topo kary:2,2 --routing adaptive --traffic ring
expect_err "an engine's option: one prefix" 2 "^arbor route: --routing: ecmp option 'x' is not 'polarized'$" \
    "$ARBOR" route --topo kary:2,2 --routing ecmp:x --traffic ring
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
