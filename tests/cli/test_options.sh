# Command-line conventions of every command (getopt_long): --opt=value and
# --opt value, short options and clusters, abbreviations, options after
# operands, one-line errors; and the version, with the commit it was built
# from when built from a git checkout.
. "$(dirname "$0")/lib.sh"

# same NAME "CMD1" "CMD2": both succeed with the same, non-empty stdout
# (the host timing object removed). The commands are split at spaces.
same() {
    eval "$2" 2>"$TMP/ea" | sed -E 's/,"host":\{"wall_s":[^}]*\}//' >"$TMP/a"
    eval "$3" 2>"$TMP/eb" | sed -E 's/,"host":\{"wall_s":[^}]*\}//' >"$TMP/b"
    if [ -s "$TMP/a" ] && [ ! -s "$TMP/ea" ] && [ ! -s "$TMP/eb" ] && cmp -s "$TMP/a" "$TMP/b"
    then
        pass "$1"
    else
        fail "$1" "$(head -c 200 "$TMP/a")" "$(head -c 200 "$TMP/b")" "$(cat "$TMP/ea" "$TMP/eb")"
    fi
}
A=$ARBOR
HEX=$("$A" wire examples | awk 'NR == 3 {print $2}')

same "sim --seed=3 is --seed 3" "$A sim --seed=3 -s size=1MiB --json" \
    "$A sim --seed 3 -s size=1MiB --json"
same "sim --set=K=V is -s K=V" "$A sim --set=size=1MiB --json" "$A sim -s size=1MiB --json"
same "sim: a cluster -jqs, abbreviations --js --qui" "$A sim -jqs size=1MiB" \
    "$A sim --js --qui -s size=1MiB"
same "sim: options after the file" "$A sim scenarios/incast.ini --json" \
    "$A sim --json scenarios/incast.ini"
same "sim --pcap=PORTS FILE is --pcap PORTS FILE" \
    "$A sim -s size=1MiB --pcap=host:h0 $TMP/a.pcap --json" \
    "$A sim -s size=1MiB --pcap host:h0 $TMP/a.pcap --json"
same "route: short options, --opt=value" "$A route -t kary:2,2 -r dmodk -T ring -j" \
    "$A route --topo=kary:2,2 --routing=dmodk --traffic=ring --json"
same "route -n and --trials=" "$A route --model bins --flows 8 --links 16 -n 100" \
    "$A route --model=bins --flows=8 --links=16 --trials=100"
same "topo describe: -j after the spec" "$A topo describe star:4 -j" "$A topo describe --js star:4"
same "topo ports: --rate=, -r" "$A topo ports leafspine:2,2,2 L1.0 --rate=400G" \
    "$A topo ports -r 400G leafspine:2,2,2 L1.0"
same "wire decode -j" "$A wire decode -j $HEX" "$A wire decode --json $HEX"
same "wire encode -f" "$A wire encode -f packet_type=END" "$A wire encode --frame packet_type=END"

expect_err "a flag given a value" 2 "^arbor sim: --json takes no value" "$A" sim --json=yes
expect_err "a value missing" 2 "^arbor sim: --csv needs a value" "$A" sim --csv
expect_err "an unknown short option in a cluster" 2 "^arbor sim: unknown option '-x'" "$A" sim -jx
expect_err "an unknown long option" 2 "^arbor route: unknown option '--frob'" "$A" route --frob
expect_err "arbor: an unknown option" 2 "^arbor: unknown option '--frob'" "$A" --frob
expect_err "an ambiguous abbreviation: ambiguous, with its matches" 2 \
    "^arbor sim: ambiguous option '--se' \\(--set, --seed, --seeds\\); see 'arbor sim --help'$" "$A" sim --se 3
expect_err "  ... with a value after '='" 2 "^arbor sim: ambiguous option '--se' \\(--set, --seed, --seeds\\)" \
    "$A" sim --se=3
expect_err "  ... in a command with its own option loop" 2 "^arbor sweep: ambiguous option '--p' \\(--procs, --progress\\)" \
    "$A" sweep --p 2 x.ini

# The version: -V, --version and `version` agree; a commit when built from git.
v=$("$A" -V)
expect_out "--version is -V" "$v" "$A" --version
expect_out "version is -V" "$v" "$A" version
if echo "$v" | grep -Eq '^arbor [0-9]+\.[0-9]+\.[0-9]+( \(commit [0-9a-f]{7,40}(-dirty)?\))?$'; then
    pass "version format: $v"
else
    fail "version format" "$v"
fi
commit=$(echo "$v" | sed -n 's/.*(commit \([0-9a-f]*\).*/\1/p')
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
    if [ -n "$commit" ] && git cat-file -e "$commit^{commit}" 2>/dev/null; then
        pass "the commit is one of this repository's"
    else
        fail "the commit is one of this repository's" "$v"
    fi
    # outside a checkout (an exported tree), configure falls back to the version alone
    if command -v cmake >/dev/null 2>&1; then
        mkdir -p "$TMP/export"
        git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$TMP/export"
        if cmake -S "$TMP/export" -B "$TMP/export/build" >"$TMP/cm.log" 2>&1 &&
            grep -q '^#define ARB_CLI_COMMIT ""$' "$TMP/export/build/cli/arb_cli_version.h"; then
            pass "outside git: no commit, configure succeeds"
        else
            fail "outside git: no commit, configure succeeds" "$(tail -5 "$TMP/cm.log")" \
                "$(cat "$TMP/export/build/cli/arb_cli_version.h" 2>/dev/null)"
        fi
    else
        skip "outside git" "cmake not found"
    fi
else
    skip "commit" "not a git checkout"
fi
# a benchmark program: --help prints its usage and exits 0 (it used to run
# the whole benchmark); an argument it does not know is named on stderr,
# exit 2, and nothing runs (a program that ran instead is stopped after 60 s)
BR="$(dirname "$ARBOR")/bench/bench_recovery"
# the argument it must name: the first, or what follows --quick
bad_arg() { if [ "$1" = --quick ]; then echo "$2"; else echo "$1"; fi; }
out=$(timeout 60 "$BR" --help 2>"$TMP/e"; echo "rc=$?")
case $out in
usage:\ bench_recovery*rc=0) pass "bench_recovery --help: its usage, exit 0" ;;
*) fail "bench_recovery --help: its usage, exit 0" "$out" "$(cat "$TMP/e")" ;;
esac
for args in "--bogus" "--bogus --quick" "--quick extra"; do
    # shellcheck disable=SC2086
    timeout 60 "$BR" $args >"$TMP/o" 2>"$TMP/e"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$TMP/o" ] && grep -q "unknown argument '$(bad_arg $args)'" "$TMP/e"; then
        pass "bench_recovery $args: named, exit 2, nothing run"
    else
        fail "bench_recovery $args: named, exit 2, nothing run" "rc $rc" "$(head -c 200 "$TMP/o")"
    fi
done
# run where the ring's scenario is not (outside the repository root): named,
# exit 2, nothing run (every row used to fail alike, one line each)
(cd "$TMP" && timeout 60 "$BR" --quick >"$TMP/o" 2>"$TMP/e")
rc=$?
if [ $rc -eq 2 ] && [ ! -s "$TMP/o" ] && [ "$(wc -l <"$TMP/e")" -eq 1 ] &&
    grep -q "arbor-star32-ring.ini: cannot open.*repository root" "$TMP/e"; then
    pass "bench_recovery outside the repository root: one line, exit 2, nothing run"
else
    fail "bench_recovery outside the repository root: one line, exit 2, nothing run" "rc $rc" \
        "$(head -c 200 "$TMP/e")"
fi
finish
