# The UDP runtime as processes: `arbor run`, `arbor bench`, `arbor switch`.
# Results are checked by `arbor bench -c` (each rank compares its output with
# a reference computed from the inputs every rank derives); failures are
# provoked on purpose: a wrong secret, a rank killed mid-collective (the
# others fail within their deadline, the switch keeps serving another job),
# the switch killed and restarted mid-collective (the collective completes).
# Everything runs on loopback and takes seconds.
. "$(dirname "$0")/lib.sh"

has() { if printf '%s' "$2" | grep -q -- "$3"; then pass "$1"; else fail "$1" "no '$3' in: $(printf '%s' "$2" | head -c 400)"; fi; }
# rows OUT: the table rows of a bench output (lines not starting with #).
rows() { printf '%s\n' "$1" | grep -v '^#' | grep -c .; }
# wrong OUT: the sum of the #wrong column.
wrong() { printf '%s\n' "$1" | grep -v '^#' | awk '{ s += $9 } END { print s + 0 }'; }
# A free port: the switch writes the one it got.
port_of() { for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$1" ] && break; sleep 0.1; done; cat "$1"; }

# ---- usage -------------------------------------------------------------------
expect_err "run without -n" 2 "arbor run: give the number of ranks" "$ARBOR" run -- true
expect_err "run -n 1" 2 "arbor run: -n '1': want 2..256 ranks" "$ARBOR" run -n 1 -- true
expect_err "run without a command" 2 "arbor run: no COMMAND to run" "$ARBOR" run -n 2 --
expect_err "run of a program that does not exist: one line, before any rank" 2 \
    "^arbor run: /no/such/program: No such file or directory\$" "$ARBOR" run -n 4 -- /no/such/program
expect_err "  ... nor on PATH" 2 "^arbor run: no-such-program-x: no such program on PATH\$" \
    "$ARBOR" run -n 2 -- no-such-program-x
printf 'true\n' >"$TMP/notexec" && chmod 644 "$TMP/notexec"
expect_err "  ... a file that is not executable" 2 "^arbor run: .*/notexec: not an executable file\$" \
    "$ARBOR" run -n 2 -- "$TMP/notexec"
expect_err "run: unknown option" 2 "arbor run: unknown option '--bogus'" "$ARBOR" run -n 2 --bogus -- true
expect_err "run --switch without a secret" 2 "arbor run: --switch needs the job's secret" \
    env -u ARBOR_SECRET "$ARBOR" run -n 2 --switch 127.0.0.1:9 -- true
expect_err "run --secret-file of nothing" 2 "arbor run: --secret-file /dev/null: want a first line" \
    "$ARBOR" run -n 2 --secret-file /dev/null -- true
expect_err "bench: a missing value" 2 "arbor bench: -b needs a value" "$ARBOR" bench allreduce -b
expect_err "switch: --opt=value" 2 "arbor switch: --slots '0'" "$ARBOR" switch --slots=0
expect_err "bench of no collective" 2 "arbor bench: 'alltoall' is not allreduce" "$ARBOR" bench alltoall
expect_err "bench bad dtype" 2 "arbor bench: -d 'f8': want f16, bf16, f32, f64, i32 or i64" "$ARBOR" bench allreduce -d f8
# -d takes the table's own type names (nccl-tests'): double is f64
out=$("$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -d double -b 64 -e 64 -n 1 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '^# arbor bench allreduce: 2 ranks, f64 SUM' &&
    printf '%s\n' "$out" | grep -Eq '^ +64 +8 +double +sum .* 0$'; then
    pass "bench -d double: the table's name for f64"
else
    fail "bench -d double" "$out" "$(cat "$TMP/err")"
fi
# a size not a whole number of elements per rank runs rounded down, and the
# heading says so
out=$("$ARBOR" run -n 4 -- "$ARBOR" bench reducescatter -b 20 -e 20 -n 1 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] &&
    printf '%s\n' "$out" | grep -q '^# sizes rounded down to whole f32 elements per rank (multiples of 16 B): the size column is what ran$' &&
    printf '%s\n' "$out" | grep -Eq '^ +16 +4 +float +sum .* 0$'; then
    pass "bench reducescatter -b 20 on 4 ranks: rounded to 16 B, and said"
else
    fail "bench reducescatter -b 20: rounded and said" "$out" "$(cat "$TMP/err")"
fi
out=$("$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 64 -e 64 -n 1 -w 0 2>&1)
if printf '%s\n' "$out" | grep -q '^# sizes rounded'; then fail "  ... no such line when nothing is rounded" "$out"
else pass "  ... no such line when nothing is rounded"; fi
if printf '%s\n' "$out" | grep -q '^# arbor bench allreduce: 2 ranks, f32 SUM, 1 iteration (0 warm-up), '; then
    pass "bench heading: 1 iteration, singular"
else
    fail "bench heading: 1 iteration, singular" "$(printf '%s\n' "$out" | head -1)"
fi
expect_err "bench bad dtype: both sets of names" 2 \
    "^arbor bench: -d 'f8': want f16, bf16, f32, f64, i32 or i64 \\(or half, bfloat16, float, double, int32, int64\\)\$" \
    "$ARBOR" bench allreduce -d f8
expect_err "bench bad op" 2 "arbor bench: -o 'prod': want sum, max or min" "$ARBOR" bench allreduce -o prod
expect_err "bench -b of an unknown unit lists the units" 2 \
    "arbor bench: -b '1X' has an unknown unit \(want B, K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB or TB\)\$" \
    "$ARBOR" bench allreduce -b 1X
expect_err "bench -e above 4G" 2 "arbor bench: -e '5G': at most 4G" "$ARBOR" bench allreduce -e 5G
expect_err "bench -b of a fraction of a byte" 2 "arbor bench: -b '1.5' is not a whole number of bytes" \
    "$ARBOR" bench allreduce -b 1.5
expect_err "bench bad factor" 2 "arbor bench: -f '1': want a factor above 1" "$ARBOR" bench allreduce -f 1
expect_err "bench bad iterations" 2 "arbor bench: -n '0': want 1..1000000 iterations" "$ARBOR" bench allreduce -n 0
expect_err "ARBOR_PAYLOAD not a multiple of 8" 2 \
    "arbor bench: ARBOR_PAYLOAD='100': want a multiple of 8 in 8..8192" \
    env ARBOR_PAYLOAD=100 ARBOR_SECRET=s "$ARBOR" bench barrier
expect_err "ARBOR_WINDOW 0" 2 "arbor bench: ARBOR_WINDOW='0': want auto or a whole number 1..4096" \
    env ARBOR_WINDOW=0 ARBOR_SECRET=s "$ARBOR" bench barrier
expect_err "switch: a job given twice, one prefix" 2 "^arbor switch: job 1 given twice\$" \
    "$ARBOR" switch --job 1:a --job 1:b --listen 127.0.0.1:0
# under arbor run a usage error of the ranks' command prints once (rank 0's),
# then arbor run names the rank that exited, and exits 2 as its ranks did
"$ARBOR" run -n 4 -- "$ARBOR" bench allreduce -d f8 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(grep -c "arbor bench: -d 'f8'" "$TMP/err")" -eq 1 ] &&
    [ "$(wc -l <"$TMP/err")" -eq 2 ] && grep -q "^arbor run: rank [0-3] exited with status 2\$" "$TMP/err"; then
    pass "a usage error under arbor run prints once"
else
    fail "usage error under arbor run" "status $rc" "$(cat "$TMP/err")"
fi
# a malformed ARBOR_* variable is every rank's: said once, and arbor run exits 2
ARBOR_CC=bogus "$ARBOR" run -n 4 -- "$ARBOR" bench allreduce -b 1K -e 1K -n 1 -w 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(grep -c "ARBOR_CC='bogus'" "$TMP/err")" -eq 1 ]; then
    pass "a bad ARBOR_* under arbor run prints once, and arbor run exits 2"
else
    fail "bad ARBOR_* under arbor run" "status $rc" "$(cat "$TMP/err")"
fi
expect_err "run --switch with a malformed address" 2 "arbor run: --switch: address '127.0.0.1:': port is not 0..65535" \
    "$ARBOR" run -n 2 --switch 127.0.0.1: --secret s -- true
expect_err "switch --threads 0" 2 "arbor switch: --threads '0': want 1..64" "$ARBOR" switch --threads 0 --job 1:s
expect_err "run --switch-threads 65" 2 "arbor run: --switch-threads '65': want 1..64" \
    "$ARBOR" run -n 2 --switch-threads 65 -- true
expect_err "switch --ecn with KMIN above KMAX" 2 \
    "arbor switch: --ecn '5,1,0.2': want off, on, or KMIN,KMAX,PMAX" "$ARBOR" switch --ecn 5,1,0.2 --job 1:s
expect_status "run --switch-ecn with sizes in K and M" 0 "$ARBOR" run -n 2 --switch-ecn 64K,1M,0.2 -- true
expect_err "run --switch-ecn not a setting" 2 "arbor run: --switch-ecn 'x': want off, on, or KMIN,KMAX,PMAX" \
    "$ARBOR" run -n 2 --switch-ecn x -- true
expect_err "switch without a job" 2 "arbor switch: no job admitted" "$ARBOR" switch
expect_err "switch: a bad --listen is named before the missing job, as every bad value" 2 \
    "^arbor switch: --listen: address 'nohost.invalid': host 'nohost.invalid' does not resolve\$" \
    "$ARBOR" switch --listen nohost.invalid
expect_err "  ... the same with a job" 2 "^arbor switch: --listen: address 'nohost.invalid': host" \
    "$ARBOR" switch --job 1:s --listen nohost.invalid
expect_err "  ... a peer's address" 2 "^arbor switch: --peer: address '127.0.0.1:x': port is not 0..65535\$" \
    "$ARBOR" switch --peer 2.0=127.0.0.1:x
printf '[switch]\nlisten = 127.0.0.1:70000\n' >"$TMP/badlisten.ini"
expect_err "  ... a config file's listen, by file and line" 2 \
    "^arbor switch: .*badlisten.ini:2: address '127.0.0.1:70000': port is not 0..65535\$" \
    "$ARBOR" switch --config "$TMP/badlisten.ini"
expect_err "switch bad node" 2 "arbor switch: --node 'x': want LEVEL.INDEX" "$ARBOR" switch --node x --job 1:s
expect_err "switch node outside the fabric" 2 "node 2.0 is not a switch of star:256" \
    "$ARBOR" switch --node 2.0 --job 1:s --listen 127.0.0.1:0
# outside a job (none of the variables arbor run sets): how to run it, in one line
NOJOB="env -u ARBOR_RANK -u ARBOR_SIZE -u ARBOR_SWITCH -u ARBOR_SECRET"
expect_err "bench outside a job names arbor run" 2 \
    "^arbor bench: not in a job: run it as every rank, arbor run -n N -- arbor bench barrier \.\.\. \(or with ARBOR_RANK, ARBOR_SIZE, ARBOR_SWITCH and ARBOR_SECRET set, docs/runtime.md\)\$" \
    $NOJOB "$ARBOR" bench barrier
# any one of them set: a job's variables, checked as such
expect_err "bench with ARBOR_RANK alone: no job secret" 2 "rank 0: no job secret" \
    $NOJOB ARBOR_RANK=0 "$ARBOR" bench barrier
expect_err "bench with ARBOR_SIZE alone: no job secret" 2 "no job secret" \
    $NOJOB ARBOR_SIZE=2 "$ARBOR" bench barrier
expect_err "bench with ARBOR_SWITCH alone: no job secret" 2 "no job secret" \
    $NOJOB ARBOR_SWITCH=127.0.0.1:9 "$ARBOR" bench barrier
expect_err "bench with ARBOR_SECRET alone: the variables checked" 2 "ARBOR_WINDOW='0'" \
    $NOJOB ARBOR_SECRET=s ARBOR_WINDOW=0 "$ARBOR" bench barrier
ARBOR_SIZE=x expect_err "bench with a bad ARBOR_SIZE" 2 "ARBOR_SIZE='x': not a whole number" \
    env ARBOR_SIZE=x "$ARBOR" bench barrier

# the one size syntax: -b 256KiB -e 1M -f 4 is 2^18 then 2^20 bytes (M binary, as nccl-tests)
out=$("$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 256KiB -e 1M -f 4 -n 1 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -v '^#' | awk '{printf "%s ", $1}')" = \
    "$((256 * 1024)) $((1024 * 1024)) " ] && [ "$(wrong "$out")" -eq 0 ]; then
    pass "bench -b 256KiB -e 1M: sizes 256 KiB and 1 MiB"
else
    fail "bench sizes with units" "$out" "$(cat "$TMP/err")"
fi
# KB decimal: 512000 then 1024000, below -e 1M = 1048576 (not below a decimal 10^6)
out=$("$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 512KB -e 1M -f 2 -n 1 -w 0 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -v '^#' | awk '{printf "%s ", $1}')" = \
    "$((512 * 1000)) $((2 * 512 * 1000)) " ]; then
    pass "bench -b 512KB -e 1M: 512000 then 1024000 bytes"
else
    fail "bench -b 512KB -e 1M" "$out" "$(cat "$TMP/err")"
fi

# ---- a configuration file ----------------------------------------------------
printf '[switch]\nlisen = 127.0.0.1:0\n' >"$TMP/bad.ini"
expect_err "config: an unknown key names file and line" 2 "bad.ini:2: unknown key 'lisen'" \
    "$ARBOR" switch --config "$TMP/bad.ini"
printf '[switch]\nlisten = 127.0.0.1:0\ntopo = star:8\nslots = 512\n[jobs]\n4 = from-a-file\n' \
    >"$TMP/sw.ini"
"$ARBOR" switch --config "$TMP/sw.ini" --port-file "$TMP/portc" --for 20 2>"$TMP/swc.err" &
SWC=$!
PC=$(port_of "$TMP/portc")
printf 'from-a-file\n' >"$TMP/secret"
out=$("$ARBOR" run -n 3 --switch "127.0.0.1:$PC" --topo star:8 --job 4 --secret-file "$TMP/secret" -- \
    "$ARBOR" bench allgather -b 3K -e 3K -n 2 -w 1 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ]; then
    pass "a switch configured from a file serves its job"
else
    fail "config file" "$out" "$(cat "$TMP/err" "$TMP/swc.err")"
fi
kill $SWC 2>/dev/null
wait $SWC 2>/dev/null
# an option after --config overrides it: here the secret of its job 4
"$ARBOR" switch --config "$TMP/sw.ini" --job 4:from-the-command-line --port-file "$TMP/porto" --for 20 \
    2>"$TMP/swo.err" &
SWO=$!
PO=$(port_of "$TMP/porto")
out=$("$ARBOR" run -n 2 --switch "127.0.0.1:$PO" --topo star:8 --job 4 --secret from-the-command-line -- \
    "$ARBOR" bench allreduce -b 1K -e 1K -n 1 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ]; then
    pass "--job after --config overrides the secret of the file's job"
else
    fail "--job after --config" "$out" "$(cat "$TMP/err" "$TMP/swo.err")"
fi
kill $SWO 2>/dev/null
wait $SWO 2>/dev/null
expect_err "config: a job an earlier option gave" 2 "sw.ini:6: job 4 was given before --config" \
    "$ARBOR" switch --job 4:x --config "$TMP/sw.ini"
# --stats and --for on the clock: lines due at 0.5, 1.0, 1.5 and 2.0 s, and
# one at exit, 2.05 s after the start. A schedule on the clock prints all
# four periodic lines however late the process is woken (a line past due is
# printed before --for is checked); one that counts slices and runs late
# (a 10% overrun: the fourth line at 2.2 s) prints three. So the count is
# the test; the wall time only bounds it: never early, and not stuck (the
# margin, a second beyond what a switch of --for 0.01 costs to start and
# stop here, is for a loaded machine, not a figure).
ms_of() { # CMD...: its wall time in ms
    _t0=$(date +%s%N)
    "$@"
    echo $((($(date +%s%N) - _t0) / 1000000))
}
base1=$(ms_of "$ARBOR" switch --listen 127.0.0.1:0 --job 1:s --for 0.01 2>/dev/null)
ms=$(ms_of "$ARBOR" switch --listen 127.0.0.1:0 --job 1:s --stats 0.5 --for 2.05 2>"$TMP/stats.err")
base2=$(ms_of "$ARBOR" switch --listen 127.0.0.1:0 --job 1:s --for 0.01 2>/dev/null)
base=$((base1 > base2 ? base1 : base2))
hi=$((2050 + base + 1000))
if [ "$(grep -c 'rx_pkts=' "$TMP/stats.err")" -eq 5 ] && [ "$ms" -ge 2050 ] && [ "$ms" -le $hi ]; then
    pass "--stats 0.5 --for 2.05: four periodic lines and one at exit, after $ms ms (<= $hi)"
else
    fail "--stats schedule" "$(grep -c 'rx_pkts=' "$TMP/stats.err") lines, $ms ms, want 5 lines, 2050..$hi ms (a switch of 10 ms took $base1, $base2 ms)" \
        "$(cat "$TMP/stats.err")"
fi
# the rest of the options: for, stats, drop, seed, no-gso, spin, threads
printf '[switch]\nlisten = 127.0.0.1:0\nfor = 0.3\nstats = 0.1\ndrop = 0.01\nseed = 3\nno-gso = 1\nspin = 10us\nthreads = 2\necn = 5KB,200KB,0.01\n[jobs]\n4 = s\n' \
    >"$TMP/sw2.ini"
t0=$(date +%s)
"$ARBOR" switch --config "$TMP/sw2.ini" 2>"$TMP/swc2.err"
rc=$?
t1=$(date +%s)
if [ $rc -eq 0 ] && [ $((t1 - t0)) -le 3 ] && [ "$(grep -c 'rx_pkts=' "$TMP/swc2.err")" -ge 2 ]; then
    pass "a configuration file takes for, stats, drop, seed, no-gso, spin, threads, ecn"
else
    fail "config file keys" "status $rc after $((t1 - t0)) s" "$(cat "$TMP/swc2.err")"
fi
printf '[switch]\nthreads = 65\n' >"$TMP/bad3.ini"
expect_err "config: threads out of range" 2 "bad3.ini:2: threads '65': want 1..64" \
    "$ARBOR" switch --config "$TMP/bad3.ini"
printf '[switch]\necn = 1,2\n' >"$TMP/bad4.ini"
expect_err "config: a bad ecn names file, line and rule" 2 "bad4.ini:2: ecn '1,2': want off, on, or KMIN" \
    "$ARBOR" switch --config "$TMP/bad4.ini"
printf '[switch]\nno-gso = yes\n' >"$TMP/bad2.ini"
expect_err "config: a bad value names file, line, key and rule" 2 "bad2.ini:2: no-gso 'yes': want 0 or 1" \
    "$ARBOR" switch --config "$TMP/bad2.ini"
# a leaf of a two-tier fabric without its spine as a peer (here a leaf instead): warned
"$ARBOR" switch --topo leafspine:2,2,1 --node 1.0 --listen 127.0.0.1:0 --peer 1.1=127.0.0.1:9 \
    --job 1:s --for 0.2 2>"$TMP/leaf.err"
has "a leaf without its spine as a peer is warned about" "$(cat "$TMP/leaf.err")" \
    "arbor switch: warning: node 1.0 of leafspine:2,2,1 is linked to switch 2.0 (above), which is no peer"

# ---- a rank on another fabric than its switch's: refused at once, named ----------
"$ARBOR" switch --listen 127.0.0.1:0 --port-file "$TMP/portf" --job 1:s --for 20 2>"$TMP/swf.err" &
SWF=$!
PF=$(port_of "$TMP/portf")
t0=$(date +%s)
ARBOR_TOPO=leafspine:2,2,1 ARBOR_RANK=0 ARBOR_SIZE=2 ARBOR_SWITCH=127.0.0.1:$PF ARBOR_SECRET=s \
    "$ARBOR" bench barrier -n 1 -w 0 >/dev/null 2>"$TMP/fab.err"
rc=$?
t1=$(date +%s)
if [ $rc -eq 1 ] && [ $((t1 - t0)) -le 2 ] &&
    grep -q "refused job 1 rank 0: this rank's fabric (ARBOR_TOPO) is not the switch's.*(this rank's is leafspine:2,2,1)" "$TMP/fab.err"; then
    pass "a rank on another fabric than its switch's is refused at once, naming it"
else
    fail "fabric mismatch" "status $rc after $((t1 - t0)) s" "$(cat "$TMP/fab.err")"
fi
kill $SWF 2>/dev/null
wait $SWF 2>/dev/null

# ---- ECN marking ------------------------------------------------------------------
# a switch that marks every datagram: DCQCN's ranks hear marks and cut, results
# exact, the switch counts its marks; marking off: no mark anywhere
for setting in 0,0,1 off; do
    ARBOR_CC=dcqcn "$ARBOR" run -n 3 --switch-ecn $setting -- "$ARBOR" bench allreduce -b 64K -e 64K \
        -n 3 -w 1 -c -s >"$TMP/ecn.out" 2>"$TMP/ecn.err"
    rc=$?
    marks=$(sed -n 's/.* ce_marks=\([0-9]*\).*/\1/p' "$TMP/ecn.err" | sort -n | head -1)
    cuts=$(sed -n 's/.* cc_decreases=\([0-9]*\).*/\1/p' "$TMP/ecn.err" | awk '{ s += $1 } END { print s + 0 }')
    if [ "$setting" = off ]; then
        most=$(sed -n 's/.* ce_marks=\([0-9]*\).*/\1/p' "$TMP/ecn.err" | sort -n | tail -1)
        if [ $rc -eq 0 ] && [ "$(wrong "$(cat "$TMP/ecn.out")")" -eq 0 ] && [ "$most" = 0 ]; then
            pass "run --switch-ecn off: no rank hears a mark"
        else
            fail "ecn off" "status $rc, marks $most" "$(cat "$TMP/ecn.err")"
        fi
    elif [ $rc -eq 0 ] && [ "$(wrong "$(cat "$TMP/ecn.out")")" -eq 0 ] && [ "${marks:-0}" -gt 0 ] &&
        [ "$cuts" -gt 0 ]; then
        pass "run --switch-ecn 0,0,1: every rank hears marks ($marks or more), DCQCN cuts ($cuts), exact"
    else
        fail "ecn marks" "status $rc, marks ${marks:-none}, cuts $cuts" "$(cat "$TMP/ecn.err")"
    fi
done
"$ARBOR" switch --listen 127.0.0.1:0 --job 1:s --ecn off --for 0.2 2>"$TMP/sw_ecn.err"
has "switch counters name ecn_marks, queue_peak and queue_mean" "$(cat "$TMP/sw_ecn.err")" \
    "ecn_marks=0 queue_peak=0 queue_mean=0"

# ---- a rank that fails stops the job at once ------------------------------------
t0=$(date +%s)
expect_err "run: a failing rank is named, the others stopped" 1 "arbor run: rank 1 exited with status 3" \
    "$ARBOR" run -n 3 --timeout 30s -- sh -c '[ "$ARBOR_RANK" = 1 ] && exit 3; exec "$0" bench barrier -n 1000 -w 0 >/dev/null 2>&1' "$ARBOR"
t1=$(date +%s)
if [ $((t1 - t0)) -le 5 ]; then pass "... within $((t1 - t0)) s, not the 30 s deadline"; else fail "run stop" "$((t1 - t0)) s"; fi

# ---- a signal to arbor run stops its ranks ---------------------------------------
# alive PID: the process exists and is no zombie.
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
# long_job DIR: arbor run with 3 ranks that would run for minutes, each writing
# its pid to DIR/pid.RANK; waits until all three wrote.
long_job() {
    mkdir -p "$1"
    "$ARBOR" run -n 3 --timeout 30s -- sh -c 'echo $$ >"$0/pid.$ARBOR_RANK"; exec "$1" bench barrier -n 1000000 -w 0 >/dev/null 2>&1' "$1" "$ARBOR" 2>"$1/run.err" &
    RUN=$!
    for _ in $(seq 50); do [ -s "$1/pid.0" ] && [ -s "$1/pid.1" ] && [ -s "$1/pid.2" ] && break; sleep 0.1; done
    sleep 0.5
}
# ranks_gone DIR SECONDS: every rank of DIR has exited within SECONDS.
ranks_gone() {
    for _ in $(seq $(($2 * 10))); do
        n=0
        for r in 0 1 2; do alive "$(cat "$1/pid.$r")" && n=$((n + 1)); done
        [ $n -eq 0 ] && return 0
        sleep 0.1
    done
    return 1
}
long_job "$TMP/stop"
t0=$(date +%s)
kill -TERM $RUN
wait $RUN
rc=$?
t1=$(date +%s)
if [ $rc -eq 143 ] && ranks_gone "$TMP/stop" 1 && [ $((t1 - t0)) -le 6 ] &&
    grep -q "arbor run: stopped by Terminated" "$TMP/stop/run.err"; then
    pass "SIGTERM to arbor run stops its ranks and exits 128+15 within $((t1 - t0)) s"
else
    fail "SIGTERM to arbor run" "status $rc after $((t1 - t0)) s" "$(cat "$TMP/stop/run.err")"
fi
# SIGUSR1 to arbor run: its switch's counters, and the run goes on
long_job "$TMP/usr1"
kill -USR1 $RUN
sleep 0.5
if alive $RUN && grep -q "^arbor run: switch 1.0: rx_pkts=[1-9]" "$TMP/usr1/run.err"; then
    pass "SIGUSR1 to arbor run prints its switch's counters and the run goes on"
else
    fail "SIGUSR1 to arbor run" "$(cat "$TMP/usr1/run.err")"
fi
kill -TERM $RUN
wait $RUN
ranks_gone "$TMP/usr1" 6 || fail "SIGUSR1 run" "ranks still running after SIGTERM"
# started with SIGINT ignored (a script's background job): the SIGINT it
# passes on still stops the ranks, at once, not by SIGKILL 5 s later
mkdir -p "$TMP/ign"
(
    trap '' INT
    exec "$ARBOR" run -n 3 --timeout 30s -- sh -c 'echo $$ >"$0/pid.$ARBOR_RANK"; exec "$1" bench barrier -n 1000000 -w 0 >/dev/null 2>&1' "$TMP/ign" "$ARBOR" 2>"$TMP/ign/run.err"
) &
RUN=$!
for _ in $(seq 50); do [ -s "$TMP/ign/pid.0" ] && [ -s "$TMP/ign/pid.1" ] && [ -s "$TMP/ign/pid.2" ] && break; sleep 0.1; done
sleep 0.5
t0=$(date +%s)
kill -INT $RUN
wait $RUN
t1=$(date +%s)
if ranks_gone "$TMP/ign" 1 && [ $((t1 - t0)) -le 3 ] && ! grep -q "killed" "$TMP/ign/run.err"; then
    pass "arbor run started with SIGINT ignored: the SIGINT it passes on stops its ranks ($((t1 - t0)) s)"
else
    fail "SIGINT ignored" "$((t1 - t0)) s" "$(cat "$TMP/ign/run.err")"
fi
long_job "$TMP/kill"
kill -KILL $RUN
wait $RUN 2>/dev/null
if ranks_gone "$TMP/kill" 3; then
    pass "arbor run killed by SIGKILL: its ranks die with it"
else
    fail "SIGKILL to arbor run" "ranks still running 3 s later"
    for r in 0 1 2; do kill "$(cat "$TMP/kill/pid.$r")" 2>/dev/null; done
fi

# ---- every collective, checked, at 3 ranks; one at 8 -------------------------
for c in allreduce reduce reducescatter broadcast allgather; do
    out=$("$ARBOR" run -n 3 -- "$ARBOR" bench $c -b 1K -e 256K -f 4 -n 3 -w 1 -c -r 2 2>"$TMP/err")
    rc=$?
    if [ $rc -eq 0 ] && [ "$(rows "$out")" -eq 5 ] && [ "$(wrong "$out")" -eq 0 ]; then
        pass "bench $c at 3 ranks: 5 sizes, #wrong 0"
    else
        fail "bench $c at 3 ranks" "status $rc" "$out" "$(cat "$TMP/err")"
    fi
done
out=$("$ARBOR" run -n 8 -- "$ARBOR" bench allreduce -b 64K -e 64K -n 2 -w 1 -c -d bf16 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 1 ]; then
    pass "bench allreduce bf16 at 8 ranks: #wrong 0"
else
    fail "allreduce at 8 ranks" "$out" "$(cat "$TMP/err")"
fi
out=$("$ARBOR" run -n 4 -- "$ARBOR" bench barrier -n 5 -w 1 2>"$TMP/err")
has "bench barrier prints one row" "$out" "none    -1"
has "bench barrier's header names no dtype or op" "$out" "^# arbor bench barrier: 4 ranks, 5 iterations"
out=$("$ARBOR" run -n 2 -- "$ARBOR" bench broadcast -b 1K -e 1K -n 1 -w 0 2>"$TMP/err")
has "bench broadcast's header names the dtype, no op" "$out" "^# arbor bench broadcast: 2 ranks, f32, 1 iteration ("
expect_err "bench -o for broadcast is refused" 2 "arbor bench: -o: broadcast has no operator" \
    "$ARBOR" bench broadcast -o max
expect_err "bench: a size below one element is refused" 2 \
    "arbor bench: -b 3: below one f32 element \(4 B\); want -b 4 or more" \
    env ARBOR_SECRET=s "$ARBOR" bench allreduce -b 3 -e 3
expect_err "bench: allgather's size is per rank" 2 "arbor bench: -b 8: below one f32 element per rank \(12 B\)" \
    env ARBOR_SECRET=s ARBOR_SIZE=3 "$ARBOR" bench allgather -b 8 -e 8

# nccl-tests' columns: busbw = algbw x 2(n-1)/n for allreduce at 4 ranks.
out=$("$ARBOR" run -n 4 -- "$ARBOR" bench allreduce -b 1M -e 1M -n 3 -w 1 2>"$TMP/err")
if printf '%s\n' "$out" | grep -v '^#' | awk '{ if ($1 != 1048576 || $2 != 262144 || $3 != "float" ||
        $4 != "sum" || $5 != -1 || $9 != "N/A") exit 1
        a = 1048576 / $6 / 1e3; d = $8 - 1.5 * $7; if (d < 0) d = -d
        exit !($7 > a - 0.0006 && $7 < a + 0.0006 && d <= 0.0016) }'; then
    pass "bench columns: size, count, type, redop, root, algbw = size / time, busbw = 1.5 algbw"
else
    fail "bench columns" "$out"
fi

# ---- loss on every send of ranks and switch -----------------------------------
out=$("$ARBOR" run -n 4 --drop 0.02 --switch-drop 0.02 --seed 3 -- \
    "$ARBOR" bench allreduce -b 4K -e 1M -f 4 -n 3 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 5 ]; then
    pass "2% loss on ranks and switch: every allreduce exact"
else
    fail "loss" "$out" "$(cat "$TMP/err")"
fi

# Heavy loss: a quarter of every send dropped. Each offset ends in rounds of
# the bypass repair, which must keep coming (at least every 200 ms) until
# every member's answer got through; the deadline is far above what the
# rounds need (docs/runtime.md section 5).
t0=$(date +%s)
out=$("$ARBOR" run -n 4 --drop 0.25 --switch-drop 0.25 --seed 5 --timeout 20s -- \
    "$ARBOR" bench allreduce -b 256K -e 256K -n 2 -w 0 -c 2>"$TMP/err")
rc=$?
t1=$(date +%s)
if [ $rc -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 1 ]; then
    pass "25% loss on ranks and switch: 256 KiB allreduces exact ($((t1 - t0)) s)"
else
    fail "heavy loss" "status $rc after $((t1 - t0)) s" "$out" "$(cat "$TMP/err")"
fi

# ---- congestion controllers (ARBOR_CC) -----------------------------------------
# Each of cc.h's kinds drives every rank's responders; with loss on every
# send every collective still completes exactly, and the delay-based kinds'
# controllers update. (Not necessarily on every rank: a TIMELY whose loops
# all stay short sits at its line rate, where an increase changes nothing;
# DCQCN acts on CE marks, which the switch sets only past 100 KB queued: its
# cuts are checked below, with a switch marking everything.)
for k in timely swift dcqcn oscar; do
    out=$(ARBOR_CC=$k "$ARBOR" run -n 4 --drop 0.02 --switch-drop 0.02 --seed 7 -- \
        "$ARBOR" bench allreduce -b 64K -e 1M -f 16 -n 2 -w 0 -c -s 2>"$TMP/err")
    rc=$?
    updates=$(sed -n 's/.* cc_decreases=\([0-9]*\) cc_increases=\([0-9]*\) .*/\1 \2/p' "$TMP/err" |
        awk '{ s += $1 + $2 } END { print s + 0 }')
    acted=1
    [ $k != dcqcn ] && [ "$updates" -eq 0 ] && acted=0
    if [ $rc -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 2 ] &&
        [ "$(grep -c "cc=$k " "$TMP/err")" -eq 4 ] && [ $acted -eq 1 ]; then
        pass "ARBOR_CC=$k at 2% loss: allreduces exact, the controllers update"
    else
        fail "ARBOR_CC=$k" "status $rc" "$out" "$(cat "$TMP/err")"
    fi
done
# A small AllReduce is one channel (docs/protocol.md section 10): rank 1, a
# requester only, sends per call its REGISTER, its request and its END, each
# twice (a message of one offset, section 6.5): 6 packets, where as one of
# four channels' requesters and a responder it sent 33 (at most 12 allowed:
# REGISTERs retried on a loaded machine before their acks come). Its result
# comes from the switch (seeded credits, section 5), so every rank returns
# at about the same time. With ARBOR_SWITCH_RESULTS=0 the result comes from
# rank 0, whose calls then start first: a credit of its next call reaches
# the others before theirs (early credits, stashed, answered at their start).
for sr in 1 0; do
    out=$(ARBOR_SWITCH_RESULTS=$sr "$ARBOR" run -n 4 -- "$ARBOR" bench allreduce -b 1K -e 1K -n 50 \
        -w 5 -c -s 2>"$TMP/err")
    rc=$?
    r1=$(grep 'rank 1:' "$TMP/err")
    calls=$(echo "$r1" | sed -n 's/.* calls=\([0-9]*\) .*/\1/p')
    tx=$(echo "$r1" | sed -n 's/.* tx_pkts=\([0-9]*\) .*/\1/p')
    early=$(sed -n 's/.* early_credits=\([0-9]*\).*/\1/p' "$TMP/err" | awk '{ s += $1 } END { print s + 0 }')
    if [ $rc -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ -n "$calls" ] && [ "$calls" -gt 0 ] &&
        [ "$tx" -le $((calls * 12)) ] && { [ $sr = 1 ] || [ "$early" -gt 0 ]; }; then
        pass "1 KiB AllReduce, ARBOR_SWITCH_RESULTS=$sr: one channel ($tx packets from rank 1 in $calls calls), early credits ($early)"
    else
        fail "small AllReduce, ARBOR_SWITCH_RESULTS=$sr" "status $rc calls $calls tx $tx early $early" "$out" "$(cat "$TMP/err")"
    fi
done
# bench -B: a barrier before every call. 2 sizes x (1 warm-up + 3 timed)
# calls, and per size the two AllReduces that gather the table's row: 12
# calls on each rank without -B, 12 + 8 barriers with it
"$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 1K -e 2K -n 3 -w 1 -s >/dev/null 2>"$TMP/nob"
rc1=$?
"$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 1K -e 2K -n 3 -w 1 -s -B >/dev/null 2>"$TMP/b"
rc2=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(grep -c ' calls=12 ' "$TMP/nob")" -eq 2 ] &&
    [ "$(grep -c ' calls=20 ' "$TMP/b")" -eq 2 ]; then
    pass "bench -B: a barrier before each of the 8 calls (20 calls a rank, 12 without)"
else
    fail "bench -B" "status $rc1 $rc2" "$(cat "$TMP/nob" "$TMP/b")"
fi
# arbor run spins 200 us by default with at most 4 ranks a core
# (docs/runtime.md section 7): some wait of 50 calls finds its datagram
# while spinning; --spin 0 or ARBOR_SPIN=0 in the environment: none does
hits() { sed -n 's/.* spin_hits=\([0-9]*\) .*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'; }
"$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 1K -e 1K -n 50 -w 5 -s >/dev/null 2>"$TMP/spin1"
rc1=$?
"$ARBOR" run -n 2 --spin 0 -- "$ARBOR" bench allreduce -b 1K -e 1K -n 50 -w 5 -s >/dev/null 2>"$TMP/spin2"
rc2=$?
ARBOR_SPIN=0 "$ARBOR" run -n 2 -- "$ARBOR" bench allreduce -b 1K -e 1K -n 50 -w 5 -s >/dev/null \
    2>"$TMP/spin3"
rc3=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && [ "$(hits "$TMP/spin1")" -gt 0 ] &&
    [ "$(hits "$TMP/spin2")" -eq 0 ] && [ "$(hits "$TMP/spin3")" -eq 0 ]; then
    pass "arbor run spins by default on few ranks a core; --spin 0 and ARBOR_SPIN=0 do not"
else
    fail "default spin" "status $rc1 $rc2 $rc3" "$(cat "$TMP/spin1" "$TMP/spin2" "$TMP/spin3")"
fi
out=$(ARBOR_CC=oscar ARBOR_BASE_RTT=40us ARBOR_LINE_RATE=10G "$ARBOR" run -n 2 -- \
    "$ARBOR" bench reducescatter -b 64K -e 64K -n 1 -w 0 -c -s 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && grep -q "cc=oscar .*base_rtt_us=40.0" "$TMP/err"; then
    pass "ARBOR_BASE_RTT sets the base loop, reported by bench -s"
else
    fail "ARBOR_BASE_RTT" "$out" "$(cat "$TMP/err")"
fi
# ARBOR_WINDOW=auto (the default): the loop's worth of credits at a channel's
# share of the link, within 4..16. A frame is 42 B of Ethernet, IP and UDP,
# the runtime's 16 B header, the Arbor header's 20 B and 8192 B of payload:
# 66160 bits. 4 ranks' AllReduce: 4 channels share the rank's link, so at
# 1 Gbit/s a channel has 250 Mbit/s; over a base loop of 3 ms that is
# 750000 bits, 11.3 frames: 12 credits. At 1 ms, 3.8 frames: the floor, 4;
# at 5 ms, 18.9: the ceiling, 16. ARBOR_WINDOW=7 is held as it is, and
# ARBOR_CC=disabled's auto is 16 whatever the loop. (No -c:
# its closing check is a call of one channel, whose share is the whole link.)
win_of() { grep -o 'window=[0-9]*' "$1" | cut -d= -f2 | sort -u | tr '\n' ' '; }
for c in "3ms auto 12 fixed" "1ms auto 4 fixed" "5ms auto 16 fixed" "3ms 7 7 fixed" \
    "3ms auto 16 disabled"; do
    set -- $c
    out=$(ARBOR_CC=$4 ARBOR_BASE_RTT=$1 ARBOR_LINE_RATE=1G ARBOR_WINDOW=$2 "$ARBOR" run -n 4 -- \
        "$ARBOR" bench allreduce -b 1M -e 1M -n 2 -w 0 -s 2>"$TMP/err")
    if [ $? -eq 0 ] && [ "$(rows "$out")" -eq 1 ] && [ "$(win_of "$TMP/err")" = "$3 " ]; then
        pass "ARBOR_WINDOW=$2 ($4) at 1 Gbit/s, base loop $1: $3 credits a channel"
    else
        fail "ARBOR_WINDOW=$2, base loop $1" "windows: $(win_of "$TMP/err") (want $3)" "$out" \
            "$(cat "$TMP/err")"
    fi
done
expect_err "ARBOR_WINDOW above 4096" 2 "ARBOR_WINDOW='4097': want auto or a whole number 1..4096" \
    env ARBOR_SECRET=s ARBOR_WINDOW=4097 "$ARBOR" bench allreduce
expect_err "ARBOR_CC names its choices" 2 \
    "ARBOR_CC='cubic': want fixed, disabled, timely, swift, dcqcn or oscar" \
    env ARBOR_SECRET=s ARBOR_CC=cubic "$ARBOR" bench allreduce
expect_err "ARBOR_LINE_RATE names its rule" 2 \
    "ARBOR_LINE_RATE='fast': not a rate of 1M to 10T bit/s, such as 25G" \
    env ARBOR_SECRET=s ARBOR_LINE_RATE=fast "$ARBOR" bench allreduce
expect_err "ARBOR_BASE_RTT names its rule" 2 \
    "ARBOR_BASE_RTT='2s': not 0 or a duration of 1us to 1s, such as 50us" \
    env ARBOR_SECRET=s ARBOR_BASE_RTT=2s "$ARBOR" bench allreduce

# ---- a multi-tier fabric -----------------------------------------------------
out=$("$ARBOR" run -n 4 --topo leafspine:2,2,1 -- "$ARBOR" bench reducescatter -b 4K -e 64K -f 4 -n 2 -w 1 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 3 ]; then
    pass "three switches (leafspine:2,2,1): reducescatter exact"
else
    fail "leafspine" "$out" "$(cat "$TMP/err")"
fi

# ---- a switch of several threads ------------------------------------------------
out=$("$ARBOR" run -n 4 --switch-threads 2 -- "$ARBOR" bench allreduce -b 4K -e 1M -f 16 -n 3 -w 1 -c -d bf16 2>"$TMP/err") &&
    out2=$("$ARBOR" run -n 3 --switch-threads 3 --drop 0.02 --switch-drop 0.02 -- "$ARBOR" bench allgather \
        -b 3K -e 768K -f 16 -n 3 -w 1 -c 2>>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 3 ] && [ "$(wrong "$out2")" -eq 0 ]; then
    pass "switches of 2 and 3 threads: allreduce bf16 at 4 ranks, allgather at 3 with 2% loss, exact"
else
    fail "switch threads" "$out $out2" "$(cat "$TMP/err")"
fi

# a second switch of several threads on an address in use is refused, as with one
"$ARBOR" switch --threads 2 --listen 127.0.0.1:0 --port-file "$TMP/port6" --job 1:s --for 5 \
    2>/dev/null &
SW6=$!
P6=$(port_of "$TMP/port6")
expect_err "a 2-thread switch on the port of another is refused" 1 "Address already in use" \
    "$ARBOR" switch --threads 2 --listen 127.0.0.1:$P6 --job 1:s --for 1
kill $SW6 2>/dev/null
wait $SW6 2>/dev/null

# a plain 'arbor' as the rank command is this arbor, wherever PATH leads (here
# nowhere: a PATH without it)
out=$(PATH=/usr/bin:/bin "$ARBOR" run -n 2 -- arbor bench allreduce -b 1K -e 1K -n 1 -w 0 -c 2>"$TMP/err")
if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 1 ]; then
    pass "run -- arbor bench: the rank command 'arbor' is this arbor"
else
    fail "run -- arbor bench: the rank command 'arbor' is this arbor" "$out" "$(cat "$TMP/err")"
fi

# ---- io_uring: ranks and switch threads on rings, or shown as skipped --------------
expect_err "run --io epoll" 2 "arbor run: --io 'epoll': want mmsg or uring" "$ARBOR" run -n 2 --io epoll -- true
expect_err "switch --io epoll" 2 "arbor switch: --io 'epoll': want mmsg or uring" "$ARBOR" switch --io epoll --job 1:s
out=$("$ARBOR" run -n 3 --io uring --switch-threads 2 --drop 0.02 -- "$ARBOR" bench allreduce -b 4K -e 1M \
    -f 16 -n 3 -w 1 -c -s 2>"$TMP/err")
rc=$?
if grep -q "not built" "$TMP/err"; then
    skip "io_uring" "not built (no liburing): $(grep -m1 'not built' "$TMP/err")"
elif grep -q "io_uring: the kernel refused a ring" "$TMP/err" && [ $rc -eq 0 ] &&
    [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 3 ]; then
    # the run fell back to sendmmsg and was exact; only the rings are untested
    skip "io_uring" "the kernel refuses rings here: $(grep -m1 'the kernel refused a ring' "$TMP/err")"
elif [ $rc -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 3 ] &&
    [ "$(grep -c 'io_uring=1' "$TMP/err")" -eq 3 ]; then
    pass "io_uring: 3 ranks on rings, a switch of 2 threads on rings, 2% loss: allreduce exact"
else
    fail "io_uring" "status $rc" "$out" "$(cat "$TMP/err")"
fi

# ---- three switch processes forming a tree ------------------------------------
# Each must know the others' addresses when it starts: ports from this shell's
# pid, away from the ephemeral range.
B=$((20000 + $$ % 20000))
LS="--topo leafspine:2,2,1 --job 6:tree --for 30"
# shellcheck disable=SC2086
"$ARBOR" switch $LS --node 1.0 --listen 127.0.0.1:$B --peer 2.0=127.0.0.1:$((B + 2)) 2>"$TMP/l0.err" &
T0=$!
# shellcheck disable=SC2086
"$ARBOR" switch $LS --node 1.1 --threads 2 --listen 127.0.0.1:$((B + 1)) --peer 2.0=127.0.0.1:$((B + 2)) 2>"$TMP/l1.err" &
T1=$!
# shellcheck disable=SC2086
"$ARBOR" switch $LS --node 2.0 --threads 3 --listen 127.0.0.1:$((B + 2)) --peer 1.0=127.0.0.1:$B \
    --peer 1.1=127.0.0.1:$((B + 1)) 2>"$TMP/sp.err" &
T2=$!
sleep 0.3
for r in 0 1 2 3; do
    env ARBOR_RANK=$r ARBOR_SIZE=4 ARBOR_SWITCH=127.0.0.1:$((B + r / 2)) ARBOR_JOB=6 ARBOR_SECRET=tree \
        ARBOR_TOPO=leafspine:2,2,1 ARBOR_TIMEOUT=20s "$ARBOR" bench allreduce -b 64K -e 1M -f 4 \
        -n 3 -w 1 -c >"$TMP/t$r.out" 2>"$TMP/t$r.err" &
    eval "TR$r=\$!"
done
ok=0
for r in 0 1 2 3; do eval "wait \$TR$r" && ok=$((ok + 1)); done
kill $T0 $T1 $T2 2>/dev/null
wait $T0 $T1 $T2 2>/dev/null
if [ $ok -eq 4 ] && [ "$(wrong "$(cat "$TMP/t0.out")")" -eq 0 ] && [ "$(rows "$(cat "$TMP/t0.out")")" -eq 3 ] &&
    grep -q "aggregates=[1-9]" "$TMP/sp.err" && grep -q "aggregates=[1-9]" "$TMP/l1.err"; then
    pass "three switch processes (two leaves, a spine; 1, 2 and 3 threads): allreduce exact, spine and leaf aggregate"
else
    fail "switch processes" "$ok ranks exited 0" "$(cat "$TMP/t0.out" "$TMP/t0.err" "$TMP/sp.err")"
fi

# ---- a switch listening on 0.0.0.0 answers from the address a rank dialled --------
# Loopback takes all of 127/8: ranks dial 127.0.0.2 and send from 127.0.0.1, so
# an answer from the kernel's choice of source (127.0.0.1) would be dropped.
"$ARBOR" switch --listen 0.0.0.0:0 --port-file "$TMP/porta" --job 7:any --for 30 2>"$TMP/swa.err" &
SWA=$!
PA=$(port_of "$TMP/porta")
for g in "" --no-gso; do
    # shellcheck disable=SC2086
    out=$("$ARBOR" run -n 3 --switch "127.0.0.2:$PA" --job 7 --secret any --timeout 5s $g -- \
        "$ARBOR" bench allreduce -b 4K -e 256K -f 8 -n 2 -w 1 -c 2>"$TMP/err")
    if [ $? -eq 0 ] && [ "$(wrong "$out")" -eq 0 ] && [ "$(rows "$out")" -eq 3 ]; then
        pass "switch on 0.0.0.0, ranks dialling 127.0.0.2 ${g:-(GSO)}: allreduce exact"
    else
        fail "switch on 0.0.0.0 ${g:-(GSO)}" "$out" "$(cat "$TMP/err")"
    fi
done
kill $SWA 2>/dev/null
wait $SWA 2>/dev/null

# ---- two jobs at once on the same host slots of one switch ------------------------
"$ARBOR" switch --listen 127.0.0.1:0 --port-file "$TMP/portj" --job 11:a --job 12:b --for 30 \
    2>"$TMP/swj.err" &
SWJ=$!
PJ=$(port_of "$TMP/portj")
"$ARBOR" run -n 3 --switch "127.0.0.1:$PJ" --job 11 --secret a -- "$ARBOR" bench allreduce \
    -b 64K -e 1M -f 4 -n 3 -w 1 -c >"$TMP/ja.out" 2>"$TMP/ja.err" &
JA=$!
"$ARBOR" run -n 3 --switch "127.0.0.1:$PJ" --job 12 --secret b -- "$ARBOR" bench allgather \
    -b 64K -e 1M -f 4 -n 3 -w 1 -c >"$TMP/jb.out" 2>"$TMP/jb.err"
rb=$?
wait $JA
ra=$?
kill $SWJ 2>/dev/null
wait $SWJ 2>/dev/null
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ "$(wrong "$(cat "$TMP/ja.out")")" -eq 0 ] &&
    [ "$(wrong "$(cat "$TMP/jb.out")")" -eq 0 ] && grep -q " jobs=2 " "$TMP/swj.err"; then
    pass "two jobs at once on the same host slots: both exact"
