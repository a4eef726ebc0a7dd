# The installed tree as a user meets it: `cmake --install` into a temporary
# prefix, the prefix moved elsewhere, then a small program (consumer.c)
# built and run through pkg-config (shared, and static with --static) and
# through find_package(arbor) (arbor::arbor and arbor::static). Each must
# print the version pkg-config reports, "done", and the same JSON as
# `arbor sim` gives for the same scenario.
# Usage: test_install.sh BUILD_DIR CC
BUILD=${1:?usage: $0 BUILD_DIR CC}
CC=${2:-cc}
HERE=$(cd "$(dirname "$0")" && pwd)
set -- "$BUILD/arbor"
. "$HERE/../cli/lib.sh"

command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config not found"

if cmake --install "$BUILD" --prefix "$TMP/first" >"$TMP/install.log" 2>&1; then
    pass "cmake --install into a temporary prefix"
else
    fail "cmake --install into a temporary prefix" "$(tail -5 "$TMP/install.log")"
    finish
    exit $?
fi
mv "$TMP/first" "$TMP/p"
P=$TMP/p
LIBDIR=$(dirname "$(find "$P" -name arbor.pc | head -1)")
LIBDIR=${LIBDIR%/pkgconfig}

for f in "$LIBDIR/libarbor.a" "$LIBDIR/libarbor.so" "$LIBDIR/pkgconfig/arbor.pc" \
    "$LIBDIR/cmake/arbor/arborConfig.cmake" "$P/include/arbor/arbor.h" "$P/bin/arbor" \
    "$P/share/arbor/wireshark/arbor.lua" "$P/share/doc/arbor/LICENSE"; do
    if [ -e "$f" ]; then pass "installed ${f#"$P"/}"; else fail "installed ${f#"$P"/}"; fi
done

# the docs beside the README: every relative link of the installed README.md,
# and every link of the installed docs to a page, figure or schema, names a
# file that is there (their links to the sources need the source tree)
DOC=$P/share/doc/arbor
dead=""
for md in "$DOC/README.md" "$DOC"/docs/*.md; do
    [ -e "$md" ] || continue
    for target in $(grep -o '\]([^)#]*' "$md" | sed 's/^](//' | grep -v '^[a-z]*:' | sort -u); do
        case $md:$target in */README.md:* | *.md | *.png | *schema*) ;; *) continue ;; esac
        [ -e "$(dirname "$md")/$target" ] || dead="$dead ${md#"$DOC"/}:$target"
    done
done
if [ -e "$DOC/docs/protocol.md" ] && [ -e "$DOC/docs/schema" ] && [ -z "$dead" ]; then
    pass "installed docs: README.md's links resolve"
else
    fail "installed docs: README.md's links resolve" "dead:${dead:- none, but docs/ is missing}"
fi

# libarbor.so exports the public API only
if nm -D --defined-only "$LIBDIR/libarbor.so" | awk '{print $3}' | grep -v '^arb_' |
    grep -q .; then
    fail "libarbor.so exports arb_* only" \
        "$(nm -D --defined-only "$LIBDIR/libarbor.so" | awk '{print $3}' | grep -v '^arb_' |
            head -5)"
else
    pass "libarbor.so exports arb_* only"
fi

# What every build of consumer.c must print.
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
version=$(pkg-config --modversion arbor)
json=$("$ARBOR" sim -s topology=star:4 -s size=1MiB --json --quiet |
    sed -E 's/,"host":\{"wall_s":[^}]*\}//')
printf 'arbor %s done\n%s\n' "$version" "$json" >"$TMP/want"

# check_run NAME PROGRAM [LD_LIBRARY_PATH]
check_run() {
    if LD_LIBRARY_PATH=${3:-} "$2" >"$TMP/got" 2>"$TMP/err" && cmp -s "$TMP/got" "$TMP/want"
    then
        pass "$1"
    else
        fail "$1" "got: $(head -c 200 "$TMP/got")" "want: $(head -c 200 "$TMP/want")" \
            "stderr: $(cat "$TMP/err")"
    fi
}

# pkg-config, shared
if $CC -o "$TMP/c_shared" "$HERE/consumer.c" $(pkg-config --cflags --libs arbor) \
    2>"$TMP/cc.err"; then
    pass "pkg-config: builds against libarbor.so"
    check_run "pkg-config: runs against libarbor.so" "$TMP/c_shared" "$LIBDIR"
else
    fail "pkg-config: builds against libarbor.so" "$(cat "$TMP/cc.err")"
fi

# libarbor.a through the same file: Requires.private and Libs.private must
# name everything the archive needs. The dependencies themselves are linked
# shared (their own static chains, such as libpcap's dbus and systemd, are
# their packages' business).
mods=$(pkg-config --print-requires-private arbor | awk '{print $1}')
private=$(sed -n 's/^Libs.private: *//p' "$LIBDIR/pkgconfig/arbor.pc")
if $CC -o "$TMP/c_static" "$HERE/consumer.c" $(pkg-config --cflags arbor) \
    -L"$LIBDIR" -Wl,-Bstatic -larbor -Wl,-Bdynamic $(pkg-config --libs $mods) $private \
    2>"$TMP/cc.err"; then
    pass "Requires.private, Libs.private: link libarbor.a"
    if readelf -d "$TMP/c_static" | grep -q 'libarbor'; then
        fail "libarbor.a: no libarbor.so needed" "$(readelf -d "$TMP/c_static")"
    else
        pass "libarbor.a: no libarbor.so needed"
    fi
    check_run "libarbor.a: runs" "$TMP/c_static"
else
    fail "Requires.private, Libs.private: link libarbor.a" "$(cat "$TMP/cc.err")"
fi
static_libs=" $(pkg-config --static --libs arbor) "
# ... and linked as a user would: every flag pkg-config --static gives, with
# the archive for -larbor (a flag naming a library this system lacks, such
# as libpcap's -lsystemd where no libsystemd.so is installed, fails here)
# shellcheck disable=SC2086
if $CC -o "$TMP/c_pcstatic" "$HERE/consumer.c" $(pkg-config --cflags arbor) \
    $(printf '%s' "$static_libs" | sed "s| -larbor | $LIBDIR/libarbor.a |") 2>"$TMP/cc.err"; then
    pass "pkg-config --static --libs arbor: links libarbor.a"
    check_run "pkg-config --static: runs" "$TMP/c_pcstatic"
else
    fail "pkg-config --static --libs arbor: links libarbor.a" "$static_libs" "$(cat "$TMP/cc.err")"
fi
for l in -lcjson -linih -lpcap -lm; do
    case $static_libs in
    *" $l "*) pass "pkg-config --static --libs arbor has $l" ;;
    *) fail "pkg-config --static --libs arbor has $l" "$static_libs" ;;
    esac
done

# find_package(arbor)
if cmake -S "$HERE" -B "$TMP/cm" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
    >"$TMP/cm.log" 2>&1 && cmake --build "$TMP/cm" >>"$TMP/cm.log" 2>&1; then
    pass "find_package(arbor): builds arbor::arbor and arbor::static"
    check_run "find_package(arbor): arbor::arbor runs" "$TMP/cm/consumer_shared"
    check_run "find_package(arbor): arbor::static runs" "$TMP/cm/consumer_static"
    if readelf -d "$TMP/cm/consumer_static" | grep -q 'libarbor'; then
        fail "find_package(arbor): arbor::static needs no libarbor.so"
    else
        pass "find_package(arbor): arbor::static needs no libarbor.so"
    fi
else
    fail "find_package(arbor): builds arbor::arbor and arbor::static" "$(tail -20 "$TMP/cm.log")"
fi

finish
