# The public API as a user meets it (run from the source tree):
#  - include/arbor/arbor.h includes every public header, and nothing else of
#    the tree;
#  - arbor.h alone, and every public header alone, compiles as C11 with the
#    project's warnings;
#  - the API reference (Doxygen over include/arbor/, the Doxyfile CMake wrote
#    beside the command) builds without one warning, and the same
#    configuration does fail on an undocumented function.
. "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$ARBOR")" && pwd)

# arbor.h's include list against the directory.
want=$(cd include/arbor && ls ./*.h | sed 's|^\./||' | grep -vx arbor.h | sort)
have=$(sed -n 's|^#include "arbor/\(.*\)"$|\1|p' include/arbor/arbor.h | sort)
if [ "$want" = "$have" ]; then
    pass "arbor.h includes every public header ($(echo "$want" | wc -l))"
else
    fail "arbor.h includes every public header" \
        "missing: $(echo "$want" | grep -vxF "$have" | tr '\n' ' ')" \
        "extra: $(echo "$have" | grep -vxF "$want" | tr '\n' ' ')"
fi

# Each public header compiles on its own, arbor.h included.
CC=${CC:-cc}
if command -v "$CC" >/dev/null 2>&1; then
    for h in include/arbor/*.h; do
        name=${h#include/}
        printf '#include "%s"\nint arb_apidoc_unit;\n' "$name" >"$TMP/unit.c"
        if "$CC" -std=c11 -Wall -Wextra -Werror -Wstrict-prototypes -fsyntax-only -Iinclude \
            "$TMP/unit.c" >"$TMP/cc.out" 2>&1; then
            pass "$name compiles alone"
        else
            fail "$name compiles alone" "$(head -20 "$TMP/cc.out")"
        fi
    done
else
    skip "headers compile alone" "no C compiler ($CC)"
fi

# The reference: no warning, and a warning is a failure.
if ! command -v doxygen >/dev/null 2>&1; then
    skip "doxygen" "doxygen is not installed (Debian: doxygen)"
elif [ ! -f "$BUILD/Doxyfile" ]; then
    fail "doxygen" "no $BUILD/Doxyfile (CMake writes it from docs/Doxyfile.in)"
else
    (cd "$TMP" && doxygen "$BUILD/Doxyfile") >"$TMP/dox.out" 2>"$TMP/dox.err"
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$TMP/dox.err" ] && [ -f "$BUILD/docs/html/index.html" ]; then
        pass "doxygen: the API reference builds without a warning"
    else
        fail "doxygen: the API reference builds without a warning" "status $rc" \
            "$(head -40 "$TMP/dox.err")"
    fi
    mkdir -p "$TMP/undoc"
    printf '/** @file\n * A header.\n */\n/** Documented. */\nint arb_apidoc_a(void);\nint arb_apidoc_b(void);\n' \
        >"$TMP/undoc/undoc.h"
    {
        cat "$BUILD/Doxyfile"
        echo "INPUT = $TMP/undoc/undoc.h"
        echo "OUTPUT_DIRECTORY = $TMP/undoc/out"
    } >"$TMP/undoc/Doxyfile"
    (cd "$TMP/undoc" && doxygen Doxyfile) >"$TMP/undoc.out" 2>"$TMP/undoc.err"
    rc=$?
    if [ $rc -ne 0 ] && grep -q "arb_apidoc_b.*not documented" "$TMP/undoc.err" &&
        ! grep -q "arb_apidoc_a" "$TMP/undoc.err"; then
        pass "doxygen: an undocumented function fails the reference"
    else
        fail "doxygen: an undocumented function fails the reference" "status $rc" \
            "$(cat "$TMP/undoc.err")"
    fi
fi
# Every function of the headers the reference covers that returns int (0
# or an ARB_E* code) names its errors in its comment: an ARB_E* code,
# "Errors:", or "Never fails" (arbor.h states the convention).
if ! command -v python3 >/dev/null 2>&1; then
    skip "errors documented" "python3 is not installed"
elif [ -f "$BUILD/Doxyfile" ]; then
    python3 - "$BUILD/Doxyfile" >"$TMP/lint.out" 2>&1 <<'PY'
import glob, os, re, shlex, sys
conf = open(sys.argv[1]).read()
m = re.search(r'^INPUT\s*=(.*)$', conf, re.M)
files = []
for item in shlex.split(m.group(1)):
    files += sorted(glob.glob(os.path.join(item, '*.h'))) if os.path.isdir(item) else [item]
bad = 0
for path in files:
    src = open(path).read()
    for f in re.finditer(r'^int (arb_[a-z0-9_]+)\(', src, re.M):
        before = src[:f.start()].rstrip()
        doc = before[before.rfind('/**'):] if before.endswith('*/') else ''
        if not re.search(r'ARB_E[A-Z_]+|Errors:|Never fails', doc):
            line = src.count('\n', 0, f.start()) + 1
            print('%s:%d: %s: its comment names no error code' % (path, line, f.group(1)))
            bad += 1
print('checked %d headers' % len(files))
sys.exit(1 if bad else 0)
PY
    if [ $? -eq 0 ]; then
        pass "errors documented ($(tail -1 "$TMP/lint.out"))"
    else
        fail "errors documented" "$(head -30 "$TMP/lint.out")"
    fi
fi
finish