else
    fail "two jobs on the same slots" "status $ra $rb" "$(cat "$TMP/ja.err" "$TMP/jb.err")"
fi

# ---- admission: a wrong secret -------------------------------------------------
"$ARBOR" switch --listen 127.0.0.1:0 --port-file "$TMP/port1" --job 1:right --job 2:other \
    --for 30 2>"$TMP/sw1.err" &
SW1=$!
P1=$(port_of "$TMP/port1")
env ARBOR_RANK=0 ARBOR_SIZE=2 ARBOR_SWITCH=127.0.0.1:$P1 ARBOR_JOB=1 ARBOR_SECRET=wrong \
    ARBOR_TIMEOUT=3s "$ARBOR" bench barrier >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "MAC did not verify (wrong secret)" "$TMP/err"; then
    pass "a wrong secret is refused with a clear error"
else
    fail "wrong secret" "status $rc" "$(cat "$TMP/err")"
fi
env ARBOR_RANK=0 ARBOR_SIZE=2 ARBOR_SWITCH=127.0.0.1:$P1 ARBOR_JOB=9 ARBOR_SECRET=right \
    ARBOR_TIMEOUT=3s "$ARBOR" bench barrier >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 1 ] && grep -q "admits no such job" "$TMP/err"; then
    pass "an unknown job is refused"
