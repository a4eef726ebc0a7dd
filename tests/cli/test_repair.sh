# Local repair (docs/protocol.md section 6.4) through `arbor sim`: under
# random loss alone the results are exact, no tree is declared dead and no
# offset goes to the bypass repair; the switches re-credited and took over
# or answered from earlier attempts' slots; a loss costs less than with
# end-to-end retries; a real failure is still found; the key's values.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed (it reads the JSON fields)"
# fig FILE EXPR: EXPR of the JSON d (a = d["arbor"], r = a["recovery"])
fig() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); a=d["arbor"]; r=a["recovery"]
print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}
sim() { "$ARBOR" sim -s mode=values -s run.stop=0 --json -q "$@"; }

# kary:8,2 at 1% per link: 1 - 0.99^145 = 77% of the offsets lose a packet
# somewhere on the ~145 links a 64-rank AllReduce offset crosses
sim -s topology=kary:8,2 -s size=4MiB -s loss=0.01 >"$TMP/kl.json"
sim -s topology=kary:8,2 -s size=4MiB -s loss=0.01 -s arbor.repair=end-to-end >"$TMP/ke.json"
same "kary:8,2 at 1%: exact, every rank done" True \
    "$(fig "$TMP/kl.json" 'd["correct"] is True and a["ranks_done"] == 64 and a["invariants"]["errors"] == 0')"
same "kary:8,2 at 1%: no tree declared dead, nothing bypassed" "0 0" \
    "$(fig "$TMP/kl.json" '"%d %d" % (r["tree_deaths"], r["bypass"])')"
same "kary:8,2 at 1%: the switches re-credited and reused slots" True \
    "$(fig "$TMP/kl.json" 'r["recredits"] > 0 and r["adoptions"] + r["replays"] > 0')"
# the text summary reports the switches' side with the JSON's numbers
want=$(fig "$TMP/kl.json" '"local repair: %d re-credits, %d adoptions, %d replays, %d held" % (r["recredits"], r["adoptions"], r["replays"], r["held"])')
"$ARBOR" sim -s mode=values -s run.stop=0 -s topology=kary:8,2 -s size=4MiB -s loss=0.01 >"$TMP/kl.txt" 2>&1
if [ -n "$want" ] && grep -q "^switches .*; $want\$" "$TMP/kl.txt"; then
    pass "kary:8,2 at 1%: the summary's switches line ($want)"
else
    fail "kary:8,2 at 1%: the summary's switches line" "want '$want'" "$(grep '^switches' "$TMP/kl.txt")"
fi
l=$(fig "$TMP/kl.json" 'd["goodput_gbps"]') e=$(fig "$TMP/ke.json" 'd["goodput_gbps"]')
if [ -n "$l" ] && [ -n "$e" ] && awk -v l="$l" -v e="$e" 'BEGIN { exit !(l > e) }'; then
    pass "kary:8,2 at 1%: local repair ($l Gb/s) beats end-to-end retries ($e Gb/s)"
else
    fail "kary:8,2 at 1%: local repair beats end-to-end retries" "local '$l', end-to-end '$e'"
fi
same "end-to-end: no switch re-credit, no slot reused" "0 0 0" \
    "$(fig "$TMP/ke.json" '"%d %d %d" % (r["recredits"], r["adoptions"], r["replays"])')"

# star:32 at 1%, and the six collectives at 0.1% on a leaf-spine: exact, no death
sim -s topology=star:32 -s size=4MiB -s loss=0.01 >"$TMP/st.json"
same "star:32 at 1%: exact, no tree dead, nothing bypassed" "True 0 0" \
    "$(fig "$TMP/st.json" '"%s %d %d" % (d["correct"], r["tree_deaths"], r["bypass"])')"
for c in allreduce reduce reducescatter broadcast allgather barrier; do
    sim -s topology=leafspine:4,4,4 -s size=1MiB -s loss=0.001 -s collective=$c >"$TMP/c.json"
    same "leafspine, 0.1%, $c: exact, no tree dead" "True 0" \
        "$(fig "$TMP/c.json" '"%s %d" % (d["correct"], r["tree_deaths"])')"
done

# a real failure is still found: a spine dead from the start, two trees a
# channel, dynamic selection; the dead tree's credits are lost by timer
"$ARBOR" sim -s topology=leafspine:4,8,8 -s size=8MiB -s arbor.subchannels=2 \
    -s arbor.subchannel_mode=dynamic -s arbor.fail=switch:L2.0 --json -q >"$TMP/f.json"
same "a spine dead from the start: its trees declared dead, the run done" True \
    "$(fig "$TMP/f.json" 'r["tree_deaths"] > 0 and a["ranks_done"] == 32')"

# a link failed after planning (arbor.fail): the routing learns of it, so
# routed packets (REGISTER, END, unicast repairs) go around it under a
# scheme that routes around failures; before, they went into it and no
# rank finished (0 of 32, REGISTERs unanswered)
sim -s topology=leafspine:4,8,8 -s size=1MiB -s arbor.fail=link:L1.0-L2.0 \
    -s routing.scheme=updown >"$TMP/fl.json"
same "arbor.fail of a link, updown: exact, every rank done" "True 32" \
    "$(fig "$TMP/fl.json" '"%s %d" % (d["correct"], a["ranks_done"])')"

# two trees a channel at 1% per link (docs/protocol.md section 9): every
# tree loses credits, so a run of timer losses on one is weighed against
# its sibling's losses, and no tree is taken for a failed one
sim -s topology=leafspine:4,8,8 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
    -s arbor.subchannel_mode=dynamic >"$TMP/two.json"
