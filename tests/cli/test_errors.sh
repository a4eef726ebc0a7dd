# Errors blame what the user gave: the key, value and rule, or the default
# that conflicts with it, saying it is one; outputs are checked before a run
# and work too large to finish is refused up front.
. "$(dirname "$0")/lib.sh"

# A misspelt key: the nearest keys named with their sections, in the short
# form too (across every section), and in a file.
expect_err "-s a short key misspelt: did you mean" 2 \
    "^arbor sim: -s colective: unknown key \(did you mean arbor\.collective\?\)\$" \
    "$ARBOR" sim -s colective=reduce
expect_err "-s a short key misspelt, two as near" 2 \
    "^arbor sim: -s windw: unknown key \(did you mean transport\.window or arbor\.window\?\)\$" \
    "$ARBOR" sim -s windw=4
expect_err "-s a key of another section" 2 \
    "^arbor sim: -s workload\.colective: unknown key in \[workload\] \(did you mean arbor\.collective\?\)\$" \
    "$ARBOR" sim -s workload.colective=reduce
printf '[transport]\nsize = 1M\n' >"$TMP/othersec.ini"
expect_err "a file's key of another section" 2 \
    "othersec\.ini:2: transport\.size: unknown key in \[transport\] \(did you mean workload\.size\?\)\$" \
    "$ARBOR" sim "$TMP/othersec.ini"
expect_err "-s a short key with a dot, misspelt" 2 \
    "^arbor sim: -s cc\.rat: unknown key \(did you mean arbor\.cc\.rate\?\)\$" \
    "$ARBOR" sim -s cc.rat=10G
expect_err "-s a section as a key: its keys" 2 \
    "^arbor sim: -s routing: a section, not a key \(its keys: routing\.scheme, routing\.seed, routing\.steer\)\$" \
    "$ARBOR" sim -s routing=nope
expect_err "  ... a section of many keys: the first, and how many" 2 \
    "^arbor sim: -s transport: a section, not a key \(its keys: transport\.[a-z_]+, transport\.[a-z_]+, transport\.[a-z_]+, transport\.[a-z_]+, \.\.\. [0-9]+ in all\)\$" \
    "$ARBOR" sim -s transport=irn
expect_err "routing.scheme: the choices" 2 \
    "^arbor sim: -s routing\.scheme: .*unknown scheme 'nope' \(engines dmodk, .*; choosers ar, " \
    "$ARBOR" sim -s routing.scheme=nope

# --seeds gives each run its seed: a seed the command line gives too, by -s
# (its short form included) or --seed, is refused naming the option and the
# key, in either order (a file's seed is a default it overrides:
# test_seeds.sh).
expect_err "-s run.seed with --seeds: refused" 2 \
    "^arbor sim: --seeds 1\\.\\.2 \\(run\\.seed\\): -s run\\.seed=7 sets it too; --seeds gives each run its seed: give one or the other\$" \
    "$ARBOR" sim -s run.seed=7 --seeds 1..2 -s size=1MiB
expect_err "-s seed (short) after --seeds: refused" 2 \
    "^arbor sim: --seeds 1\\.\\.2 \\(run\\.seed\\): -s run\\.seed=3 sets it too;" \
    "$ARBOR" sim --seeds 1..2 -s seed=3
expect_err "--seed with --seeds: refused" 2 \
    "^arbor sim: --seeds 1\\.\\.2 \\(run\\.seed\\): --seed 3 sets it too;" \
    "$ARBOR" sim --seed 3 --seeds 1..2 -s size=1MiB
# arbor.subchannels is 1..1024 (ARB_EP_MAX_SUBCHANNELS, the engines' limit;
# more than the fabric's distinct trees is a warning: test_sim.sh)
expect_err "subchannels above 1024: refused with the range" 2 \
    "^arbor sim: -s arbor\\.subchannels: '1025' is not in 1\\.\\.1024\$" \
    "$ARBOR" sim -s arbor.subchannels=1025
expect_err "subchannels 0: refused with the range" 2 \
    "^arbor sim: -s arbor\\.subchannels: '0' is not in 1\\.\\.1024\$" \
    "$ARBOR" sim -s arbor.subchannels=0
expect_status "subchannels 1024 runs" 0 "$ARBOR" sim -s topology=star:4 -s size=64KiB \
    -s arbor.subchannels=1024 -q
# A failed spine leaves no tree: the failure is to blame, not arbor.root.
expect_err "fail cuts the tree: fabric.fail" 2 \
    "^arbor sim: -s fabric.fail: no live path from host 0 to the root" \
    "$ARBOR" sim -s fabric.fail=switch:L1.0
# Two ranks on one host: the host list.
expect_err "a host twice: workload.hosts" 2 \
    "^arbor sim: -s workload.hosts: .*ranks 0 and 1 are both on host 5" \
    "$ARBOR" sim -s workload.hosts=5,5