else
    fail "unknown job" "$(cat "$TMP/err")"
fi

# ---- a rank killed mid-collective; another job on the same switch -------------
rank() { # JOB RANK SIZE SECRET ARGS...: a rank of a job on switch 1, in the background
    j=$1 r=$2 n=$3 s=$4
    shift 4
    env ARBOR_RANK=$r ARBOR_SIZE=$n ARBOR_SWITCH=127.0.0.1:$P1 ARBOR_JOB=$j ARBOR_SECRET=$s \
        ARBOR_TIMEOUT=3s "$ARBOR" bench "$@" >"$TMP/j$j.r$r.out" 2>"$TMP/j$j.r$r.err" &
}
rank 1 0 3 right allreduce -b 8M -e 8M -n 500 -w 0
R0=$!
rank 1 1 3 right allreduce -b 8M -e 8M -n 500 -w 0
R1=$!
rank 1 2 3 right allreduce -b 8M -e 8M -n 500 -w 0
R2=$!
sleep 1
kill -9 $R2 2>/dev/null
t0=$(date +%s)
wait $R0
rc0=$?
wait $R1
rc1=$?
t1=$(date +%s)
# the deadline is 3 s: a failed call, then the process exits (no lingering after a failure)
if [ $rc0 -eq 1 ] && [ $rc1 -eq 1 ] && [ $((t1 - t0)) -le 8 ]; then
    pass "rank 2 killed: ranks 0 and 1 exit 1 within the deadline ($((t1 - t0)) s)"
