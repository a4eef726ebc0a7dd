#!/bin/sh
# arbor.torch, the DDP communication hook (docs/pytorch.md), as ranks of
# /usr/bin/python3 under arbor run: every bucket dtype exact
# (python/tests/torch_dtypes.py); the communication thread asynchronous,
# in order and bounded, a killed rank's error in every other rank's
# future, buckets in flight finished at the exit (python/tests/
# torch_async.py); and examples/ddp_synthetic.py's two models, gloo's and
# Arbor's, after 100 steps within the bound the example derives, with
# every bucket counted by the runtime (the Arbor path taken).
# Usage: test_torch.sh PATH_TO_ARBOR
. "$(dirname "$0")/../../tests/cli/lib.sh"
. "$(dirname "$0")/../../tests/mpi/named.sh"
BUILD=$(cd "$(dirname "$ARBOR")" && pwd)
PY=/usr/bin/python3
[ -x $PY ] || skip_all "/usr/bin/python3 is not installed (Debian: python3)"
$PY -c 'import torch, numpy' 2>/dev/null ||
    skip_all "/usr/bin/python3 has no torch or numpy (Debian: python3-torch python3-numpy)"
export PYTHONPATH="$BUILD/python"

# ---- every dtype ------------------------------------------------------------
timeout 300 "$ARBOR" run -n 4 -- $PY python/tests/torch_dtypes.py "$TMP/store" \
    >"$TMP/out" 2>"$TMP/err"
same "torch_dtypes.py: exit status" 0 "$?"
grep -v "^ " "$TMP/err" | tail -5
# 4 dtypes allreduced, 2 DDP steps, 2 hook calls (8 buckets, 8 checks and
# the int32 refusal), the asynchronous hook (1 bucket, 2 checks), DDP over
# five layers (two passes: 1 bucket, then 5; 6 checks), the failing call
# (no call, 1 check): 18 checks, 15 buckets, each one runtime call
ok=$(grep -c '^rank [0-3]: 18 checks, 0 wrong, 15 buckets, 15 calls$' "$TMP/out")
same "torch_dtypes.py: every rank's 18 checks pass; 15 buckets, 15 runtime calls" 4 "$ok"

# ---- the communication thread ---------------------------------------------------
# the hook returns before its all-reduce is done; order kept; the queue bounded
mkdir "$TMP/meet1"
timeout 300 "$ARBOR" run -n 4 -- $PY python/tests/torch_async.py "$TMP/meet1" order \
    >"$TMP/out" 2>"$TMP/err"
same "torch_async.py order: exit status" 0 "$?"
grep -v "^ " "$TMP/err" | tail -5
same "torch_async.py order: every rank's checks pass (14 on rank 0, 19 on the others)" 4 \
    "$(grep -Ec '^rank 0: 14 checks, 0 wrong$|^rank [1-3]: 19 checks, 0 wrong$' "$TMP/out")"
# rank 2 dies inside a 64 MiB bucket's all-reduce, deadline 3 s: every other
# rank's future raises ArborError naming rank 2 within the deadline plus 1 s
# of scheduling, and the next bucket fails at once, naming the first failure
mkdir "$TMP/meet2"
timeout 90 "$ARBOR" run -n 4 --timeout 3s -- $PY python/tests/torch_async.py "$TMP/meet2" kill 2 \
    >"$TMP/out" 2>"$TMP/err"
same "torch_async.py kill: every other rank's future raises ArborError naming rank 2 in time" 3 \
    "$(named_in_time "$TMP/out" 2 4.0 0 1 3)"
next='^rank [013]: next bucket failed after 0\.[0-5] s: arbor.torch: not started, '
next="${next}an earlier all-reduce of this state failed: "
next="${next}.*(rank 2 never answered|unanswered for [0-9.]+ s: ([0-9]+,)*2[,;])"
same "torch_async.py kill: the next bucket fails within 0.5 s, naming the first failure" 3 \
    "$(grep -Ec "$next" "$TMP/out")"
# every rank ends its script with four buckets in flight: the exit finishes them
mkdir "$TMP/meet3"
timeout 120 "$ARBOR" run -n 4 -- $PY python/tests/torch_async.py "$TMP/meet3" exit \
    >"$TMP/out" 2>"$TMP/err"
same "torch_async.py exit: exit status" 0 "$?"
grep -v "^ " "$TMP/err" | tail -5
same "torch_async.py exit: every rank's four buckets done, exact, after it left its script" 16 \
    "$(grep -c '^rank [0-3]: bucket [0-3] done, exact$' "$TMP/out")"

# ---- gloo against Arbor over 100 steps ----------------------------------------
timeout 600 "$ARBOR" run -n 4 -- $PY examples/ddp_synthetic.py --steps 100 \
    >"$TMP/out" 2>"$TMP/err"
same "ddp_synthetic.py: exit status" 0 "$?"
grep -v "^ " "$TMP/err" | tail -5
same "ddp_synthetic.py: a loss line per step" 100 \
    "$(awk 'NF == 5 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { n++ } END { print n + 0 }' "$TMP/out")"
# each rank: the parameters' distance within the bound; one bucket per
# step (the model is one small tensor), each a call the runtime counted
within=$(awk '/^rank [0-3]: / { d = $0; sub(/.*= /, "", d); sub(/,.*/, "", d)
    b = $0; sub(/.*bound /, "", b); sub(/,.*/, "", b)
    if (d + 0 <= b + 0 && b + 0 > 0) n++ } END { print n + 0 }' "$TMP/out")
same "ddp_synthetic.py: |theta_gloo - theta_arbor| within the derived bound on every rank" 4 "$within"
same "ddp_synthetic.py: 100 buckets, 100 runtime calls on every rank" 4 \
    "$(grep -c '^rank [0-3]: .*hook buckets 100, arbor calls 100,' "$TMP/out")"
# both models learned: the loss at step 99 a hundredth of step 0's or less
last=$(grep '^ *99 ' "$TMP/out")
first=$(grep '^ *0 ' "$TMP/out")
if [ -n "$last" ] && echo "$first $last" | awk '{ exit !($7 < $2 / 100 && $8 < $3 / 100) }'; then
    pass "ddp_synthetic.py: both losses fell 100-fold by step 99"
else
    fail "ddp_synthetic.py: the losses" "$first" "$last"
fi
finish