# Too many hosts for a group: the topology the user gave, ranks named as a default ...
expect_err "too many hosts: fabric.topology, ranks as the default" 2 \
    "^arbor sim: -s fabric.topology: 'star:300' has 300 hosts, and workload.ranks \\(default 0\\)" \
    "$ARBOR" sim -s topology=star:300
# ... and workload.ranks when the user set it.
expect_err "too many ranks given: workload.ranks" 2 \
    "^arbor sim: -s workload.ranks: 300 ranks: a group has 2..256" \
    "$ARBOR" sim -s topology=star:300 -s workload.ranks=300
# workload.size is 1..2^50 bytes (the planner's largest message) for every
# workload, checked as it is set: both ends, and the range in the message.
for v in 0 1125899906842625 9223372036854775808; do
    expect_err "size $v: refused as set, with the range" 2 \
        "^arbor sim: -s workload.size: '$v' is not in 1\\.\\.2\\^50 bytes \\(1 PiB\\)\$" \
        "$ARBOR" sim -s size=$v -s run.stop=1us
done
# Below it, what a run can carry: an Arbor channel's share of the buffer is
# one message of at most 2^23 offsets of arbor.payload. Over star:32's 32
# channels of 8192 B payloads that is 32 x 2^23 x 8192 = 2^41 bytes, which
# starts (run.stop ends it); 32 f32 elements more put 4 B more in channel
# 0's share, 2^23 + 1 offsets; 2^50 has 2^45 B a channel, 2^32 offsets.
# (the summary of a run cut short to /dev/null: only its status line)
quiet() { sh -c 'exec "$0" "$@" >/dev/null' "$@"; }
expect_err "Arbor: 2^41 B over 32 channels starts" 1 "^arbor sim: incomplete: run.stop came first" \
    quiet "$ARBOR" sim -s size=2199023255552 -s run.stop=1us -q
expect_err "Arbor: 2^41 + 128 B: a channel's share above 2^23 offsets" 2 \
    "^arbor sim: -s workload.size: 2199023255680 bytes over 32 channels: channel 0's share, 68719476740 bytes, is 8388609 offsets of arbor.payload \\(8192 B\\), above the 2\\^23 of a channel's message \\(68719476736 bytes\\)\$" \
    "$ARBOR" sim -s size=2199023255680 -s run.stop=1us
expect_err "Arbor: 2^50 B: taken as set, refused by the channels" 2 \
    "^arbor sim: -s workload.size: 1125899906842624 bytes over 32 channels: channel 0's share, 35184372088832 bytes, is 4294967296 offsets" \
    "$ARBOR" sim -s size=1125899906842624 -s run.stop=1us
# a transport flow has at most 2^31 - 1 packets of transport.mtu:
# 2147483647 x 4096 = 8796093018112 bytes starts, a byte more is refused
expect_err "flows: (2^31 - 1) x mtu starts" 1 "^arbor sim: incomplete: run.stop came first" \
    quiet "$ARBOR" sim -s topology=star:4 -s workload.kind=perm -s size=8796093018112 -s run.stop=1us -q
expect_err "flows: a byte more is refused, naming the limit" 2 \
    "^arbor sim: -s workload.size: makes a flow of more than 2147483647 packets of transport.mtu \\(4096 B\\): a simulated flow carries at most 8796093018112 bytes\$" \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=perm -s size=8796093018113 -s run.stop=1us
# A ragged size says that.
expect_err "size not whole elements" 2 \
    "^arbor sim: -s workload.size: .*10 bytes is not a whole number of f32 elements \\(4 B each\\)" \
    "$ARBOR" sim -s size=10
# The 16 B header carries one slot: the field and the 20 B form are named.
expect_err "agg_loc on the 16 B header" 2 \
    "^arbor wire encode: agg_loc: agg_loc\\[1\\] = 2 needs the 20 B header \\(header_len=20" \
    "$ARBOR" wire encode agg_loc=1,2
expect_status "agg_loc with header_len=20" 0 "$ARBOR" wire encode packet_type=DATA_REQUEST \
    offset_b=1 agg_depth=2 fanin=1,1 agg_loc=1,2 payload_len=4 header_len=20
# workload.qp_mode rr and hpn are the ring AllReduce's: any other kind
# refuses them (file, line, key, the mode, what it takes) rather than run as
# split.
printf '[fabric]\ntopology = star:4\n[workload]\nkind = pattern\ntraffic = shift:all\nqp_mode = hpn\n' \
    >"$TMP/qpmode.ini"
expect_err "qp_mode hpn with a pattern: refused" 2 \
    "^arbor sim: $TMP/qpmode.ini:6: workload.qp_mode: qp_mode: hpn: only ring_allreduce takes rr or hpn; patterns \\(pattern, perm, shift, all2all\\) split every message over the QPs \\(split\\)$" \
    "$ARBOR" sim "$TMP/qpmode.ini"