else
    fail "killed rank" "status $rc0 $rc1 after $((t1 - t0)) s" "$(cat "$TMP/j1.r0.err")"
fi
# rank 2, and only rank 2, named as the one that does not answer (rank 1 waits
# on rank 2 too, but answers: it may be listed among the channels waited for).
# When rank 2 died owing rank 0 nothing (rank 0 had all it needed of rank 2
# for its own channel and its REGISTER to rank 2's channel answered), rank 0
# has asked no one anything: the line then names the silent responders, the
# dead rank among them, and a live one still waiting on the dead rank may be
# silent too (docs/runtime.md, "Every wait is bounded"); rank 1 is never
# named unanswered.
if grep -Eq "(ranks that never answered: 2|rank 2 never answered our [A-Z]+|unanswered for 1 s: 2;|unanswered for 1 s: none; silent for 1 s: (1,)?2;)" "$TMP/j1.r0.err" &&
    ! grep -Eq "(never answered: [0-9,]*1|rank 1 never answered|unanswered for 1 s: [0-9,]*1)" "$TMP/j1.r0.err" &&
    grep -Eq "allreduce \(message [0-9]+\) (failed|timed out)" "$TMP/j1.r0.err"; then
    pass "the error names the rank that died, not those waiting: $(head -c 200 "$TMP/j1.r0.err")"
