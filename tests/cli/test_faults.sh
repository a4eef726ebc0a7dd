# Fault events during a run: fabric.restore_at and fabric.reboot_at (bad input
# refused naming the key and the rule), and the JSON `faults` figures, each
# bounded by what the event must have done. Small runs: seconds in all.
. "$(dirname "$0")/lib.sh"

has() { if printf '%s' "$2" | grep -q -- "$3"; then pass "$1"; else fail "$1" "no $3 in: $(printf '%s' "$2" | head -c 300)"; fi; }
hasnt() { if printf '%s' "$2" | grep -q -- "$3"; then fail "$1" "$3 in the output"; else pass "$1"; fi; }

# Errors: exit 2, one line naming the key and the rule.
expect_err "restore_at: item checked against the fabric" 2 \
    "sim: -s fabric.restore_at: fail: 'switch:L9.0': no node L9.0" \
    "$ARBOR" sim -s 'fabric.restore_at=10us switch:L9.0'
expect_err "restore_at: a time first" 2 "fabric.restore_at: 'up:L1.0:0': expected a time \\(such as 200us\\) before the recoveries" \
    "$ARBOR" sim -s topology=leafspine:2,2,2 -s 'fabric.restore_at=up:L1.0:0'
expect_err "reboot_at: switches only" 2 "fabric.reboot_at: 'up:L1.0:0': only switches reboot \\(switch:NAME\\)" \
    "$ARBOR" sim -s topology=leafspine:2,2,2 -s 'fabric.reboot_at=10us up:L1.0:0'
expect_err "reboot_at: down= once" 2 "fabric.reboot_at: down= given twice for the entry at 10us" \
    "$ARBOR" sim -s topology=leafspine:2,2,2 -s 'fabric.reboot_at=10us switch:L2.0 down=1us down=2us'
expect_err "reboot_at: down= a time above 0" 2 "fabric.reboot_at: down=0: expected a time above 0" \
    "$ARBOR" sim -s topology=leafspine:2,2,2 -s 'fabric.reboot_at=10us switch:L2.0 down=0'
expect_err "reboot_at: a time needs switches" 2 "fabric.reboot_at: no switch after 10us" \
    "$ARBOR" sim -s topology=leafspine:2,2,2 -s 'fabric.reboot_at=10us down=1us'
printf '[fabric]\ntopology = leafspine:2,4,2\nreboot_at = 10us switch:L2.0\n    20us switch:L2.7\n' >"$TMP/rb.ini"
expect_err "reboot_at: continuation line named" 2 "rb.ini:4: fabric.reboot_at: .*no node L2.7" \
    "$ARBOR" sim "$TMP/rb.ini"
expect_err "fault_window: above 0" 2 "run.fault_window" "$ARBOR" sim -s run.fault_window=0

# No fault event: no `faults`, and the new keys are not echoed.
SMALL="-s size=1MiB -s mode=values -s topology=leafspine:2,2,2 --json --quiet"
J=$("$ARBOR" sim $SMALL)
hasnt "no event: no faults" "$J" '"faults"'
hasnt "no event: restore_at not echoed" "$J" '"restore_at"'
hasnt "no event: reboot_at not echoed" "$J" '"reboot_at"'
hasnt "no event: fault_window not echoed" "$J" '"fault_window"'

# jq-free checks of one run's JSON with python3.
command -v python3 >/dev/null 2>&1 || {
    skip "faults figures" "python3 is not installed"
    finish
}
# verdict FILE PYTHON_EXPR: "yes" when the expression holds for d (the JSON),
# a = d["arbor"], e = d["faults"]["events"].
verdict() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); a=d.get("arbor",{}); e=d.get("faults",{}).get("events",[])
print("yes" if eval(sys.argv[2]) else "no: " + json.dumps(e))' "$1" "$2" 2>&1
}

# A spine reboot 30 us into a 1 MiB AllReduce of 4 ranks on leafspine:2,2,2,
# every tree through a spine: its live slots are lost, each offset that held
# one is credited again, and every member of the channel sends its 8192 B
# again, so at least slots_lost x 8192 B are repaired; the hosts react after
# the event (an AGG_MISS comes back within a loop); the results stay exact.
"$ARBOR" sim $SMALL -s 'reboot_at=30us switch:L2.0' -s run.fault_window=20us >"$TMP/rb.json"
same "reboot: exit 0" 0 $?
same "reboot: done, exact, no invariant error" yes \
    "$(verdict "$TMP/rb.json" 'd["completed"] and d["correct"] is True and a["invariants"]["errors"] == 0')"
