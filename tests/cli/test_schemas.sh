# Every JSON output carries "schema" and "version" and validates against its
# JSON Schema in docs/schema/ (the schema's own "schema" const names it).
# Needs Python's jsonschema (Debian: python3-jsonschema); skipped without it.
. "$(dirname "$0")/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import jsonschema' >/dev/null 2>&1; then
        PY=$p
        break
    fi
done
[ -n "$PY" ] || skip_all "no python3 with jsonschema (Debian: python3-jsonschema)"

A=$ARBOR
n=0
# out NAME CMD...: one JSON output to validate
out() {
    name=$1
    shift
    n=$((n + 1))
    if "$@" >"$TMP/out.$n.json" 2>"$TMP/err"; then
        echo "$name" >"$TMP/out.$n.name"
    else
        fail "$name runs" "$(cat "$TMP/err")"
        rm -f "$TMP/out.$n.json"
    fi
}
out "sim: built-in default" "$A" sim --json
out "sim: values, 1 MiB" "$A" sim --json -s mode=values -s size=1MiB -s topology=star:4
# an incomplete run exits 1 after its JSON
incomplete() { "$A" sim --json -s run.stop=20us; [ $? -eq 1 ]; }
out "sim: arbor, incomplete" incomplete
# a run whose flow's sender gives up (transport.retry_limit) fails, exit 1 after its JSON
gave_up() {
    "$A" sim --json -s topology=star:2 -s fabric.fail=up:h0:0 -s workload.kind=incast \
        -s senders=1 -s receiver=0 -s size=8KiB -s transport.rto=100us -s transport.retry_limit=2
    [ $? -eq 1 ]
}
out "sim: a flow gives up" gave_up
out "sim: incast" "$A" sim --json scenarios/incast.ini
out "sim: trace" "$A" sim --json scenarios/trace.ini
out "sim: ring allreduce" "$A" sim --json -s workload.kind=ring_allreduce -s size=1MiB
out "sim: host collective" "$A" sim --json scenarios/hc-allreduce-tree.ini
out "sim: iteration" "$A" sim --json scenarios/iteration-dp.ini
out "sim: the lab's twin (repeated calls, host model)" "$A" sim --json scenarios/lab-twin.ini \
    -s workload.size=64KiB
out "sim: fault events" "$A" sim --json -s size=1MiB -s topology=leafspine:2,2,2 \
    -s fail_at="20us up:L1.0:0" -s restore_at="40us up:L1.0:0; 1s up:L1.1:0" \
    -s reboot_at="30us switch:L2.1 down=5us"
out "sim --seeds" "$A" sim --json --seeds 1..3 -s topology=star:4 -s size=1MiB -s loss=0.001
out "sweep" "$A" sweep --json - -q scenarios/sweep-arbor-loss.ini
printf '[workload]\nkind = ring_allreduce\nsize = ${64,128}KiB\n' >"$TMP/one-rep.ini"
out "sweep, one replication" "$A" sweep --json - -q "$TMP/one-rep.ini"
out "route" "$A" route --topo kary:4,2 --routing ecmp --traffic perm:1 --trials 10 --json
out "route --model rack" "$A" route --model rack --gpus 8 --qps 4 --uplinks 16 --trials 100 --json
out "route --model pinning" "$A" route --model pinning --half 4 --json
out "route --model bins" "$A" route --model bins --flows 16 --links 16 --trials 100 --json
out "topo describe" "$A" topo describe kary:4,3 --fail switch:L3.0 --json
out "topo describe leafspine" "$A" topo describe leafspine:4,8,2,400G --json
"$A" wire examples | awk '{print $2}' >"$TMP/hex"
while read -r h; do
    out "wire decode $h" "$A" wire decode --json "$h"
done <"$TMP/hex"
h=$("$A" wire encode --frame packet_type=END)
out "wire decode --frame" "$A" wire decode --json --frame "$h"

"$PY" - "$TMP" docs/schema <<'PY' >"$TMP/report" 2>&1
import glob, json, os, sys
import jsonschema
tmp, sdir = sys.argv[1], sys.argv[2]
schemas = {}
for f in sorted(glob.glob(os.path.join(sdir, '*.schema.json'))):
    s = json.load(open(f))
    jsonschema.Draft7Validator.check_schema(s)
    kind = s['properties']['schema']['const']
    if os.path.basename(f) != kind.split('/')[0] + '.schema.json':
        print('FAIL %s: its schema const %s does not match the file name' % (f, kind))
    schemas[kind] = s
print('INFO schemas: ' + ', '.join(sorted(schemas)))
for f in sorted(glob.glob(os.path.join(tmp, 'out.*.json'))):
    name = open(f[:-5] + '.name').read().strip()
    try:
        doc = json.loads(open(f).read())
    except ValueError as e:
        print('FAIL %s: not JSON: %s' % (name, e))
        continue
    kind = doc.get('schema')
    if kind not in schemas:
        print('FAIL %s: schema %r has no file in %s' % (name, kind, sdir))
        continue
    errs = sorted(jsonschema.Draft7Validator(schemas[kind]).iter_errors(doc), key=str)
    if errs:
        e = errs[0]
        print('FAIL %s: %s at %s' % (name, e.message[:200], '/'.join(map(str, e.path))))
    else:
        print('PASS %s (%s)' % (name, kind))
PY
while IFS= read -r line; do
    case $line in
    PASS*) pass "${line#PASS }" ;;
    FAIL*) fail "${line#FAIL }" ;;
    INFO*) echo "${line#INFO }" ;;
    *) fail "validator: $line" ;;
    esac
done <"$TMP/report"
[ "$PASSED" -gt 20 ] || fail "fewer outputs validated than written ($PASSED)"
finish