else
    fail "killed rank message" "$(cat "$TMP/j1.r0.err")"
fi
rank 2 0 2 other allreduce -b 4K -e 256K -f 4 -n 2 -w 1 -c
Q0=$!
rank 2 1 2 other allreduce -b 4K -e 256K -f 4 -n 2 -w 1 -c
Q1=$!
wait $Q0
q0=$?
wait $Q1
q1=$?
if [ $q0 -eq 0 ] && [ $q1 -eq 0 ] && [ "$(wrong "$(cat "$TMP/j2.r0.out")")" -eq 0 ]; then
    pass "the switch keeps serving another job"
else
    fail "other job" "status $q0 $q1" "$(cat "$TMP/j2.r0.out" "$TMP/j2.r0.err")"
fi
kill $SW1 2>/dev/null
wait $SW1 2>/dev/null
has "switch prints its counters at exit" "$(cat "$TMP/sw1.err")" "join_rejected=2"

# ---- the switch killed and not restarted: the ranks blame the switch ------------
"$ARBOR" switch --listen 127.0.0.1:0 --port-file "$TMP/portd" --job 8:s --for 30 2>/dev/null &
SWD=$!
PD=$(port_of "$TMP/portd")
for r in 0 1 2; do
    env ARBOR_RANK=$r ARBOR_SIZE=3 ARBOR_SWITCH=127.0.0.1:$PD ARBOR_JOB=8 ARBOR_SECRET=s \
        ARBOR_TIMEOUT=4s "$ARBOR" bench allreduce -b 1M -e 1M -n 100000 -w 0 \
        >/dev/null 2>"$TMP/d$r.err" &
    eval "D$r=\$!"
