# The build as a newcomer meets it (run from the source tree): CMake finds
# the libraries without pkg-config, names every missing one, and neither
# make nor scripts/deps.sh installs anything unless asked.
. "$(dirname "$0")/lib.sh"

command -v cmake >/dev/null 2>&1 || skip_all "cmake not found"

# Every library hidden: configure fails and names each one.
PKG_CONFIG_LIBDIR=/nonexistent cmake -S . -B "$TMP/none" \
    -DCMAKE_IGNORE_PATH="/usr/include;/usr/local/include;/usr/lib;/usr/local/lib;/lib;/usr/lib/$(uname -m)-linux-gnu;/lib/$(uname -m)-linux-gnu" \
    >"$TMP/none.out" 2>"$TMP/none.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "cJSON (Debian: libcjson-dev)" "$TMP/none.err" &&
    grep -q "inih (Debian: libinih-dev)" "$TMP/none.err" &&
    grep -q "libpcap (Debian: libpcap-dev)" "$TMP/none.err"; then
    pass "configure names every missing library"
else
    fail "configure names every missing library" "status $rc" "$(cat "$TMP/none.err")"
fi

# pkg-config knows none of them: found by header and library name instead,
# and arbor.pc then lists them as Libs.private.
if PKG_CONFIG_LIBDIR=/nonexistent cmake -S . -B "$TMP/nopc" >"$TMP/nopc.out" 2>&1; then
    pass "configure without pkg-config's modules"
    libs=$(sed -n 's/^Libs.private: //p' "$TMP/nopc/arbor.pc")
    case " $libs " in
    *" -lcjson "*) pass "arbor.pc: Libs.private has -lcjson without pkg-config" ;;
    *) fail "arbor.pc: Libs.private has -lcjson without pkg-config" "$libs" ;;
    esac
else
    fail "configure without pkg-config's modules" "$(tail -20 "$TMP/nopc.out")"
fi

# make builds, tests and demos without installing: no apt-get, no deps.sh.
if command -v make >/dev/null 2>&1; then
    make -n build demo test-release >"$TMP/make.n" 2>&1
    if grep -qE "apt-get|deps\.sh" "$TMP/make.n"; then
        fail "make build/demo/test run no installer" "$(grep -E "apt-get|deps\.sh" "$TMP/make.n")"
    else
        pass "make build/demo/test run no installer"
    fi
    # make demo builds the command only, not the tests and benchmarks
    if grep -q -- "--target arbor_cli" "$TMP/make.n" &&
        [ "$(make -n demo | grep -c -- '--build')" -eq 1 ]; then
        pass "make demo builds the command only"
    else
        fail "make demo builds the command only" "$(make -n demo)"
    fi
else
    skip "make" "make not found"
fi

# scripts/deps.sh checks without dpkg and installs only with --install: a
# PATH whose apt-get and dpkg-query record being called, and no tshark.
mkdir -p "$TMP/bin"
for tool in apt-get dpkg-query; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/called"\n' "$tool" "$TMP" >"$TMP/bin/$tool"
    chmod +x "$TMP/bin/$tool"
done
for tool in sh sed cat grep id cmake make cc gcc pkg-config python3 uname; do
    p=$(command -v $tool 2>/dev/null) && ln -sf "$p" "$TMP/bin/$tool"
done
PATH="$TMP/bin" sh scripts/deps.sh >"$TMP/deps.out" 2>"$TMP/deps.err"
rc=$?
if [ ! -e "$TMP/called" ] && [ $rc -eq 0 ] && grep -q "tshark" "$TMP/deps.err"; then
    pass "deps.sh reports a missing optional tool, runs no package tool, exits 0"
else
    fail "deps.sh reports a missing optional tool, runs no package tool, exits 0" "status $rc" \
        "stderr: $(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi

finish