for k in perm incast all2all; do
    expect_err "qp_mode rr with $k: refused" 2 \
        "^arbor sim: -s workload.qp_mode: qp_mode: rr: only ring_allreduce takes rr or hpn; .* \\(split\\)$" \
        "$ARBOR" sim "$TMP/qpmode.ini" -s workload.kind=$k -s senders=2 -s qp_mode=rr
done
expect_err "qp_mode hpn with a host collective: refused" 2 \
    "^arbor sim: -s workload.qp_mode: qp_mode: hpn: only ring_allreduce takes rr or hpn; host collectives split" \
    "$ARBOR" sim -s topology=star:4 -s workload.kind=host_collective -s qp_mode=hpn
expect_err "qp_mode rr with an iteration: refused" 2 \
    "^arbor sim: -s workload.qp_mode: qp_mode: rr: only ring_allreduce takes rr or hpn; iterations split" \
    "$ARBOR" sim scenarios/iteration-dp.ini -s qp_mode=rr
expect_err "qp_mode hpn with Arbor: refused" 2 \
    "^arbor sim: -s workload.qp_mode: qp_mode: hpn: only ring_allreduce takes rr or hpn; the Arbor collective has no QPs \\(split\\)$" \
    "$ARBOR" sim -s topology=star:4 -s qp_mode=hpn
# keys a workload would ignore are refused: chunk where nothing is
# pipelined, the QPs of an Arbor collective with no background flows
expect_err "chunk with a pattern: refused" 2 \
    "^arbor sim: $TMP/chunk.ini:7: workload.chunk: only ring_allreduce, host_collective and iteration pipeline their messages; kind pattern does not \\(0\\)$" \
    sh -c "{ cat '$TMP/qpmode.ini' | sed 's/qp_mode = hpn/qp_mode = split/'; echo 'chunk = 4KiB'; } >'$TMP/chunk.ini' && exec '$ARBOR' sim '$TMP/chunk.ini'"
expect_err "chunk with Arbor: refused" 2 \
    "^arbor sim: -s workload.chunk: .*kind arbor does not \\(0\\): Arbor's engines send arbor.payload bytes a packet$" \
    "$ARBOR" sim -s topology=star:4 -s chunk=4KiB
expect_err "qps with Arbor and no background: refused" 2 \
    "^arbor sim: -s workload.qps: the Arbor collective has no QPs; qps splits only arbor.background's flows, and there are none \\(1\\)$" \
    "$ARBOR" sim -s topology=star:4 -s qps=4
expect_err "shared_sport with Arbor and no background: refused" 2 \
    "^arbor sim: -s workload.shared_sport: the Arbor collective has no QPs" \
    "$ARBOR" sim -s topology=star:4 -s shared_sport=on
expect_status "chunk with the ring runs" 0 \
    "$ARBOR" sim "$TMP/qpmode.ini" -s workload.kind=ring_allreduce -s size=64KiB -s chunk=16KiB -s qp_mode=split
expect_status "qp_mode split with a pattern runs" 0 \
    "$ARBOR" sim "$TMP/qpmode.ini" -s qp_mode=split -s size=64KiB -s qps=2
expect_status "qp_mode hpn with the ring runs" 0 \
    "$ARBOR" sim "$TMP/qpmode.ini" -s workload.kind=ring_allreduce -s size=64KiB -s qps=2
# A header without ']' on line 1 is reported on line 1.
printf '[fabric\ntopology = star:4\n' >"$TMP/bad.ini"
expect_err "broken section header" 2 "^arbor sim: $TMP/bad.ini:1: a section header without its '\\]'" \
    "$ARBOR" sim "$TMP/bad.ini"
# --csv to a directory that does not exist: refused before the run (nothing
# on stdout, status 2), not after it.
expect_err "--csv unwritable: before the run" 2 \
    "^arbor sim: --csv: cannot write $TMP/none/x-util.csv" \
    "$ARBOR" sim -s size=64MiB --csv "$TMP/none/x"
expect_err "route --csv unwritable: before the run" 2 \
    "^arbor route: --csv: cannot write $TMP/none/l.csv" \
    "$ARBOR" route --topo kary:2,2 --routing dmodk --traffic ring --csv "$TMP/none/l.csv"
# balls in bins past 10^9 trials x (flows + links) is refused with its size
expect_err "bins: astronomically large refused" 2 \
    "^arbor route: --model bins: 1.02e\\+17 draws .*the limit is 1e\\+09" \
    "$ARBOR" route --model bins --flows 1000000000 --links 16777216 --trials 100000000
expect_status "bins: below the limit runs" 0 \
    "$ARBOR" route --model bins --flows 1000 --links 16 --trials 1000
finish