same "reboot: one event, applied, live slots lost" yes \
    "$(verdict "$TMP/rb.json" 'len(e) == 1 and e[0]["kind"] == "reboot" and e[0]["applied"] and e[0]["at_us"] == 30 and e[0]["down_us"] == 0 and e[0]["slots_lost"] > 0')"
same "reboot: detected at or after the event" yes \
    "$(verdict "$TMP/rb.json" 'e[0]["detect_us"] is not None and 0 <= e[0]["detect_us"] <= d["cct_us"]')"
same "reboot: bytes repaired >= slots lost x payload" yes \
    "$(verdict "$TMP/rb.json" 'e[0]["bytes_repaired"] >= e[0]["slots_lost"] * 8192 and a["recovery"]["retries"] >= 1')"
same "reboot: recovered means the window after carries 90% of the one before" yes \
    "$(verdict "$TMP/rb.json" 'e[0]["recovered"] is not True or e[0]["goodput_after_gbps"] >= 0.9 * e[0]["goodput_before_gbps"] - 1e-6')"

# The same spine down for 10 us: it drops what reaches it, comes back empty;
# still exact, and the summary has the event's line.
"$ARBOR" sim $SMALL -s 'reboot_at=30us switch:L2.0 down=10us' >"$TMP/rbd.json"
same "reboot down: done, exact" yes \
    "$(verdict "$TMP/rbd.json" 'd["completed"] and d["correct"] is True and a["invariants"]["errors"] == 0 and e[0]["down_us"] == 10')"
same "reboot down: packets lost while down" yes \
    "$(verdict "$TMP/rbd.json" 'd["drops"] + d["unroutable"] > 0')"
T=$("$ARBOR" sim -s size=1MiB -s topology=leafspine:2,2,2 -s 'reboot_at=30us switch:L2.0 down=10us')
has "summary: a line per event" "$T" "^fault         reboot switch:L2.0 at 30.000 us ([0-9]* slots lost, down 10.000 us): "

# A host's link failing for good cuts it off: exit 1 and a line naming what
# was lost; restored 40 us later, the host's NIC sends what it kept and the
# run completes exactly, both events reported in order.
"$ARBOR" sim $SMALL -s 'fail_at=20us link:h0-L1.0' >"$TMP/cut.json" 2>"$TMP/cut.err"
same "link cut for good: exit 1" 1 $?
if grep -q "lost on tree .*the fabric: link:h0-L1.0 failed at 20us; no path is left between h0 and" "$TMP/cut.err"; then
    pass "link cut for good: the line names the offset lost and the cut"
else
    fail "link cut for good: the line names the offset lost and the cut" "$(cat "$TMP/cut.err")"
fi
# more hosts unanswered than the failure's record holds (16): the line
# lists its first 16 and the count, and nothing reads past them (whether
# an offset's repair credits or, once the switches repaired every offset,
# the END wait's tail replays went unanswered)
"$ARBOR" sim -s topology=kary:4,3 -s size=1MiB -s attempts=1 -s repair_tries=1 \
    -s 'fail_at=5us switch:L3.2' -q >"$TMP/many.out" 2>"$TMP/many.err"
same "more than 16 hosts unanswered: exit 1" 1 $?
if grep -Eq "(had not answered its 1 repair credits|sent no END after 1 tail replays) .*: (h[0-9]+,){16}\.\.\. \((1[7-9]|[2-9][0-9]) in all\); the fabric: switch:L3.2 failed at 5us" "$TMP/many.err"; then
    pass "more than 16 hosts unanswered: the first 16 named, the count given"
else
    fail "more than 16 hosts unanswered: the first 16 named, the count given" "$(cat "$TMP/many.err")"
fi
"$ARBOR" sim $SMALL -s 'fail_at=20us link:h0-L1.0' -s 'restore_at=60us link:h0-L1.0; 1s link:h1-L1.0' \
    >"$TMP/flap.json"
same "link flap: exit 0" 0 $?
same "link flap: done, exact" yes \
    "$(verdict "$TMP/flap.json" 'd["completed"] and d["correct"] is True and a["invariants"]["errors"] == 0')"
same "link flap: fail, restore, and one after the end" yes \
    "$(verdict "$TMP/flap.json" '[x["kind"] for x in e] == ["fail", "restore", "restore"] and [x["applied"] for x in e] == [True, True, False] and e[2]["detect_us"] is None and e[2]["recovered"] is None')"
same "link flap: what was resent after the failure and the restore" yes \
    "$(verdict "$TMP/flap.json" 'e[0]["bytes_repaired"] + e[1]["bytes_repaired"] > 0')"
# What h0's NIC sends when its link comes back must not count as an answer
# before the restore (detect_us was once negative, wrapped to 1.8e13 us).
same "link flap: every detect_us within the run, from its event on" yes \
    "$(verdict "$TMP/flap.json" 'all(x["detect_us"] is None or 0 <= x["detect_us"] <= d["sim_time_us"] for x in e)')"