done
sleep 1
kill -9 $SWD
wait $SWD 2>/dev/null
ok=0
for r in 0 1 2; do
    eval "wait \$D$r"
    [ $? -eq 1 ] && grep -q "no packet at all from the switch 127.0.0.1:$PD for [0-9.]* s" "$TMP/d$r.err" &&
        ok=$((ok + 1))
done
if [ $ok -eq 3 ]; then
    pass "switch killed: every rank says the switch went silent: $(head -c 200 "$TMP/d0.err")"
else
    fail "switch killed" "$ok of 3 blame the switch" "$(cat "$TMP/d0.err" "$TMP/d1.err" "$TMP/d2.err")"
fi

# ---- the switch killed and restarted mid-collective -----------------------------
"$ARBOR" switch --listen 127.0.0.1:0 --port-file "$TMP/port2" --job 5:s --for 30 2>"$TMP/sw2.err" &
SW2=$!
P2=$(port_of "$TMP/port2")
for r in 0 1 2; do
    env ARBOR_RANK=$r ARBOR_SIZE=3 ARBOR_SWITCH=127.0.0.1:$P2 ARBOR_JOB=5 ARBOR_SECRET=s \
        ARBOR_TIMEOUT=20s "$ARBOR" bench allreduce -b 16M -e 16M -n 20 -w 0 -c \
        >"$TMP/k$r.out" 2>"$TMP/k$r.err" &
    eval "K$r=\$!"
