#!/bin/sh
# arbor.torch, the DDP communication hook (docs/pytorch.md), as ranks of
# /usr/bin/python3 under arbor run: every bucket dtype exact
# (python/tests/torch_dtypes.py), and examples/ddp_synthetic.py's two
# models, gloo's and Arbor's, after 100 steps within the bound the example
# derives, with every bucket counted by the runtime (the Arbor path taken).
# Usage: test_torch.sh PATH_TO_ARBOR
. "$(dirname "$0")/../../tests/cli/lib.sh"
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