# The fabric is idle when h0's link comes back (its traffic stopped at the
# cut, the others wait on it): the restore still takes effect at 60 us, not
# at the simulator's last event before it. Nothing crosses h0's link, either
# way, strictly between the failure and the restore, and h0's NIC, which
# kept what it had to send, starts on it at 60 us exactly (the capture's
# stamps are nanoseconds; before, it sent from 39.24 us on).
# shellcheck disable=SC2086
"$ARBOR" sim $SMALL -s 'fail_at=20us link:h0-L1.0' -s 'restore_at=60us link:h0-L1.0' \
    -p host:h0 "$TMP/flap.pcap" >/dev/null
same "link flap capture: exit 0" 0 $?
same "link flap capture: nothing on h0's link in (20, 60) us, a frame at 60 us" yes "$(python3 -c 'import struct,sys
d = open(sys.argv[1], "rb").read()
assert struct.unpack("<I", d[:4])[0] == 0xa1b23c4d  # nanosecond stamps
off, t = 24, []
while off < len(d):
    sec, ns, incl, _ = struct.unpack("<IIII", d[off:off + 16])
    t.append(sec * 10**9 + ns)
    off += 16 + incl
early = [x for x in t if 20000 < x < 60000]
first = min(x for x in t if x > 20000)
# (a frame at 60 us exactly: the restore started it, the failure having
# emptied the port of the leaf and nothing else being under way)
ok = not early and first == 60000
print("yes" if ok else "no: %d frames inside, first after 20 us at %d ns" % (len(early), first))' "$TMP/flap.pcap" 2>&1)"