done
sleep 0.5
kill -9 $SW2
wait $SW2 2>/dev/null
sleep 0.2
"$ARBOR" switch --listen 127.0.0.1:$P2 --job 5:s --for 30 2>"$TMP/sw3.err" &
SW3=$!
ok=0
for r in 0 1 2; do
    eval "wait \$K$r" && ok=$((ok + 1))
done
kill $SW3 2>/dev/null
wait $SW3 2>/dev/null
# the restarted switch knows nothing: it served the ranks only because they
# joined it again (3 or more joins), and it aggregated
if [ $ok -eq 3 ] && [ "$(wrong "$(cat "$TMP/k0.out")")" -eq 0 ] && grep -Eq " joins=([3-9]|[1-9][0-9]+) " "$TMP/sw3.err" &&
    grep -q "aggregates=[1-9]" "$TMP/sw3.err"; then
    pass "switch restarted mid-collective: the ranks joined again and finished exactly ($(grep -o ' joins=[0-9]*' "$TMP/sw3.err"))"
else
    fail "switch restart" "$ok ranks exited 0" "$(cat "$TMP/k0.out" "$TMP/k0.err" "$TMP/sw3.err")"
fi

# ---- the same with switches of 2 threads: the slots are lost all the same --------
"$ARBOR" switch --threads 2 --listen 127.0.0.1:0 --port-file "$TMP/port4" --job 9:s --for 30 \
    2>"$TMP/sw4.err" &