same "two trees a channel at 1%: exact, no tree declared dead" "True 0" \
    "$(fig "$TMP/two.json" '"%s %d" % (d["correct"], r["tree_deaths"])')"
# the same with spine L2.0 dead from the start: its trees are found, and
# only they: 32 channels x 2 trees over 8 spines put 8 trees through L2.0
sim -s topology=leafspine:4,8,8 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
    -s arbor.subchannel_mode=dynamic -s arbor.fail=switch:L2.0 >"$TMP/twof.json"
same "two trees at 1%, a spine dead: exact, its 8 trees dead, none revived" "True 8 0" \
    "$(fig "$TMP/twof.json" '"%s %d %d" % (d["correct"], r["tree_deaths"], r["revivals"])')"

# seed 1 of the same: an offset's retries went down its dead tree while the
# verdict waited (11 silences at the siblings' 28%) until its 8 attempts
# were spent and it went to the bypass (43.0 Gb/s); a later attempt now
# leaves a failing tree (docs/protocol.md section 9). Other seeds may still
# bypass an offset (1 in 6): this one pins the mechanism.
sim -s topology=leafspine:4,8,8 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
    -s arbor.subchannel_mode=dynamic -s arbor.fail=switch:L2.0 -s run.seed=1 >"$TMP/twof1.json"
same "two trees at 1%, a spine dead, seed 1: exact, nothing bypassed" "True 0" \
    "$(fig "$TMP/twof1.json" '"%s %d" % (d["correct"], r["bypass"])')"

# two trees a channel at 1%, each selection, seeds 1..6: every seed at
# least 1.5 times the ring's algbw (IRN with its short RTO and tail probe,
# the strong ring) on the same fabric, loss and size. A retry goes down
# its earlier attempt's tree, whose switches hold what it gathered, and a
# tail probe waits for the channel's loop, not a slow tree's last one:
# without the first, dynamic selection made 55-64 Gb/s; without the
# second, two of six seeds 27-29 Gb/s (a window held for 4 ms)
"$ARBOR" sim scenarios/arbor-star32-ring.ini -s fabric.topology=leafspine:4,8,8 \
    -s workload.size=16MiB -s fabric.loss=0.01 -s run.stop=0 --json -q >"$TMP/ring.json"
ring=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["collective"]["algbw_gbps"])' \
    "$TMP/ring.json" 2>/dev/null)
for m in dynamic static; do
    sim -s topology=leafspine:4,8,8 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
        -s arbor.subchannel_mode=$m --seeds 1..6 >"$TMP/seeds.json"
    low=$(python3 -c 'import json,sys
runs=json.load(open(sys.argv[1]))["runs"]
ok=len(runs) == 6 and all(x["status"] == "done" and x["arbor.wrong"] == 0 and x["arbor.recovery.tree_deaths"] == 0 for x in runs)
print("%.3f" % min(x["goodput_gbps"] for x in runs) if ok else "bad")' "$TMP/seeds.json" 2>/dev/null)
    if [ -n "$ring" ] && [ -n "$low" ] && [ "$low" != bad ] &&
        awk -v l="$low" -v r="$ring" 'BEGIN { exit !(l >= 1.5 * r) }'; then
        pass "two trees at 1%, $m, seeds 1..6: exact, none dead, lowest $low Gb/s >= 1.5 x ring $ring"
    else
        fail "two trees at 1%, $m, seeds 1..6: exact, none dead, >= 1.5 x the ring" \
            "lowest '$low', ring '$ring'"
    fi
done

# two trees on three levels (kary:4,3, static selection, 16 MiB at 1%),
# where a responder sees 40% of its credits lost: seed 1 had four timer
# losses in one round beside a sibling that lost 1 in 13, seed 4 a run of
# 12 where the odds of 1/16384 asked for 11; the verdict now needs two
# rounds and odds of 10^-6 (docs/protocol.md section 9)
for seed in 1 4; do
    sim -s topology=kary:4,3 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
        -s arbor.subchannel_mode=static -s run.seed=$seed >"$TMP/k43.json"
    same "kary:4,3, two trees, static, 1%, seed $seed: exact, every rank done, no tree dead" \
        "True 64 0" "$(fig "$TMP/k43.json" '"%s %d %d" % (d["correct"], a["ranks_done"], r["tree_deaths"])')"
done

# two trees on kary:8,2 (dynamic, 16 MiB at 1%), seed 5: a tree went silent
# 8 times in 3 rounds while its sibling had resolved 4 credits besides a run
# of its own, none lost; the share 1/6 put 8 silences at 1 in 1.7 million
# and the tree was declared dead. Averaged over the rates 4 credits allow,
# such a run is 1 in 1,300 (docs/protocol.md section 9)
sim -s topology=kary:8,2 -s size=16MiB -s loss=0.01 -s arbor.subchannels=2 \
    -s arbor.subchannel_mode=dynamic -s run.seed=5 >"$TMP/k82.json"
same "kary:8,2, two trees, dynamic, 1%, seed 5: exact, every rank done, no tree dead" \
    "True 64 0" "$(fig "$TMP/k82.json" '"%s %d %d" % (d["correct"], a["ranks_done"], r["tree_deaths"])')"

expect_err "arbor.repair: a bad value" 2 "arbor.repair.*'nearby'.*local.*end-to-end" \
    "$ARBOR" sim -s arbor.repair=nearby
finish