# The summary of a link failing and coming back: a restore takes nothing
# away, so its line has no detection or recovery of its own ("recovered in
# 0.000 us", "during n/a" were the fail line's words); it says when the
# goodput came back to 90% of what it was before the failure: the fail
# event's recovery time seen from the restore (2000 + recover_us - 2200 us),
# and what was sent again after it (the first resend, or nothing).
FLAP="-s topology=leafspine:2,4,2 -s workload.kind=arbor -s size=64MiB -s subchannels=2 -s subchannel_mode=dynamic -s run.stop=0 -s run.fault_window=200us"
# shellcheck disable=SC2086
"$ARBOR" sim $FLAP -s 'fail_at=2ms up:L1.0:0' -s 'restore_at=2.2ms up:L1.0:0' --json -q >"$TMP/lf.json"
# shellcheck disable=SC2086
"$ARBOR" sim $FLAP -s 'fail_at=2ms up:L1.0:0' -s 'restore_at=2.2ms up:L1.0:0' -q >"$TMP/lf.txt"
want=$(python3 -c 'import json,sys
f, r = json.load(open(sys.argv[1]))["faults"]["events"]
assert f["kind"] == "fail" and r["kind"] == "restore" and f["recovered"] is True and r["recover_us"] == 0
assert f["at_us"] + f["recover_us"] > r["at_us"]
if r["detect_us"] is not None:
    resent = "%d B repaired, the first resend %.3f us after it" % (r["bytes_repaired"], r["detect_us"])
elif r["bytes_repaired"] > 0:
    resent = "%d B repaired" % r["bytes_repaired"]
else:
    resent = "nothing resent after it"
print("fault         restore up:L1.0:0 at 2200.000 us: goodput %.3f / %.3f Gb/s before / after, back to 90%% of the %.3f Gb/s before the failure %.3f us after it; %s" % (
    r["goodput_before_gbps"], r["goodput_after_gbps"], f["goodput_before_gbps"],
    f["at_us"] + f["recover_us"] - r["at_us"], resent))' "$TMP/lf.json" 2>&1)
same "restore line: its goodput, the failure's recovery seen from it, its resends" "$want" \
    "$(grep '^fault         restore' "$TMP/lf.txt")"
if grep -q '^fault         fail up:L1.0:0 at 2000.000 us: detected after [0-9.]* us, [0-9]* B repaired; goodput [0-9.]* / [0-9.]* / [0-9.]* Gb/s before / during / after; recovered in [0-9.]* us$' "$TMP/lf.txt"; then
    pass "fail line: detected, repaired, before / during / after, recovered in"
else
    fail "fail line: detected, repaired, before / during / after, recovered in" "$(grep '^fault' "$TMP/lf.txt")"
fi
# A flow whose only path fails for good, with no stop time (run.stop = 0):
# the run ends (status 1) when its sender gives up past transport.retry_limit
# (255 by default: the 256th timeout in a row, rto 1 ms apart), with one line
# naming the flow, its hosts and QP, the limit and the failure, and the JSON
# of what it got still written. h0 streams 4 MB to h3 over leafspine:2,2,1
# until h3's link fails at 20 us: acks leave h3 every 334.24 ns, those on
# its wire then are lost, and the last that got through reaches h0 four
# hops (4 x 1.00688 us) later, between 22.69 and 23.02 us; the flow gives
# up 256 ms after that.
printf '[fabric]\ntopology = leafspine:2,2,1\nfail_at = 20us link:h3-L1.1\n[workload]\nkind = incast\nsenders = 1\nreceiver = 3\nsize = 4MB\n[run]\nstop = 0\n' >"$TMP/dead.ini"
dead() { "$ARBOR" sim "$TMP/dead.ini" --json -q >"$TMP/dead.json"; }
expect_err "a flow that can never finish gives up: status 1, one line naming it" 1 \
    '^arbor sim: failed at [0-9.]+ us: flow 0 \(h0 -> h3, QP [0-9]+\) gave up at [0-9.]+ us: 256 retransmission timeouts in a row without progress, past transport.retry_limit = 255; the fabric: link:h3-L1.1 failed at 20us' \
    dead
at=$(sed -n 's/.* gave up at \([0-9.]*\) us.*/\1/p' "$TMP/err")
if awk -v t="$at" 'BEGIN { exit !(t >= 256022.69 && t <= 256023.02) }'; then
    pass "it gives up 256 rto after its last progress"
else
    fail "it gives up 256 rto after its last progress" "at $at us"
fi
has "  ... and that no path is left between its hosts" "$(cat "$TMP/err")" \
    "link:h3-L1.1 failed at 20us; no path is left between h0 and h3"
J=$(cat "$TMP/dead.json")
has "its JSON is written: failed, the flow counted" "$J" '"status":"failed","failure":"flow 0 (h0 -> h3, QP'
# The same under updown, which routes around what it can: the line does not
# send the user to updown (h3 has no other link: nothing could reach it).
expect_status "a flow cut off under updown gives up too" 1 \
    "$ARBOR" sim "$TMP/dead.ini" -s routing.scheme=updown -s transport.retry_limit=3 -q
if grep -q 'no path is left between h0 and h3' "$TMP/err" && ! grep -q 'updown and dmodc do' "$TMP/err"; then
    pass "  ... naming the cut, with no advice to use updown"
else
    fail "  ... naming the cut, with no advice to use updown" "$(cat "$TMP/err")"
fi
# Senders that give up with nothing failed (an incast at rto 200 us, a
# limit of 2): the line says that nothing failed and what lets them wait
# longer, and how many flows gave up. At least one does: with the default
# limit some flow of scenarios/incast.ini runs 11 timeouts in a row
# (docs/transports.md), and the run with a limit of 2 is that run until a
# flow first reaches 3. How many more give up after it depends on which of
# the queued packets the drop-tail queue keeps (the order of simultaneous
# events decides it), so the count is checked against the run's own JSON,
# not a number: 1 to 15 (the senders), and the line's equal to
# flows.gave_up.
expect_status "flows that give up with nothing failed: status 1" 1 \
    "$ARBOR" sim scenarios/incast.ini -s transport.retry_limit=2 -q
has "  ... the line says nothing failed, and what to raise" "$(cat "$TMP/err")" \
    "flows gave up); nothing in the fabric failed: congestion or the links' loss kept it from progressing (a higher transport.retry_limit or transport.rto lets it wait longer)"
gave=$(sed -n 's/.*retry_limit = 2 (\([0-9]*\) flows gave up).*/\1/p' "$TMP/err")
jgave=$("$ARBOR" sim scenarios/incast.ini -s transport.retry_limit=2 --json -q 2>/dev/null |
    sed -n 's/.*"gave_up":\([0-9]*\).*/\1/p')
if [ -n "$gave" ] && [ "$gave" -ge 1 ] && [ "$gave" -le 15 ] && [ "$gave" = "$jgave" ]; then
    pass "  ... it counts the flows that gave up (1 to 15, as the JSON: $gave)"
else
    fail "  ... it counts the flows that gave up (1 to 15, as the JSON)" "line: '$gave', JSON: '$jgave'"
fi
has "its JSON counts the flow that gave up" "$J" '"flows":{"count":1,"done":0,"gave_up":1,'
expect_status "transport.retry_limit takes 0 (never give up; here run.stop ends it)" 1 \
    "$ARBOR" sim "$TMP/dead.ini" -s transport.retry_limit=0 -s run.stop=3ms -q
has "  ... as an incomplete run" "$(cat "$TMP/err")" "incomplete: run.stop came first, 0 of 1 flows done"
finish