SW4=$!
P4=$(port_of "$TMP/port4")
for r in 0 1 2; do
    env ARBOR_RANK=$r ARBOR_SIZE=3 ARBOR_SWITCH=127.0.0.1:$P4 ARBOR_JOB=9 ARBOR_SECRET=s \
        ARBOR_TIMEOUT=20s "$ARBOR" bench allreduce -b 16M -e 16M -n 10 -w 0 -c \
        >"$TMP/m$r.out" 2>"$TMP/m$r.err" &
    eval "M$r=\$!"
done
sleep 0.5
kill -9 $SW4
wait $SW4 2>/dev/null
sleep 0.2
"$ARBOR" switch --threads 2 --listen 127.0.0.1:$P4 --job 9:s --for 30 2>"$TMP/sw5.err" &
SW5=$!
ok=0
for r in 0 1 2; do
    eval "wait \$M$r" && ok=$((ok + 1))
done
kill $SW5 2>/dev/null
wait $SW5 2>/dev/null
if [ $ok -eq 3 ] && [ "$(wrong "$(cat "$TMP/m0.out")")" -eq 0 ] && grep -Eq " joins=([3-9]|[1-9][0-9]+) " "$TMP/sw5.err" &&
    grep -q "aggregates=[1-9]" "$TMP/sw5.err"; then
    pass "a switch of 2 threads restarted mid-collective: the ranks joined again and finished exactly"
else
    fail "threaded switch restart" "$ok ranks exited 0" "$(cat "$TMP/m0.out" "$TMP/m0.err" "$TMP/sw5.err")"
fi

finish
