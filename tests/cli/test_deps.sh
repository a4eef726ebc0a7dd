# scripts/deps.sh knows every tool a test calls: each command word of the
# test scripts (tests/cli, tests/install, the scripts make test runs) and of
# the C tests' shell commands is a shell word, a function of the scripts, a
# command of a package deps.sh lists, or a command of a package Debian
# installs on every machine (Essential or of priority required). Also its
# modes: --list, --dry-run, --auto (what make demo and make test run first)
# with apt-get and id replaced by recorders.
. "$(dirname "$0")/lib.sh"

# ---- the tool list --------------------------------------------------------------
sh scripts/deps.sh --list >"$TMP/list" 2>"$TMP/list.err"
if [ $? -eq 0 ] && [ "$(awk -F'\t' 'NF != 4' "$TMP/list" | wc -l)" -eq 0 ] &&
    [ "$(wc -l <"$TMP/list")" -ge 20 ]; then
    pass "deps.sh --list: package, scope, checks, purpose on each line"
else
    fail "deps.sh --list" "$(cat "$TMP/list" "$TMP/list.err" | head -5)"
fi
# the commands and Python modules it checks: cmd:ip+tc gives ip and tc
awk -F'\t' '{ n = split($3, c, ","); for (i = 1; i <= n; i++) {
        if (c[i] ~ /^cmd:/) { m = split(substr(c[i], 5), t, "+"); for (k = 1; k <= m; k++) print "cmd " t[k] }
        else if (c[i] ~ /^py:/) print "py " substr(c[i], 4) } }' "$TMP/list" | sort -u >"$TMP/known"

# ---- the command words the tests call ---------------------------------------------
# The first word of every simple command, in command context only: not in
# quoted text (but inside $( ) wherever it is), not in heredoc bodies or
# comments; `command -v X` gives X.
words() { # FILE...: "word file" lines
    awk 'function flush(   n, w, i) {
    n = split(buf, w, /[ \t]+/)
    i = 1
    while (i <= n && (w[i] == "" || w[i] ~ /^[A-Za-z_][A-Za-z_0-9]*=/ ||
           w[i] ~ /^(if|then|else|elif|do|while|until|!|time|exec|env|nice|xargs|fi|done|esac|in)$/))
        i++
    if (i <= n && w[i] == "timeout") { i++; while (i <= n && w[i] ~ /^-|^[0-9.]+[smh]?$/) i++ }
    if (i + 2 <= n && w[i] == "command" && w[i + 1] == "-v") i += 2
    if (i <= n && w[i] ~ /^[a-z][a-z0-9_.+-]*$/) print w[i], FILENAME
    buf = ""
}
FNR == 1 { sp = 0; st[0] = "C"; heredoc = ""; buf = "" }
{
    line = $0
    if (heredoc != "") { t = line; sub(/^[ \t]+/, "", t); if (t == heredoc) heredoc = ""; next }
    if (st[sp] == "C" && match(line, /<<-?[ ]*\\?[\047"]?[A-Za-z_]+[\047"]?/)) {
        heredoc = substr(line, RSTART, RLENGTH)
        sub(/^<<-?[ ]*\\?[\047"]?/, "", heredoc); sub(/[\047"]$/, "", heredoc)
    }
    n = length(line)
    for (i = 1; i <= n; i++) {
        c = substr(line, i, 1); s = st[sp]
        if (s == "S") { if (c == "\047") sp--; continue }
        if (c == "\\") { if (s == "C") buf = buf " "; i++; continue }
        if (s == "D") {
            if (c == "\"") sp--
            else if (c == "$" && substr(line, i + 1, 1) == "(" && substr(line, i + 2, 1) != "(") {
                st[++sp] = "C"; kind[sp] = "$"; i++; flush()
            }
            continue
        }
        # command context
        if (c == "#" && (i == 1 || substr(line, i - 1, 1) ~ /[ \t]/)) break
        if (c == "\047") { st[++sp] = "S"; buf = buf " X "; continue }
        if (c == "\"") { st[++sp] = "D"; buf = buf " X "; continue }
        if (c == "$" && substr(line, i + 1, 2) == "((") {          # arithmetic: skip to ))
            j = index(substr(line, i), "))"); if (j) { i += j; buf = buf " X "; continue }
        }
        if (c == "$" && substr(line, i + 1, 1) == "(") { flush(); st[++sp] = "C"; kind[sp] = "$"; i++; continue }
        if (c == "$" && substr(line, i + 1, 1) == "{") {             # ${...}: a word
            j = index(substr(line, i), "}"); if (j) { i += j - 1; buf = buf "X"; continue }
        }
        if (c == "(") { flush(); st[++sp] = "C"; kind[sp] = "("; continue }
        if (c == ")") { flush(); if (sp > 0) sp--; continue }
        if (c == "|" || c == "&" || c == ";" || c == "{" || c == "}" || c == "`") { flush(); continue }
        buf = buf c
    }
    if (st[sp] == "C") flush()
}
' "$@"
}
FILES="tests/cli/*.sh tests/install/*.sh scripts/demo.sh scripts/test_report.sh scripts/bench.sh .ci/run"
# shellcheck disable=SC2086
words $FILES >"$TMP/words"
# the C tests' shell commands: system("X ...") and popen of a command naming X
grep -ho 'system("[a-z][a-z0-9_-]*\|"command -v [a-z][a-z0-9_-]*' tests/unit/*.c |
    sed 's/.*[(" ]//; s/$/ tests\/unit/' >>"$TMP/words"

# the shell's own words and the scripts' functions are not tools
builtins="if then else elif fi for while until do done case esac in return exit break continue
local export set shift unset read echo printf test cd pwd eval trap wait kill true false type
command source alias umask getopts hash times ulimit readonly let"
# shellcheck disable=SC2086
funcs=$(sed -n 's/^[ ]*\([a-z_][a-z0-9_]*\)() *{.*/\1/p' $FILES tests/cli/lib.sh | sort -u)

# essential PACKAGE: Debian installs it on every machine
essential() {
    dpkg-query -W -f '${Essential} ${Priority}\n' "$1" 2>/dev/null | grep -Eq '^yes|required'
}
# owner PATH: the Debian package of a file, through the alternatives' links
# and both halves of a merged /usr (/bin is /usr/bin)
owner() {
    r=$(readlink -f "$1")
    for p in "$1" "$r" "${1#/usr}" "${r#/usr}" "/usr$1"; do
        o=$(dpkg -S "$p" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1)
        [ -n "$o" ] && echo "$o" && return
    done
}

if ! command -v dpkg >/dev/null 2>&1; then
    skip "every tool a test calls is in deps.sh" "not a Debian machine (dpkg tells which package a tool is of)"
else
    # A word that is no program on this machine cannot be a tool a test
    # runs here (a test that called it would fail, or skip, and CI fails on
    # both); each one that is, once.
    unknown="" tools=0
    for w in $(cut -d' ' -f1 "$TMP/words" | sort -u); do
        case " $(echo $builtins) $(echo $funcs) " in *" $w "*) continue ;; esac
        path=$(command -v "$w" 2>/dev/null)
        grep -qx "cmd $w" "$TMP/known" && tools=$((tools + 1)) && continue
        case $path in /*) ;; *) continue ;; esac
        tools=$((tools + 1))
        pkg=$(owner "$path")
        if [ -n "$pkg" ] && essential "$pkg"; then continue; fi
        unknown="$unknown $w (${pkg:-of no package}, in $(grep "^$w " "$TMP/words" | cut -d' ' -f2 | sort -u | tr '\n' ' '))"
    done
    if [ -z "$unknown" ] && [ $tools -gt 30 ]; then
        pass "every tool a test calls is in deps.sh or on every Debian machine ($tools tools)"
    else
        fail "every tool a test calls is in deps.sh or on every Debian machine" \
            "missing from scripts/deps.sh:$unknown" "($tools tools)"
    fi
fi

# the Python modules the tests import: the standard library or deps.sh's
# shellcheck disable=SC2086
mods=$(grep -ho 'import [a-z_][a-z0-9_]*\(, *[a-z_][a-z0-9_]*\)*' $FILES tests/cli/*.py 2>/dev/null |
    sed 's/import //; s/,/ /g' | tr ' ' '\n' | grep . | sort -u)
PY=/usr/bin/python3
if [ ! -x $PY ]; then
    skip "every Python module a test imports is in deps.sh" "no /usr/bin/python3"
else
    unknown=""
    for m in $mods; do
        grep -qx "py $m" "$TMP/known" && continue
        $PY -c "import sys; sys.exit(0 if '$m' in sys.stdlib_module_names else 1)" && continue
        unknown="$unknown $m"
    done
    if [ -n "$mods" ] && [ -z "$unknown" ]; then
        pass "every Python module a test imports is in deps.sh or the standard library ($(echo $mods))"
    else
        fail "every Python module a test imports is in deps.sh" "missing:$unknown" "read: $(echo $mods)"
    fi
fi

# ---- the modes, with apt-get and id replaced ----------------------------------------
# A PATH of the real tools but with recorders for apt-get and dpkg-query, an
# id that says what it is told, and without tshark (so something is missing).
mkdir -p "$TMP/bin"
for tool in apt-get dpkg-query; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/called"\n' "$tool" "$TMP" >"$TMP/bin/$tool"
    chmod +x "$TMP/bin/$tool"
done
printf '#!/bin/sh\n[ "$1" = -u ] && echo "${FAKE_UID:-1000}"\n' >"$TMP/bin/id"
chmod +x "$TMP/bin/id"
for tool in sh sed cat grep tr tail rm cmake make cc gcc pkg-config python3 uname clang git ip tc ps \
    pgrep pkill clang-format objdump nft gnuplot doxygen mpirun mpicc protoc-c; do
    p=$(command -v $tool 2>/dev/null) && ln -sf "$p" "$TMP/bin/$tool"
done
run_deps() { # UID ARGS...: deps.sh on that PATH; its status
    FAKE_UID=$1
    shift
    rm -f "$TMP/called"
    FAKE_UID=$FAKE_UID PATH="$TMP/bin" sh scripts/deps.sh "$@" >"$TMP/deps.out" 2>"$TMP/deps.err"
}
run_deps 1000
if [ $? -eq 0 ] && [ ! -e "$TMP/called" ] && grep -q "optional, not found: .*tshark" "$TMP/deps.err"; then
    pass "deps.sh alone: reports a missing optional tool, runs no package tool, exits 0"
else
    fail "deps.sh alone" "$(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
run_deps 1000 --dry-run
if [ $? -eq 0 ] && grep -q "^apt-get install .* tshark" "$TMP/deps.out" && [ ! -e "$TMP/called" ]; then
    pass "--dry-run prints the apt-get command, runs nothing"
else
    fail "--dry-run" "$(cat "$TMP/deps.out" "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
run_deps 1000 --auto test
if [ $? -eq 0 ] && [ ! -e "$TMP/called" ] && [ "$(wc -l <"$TMP/deps.err")" -eq 1 ] &&
    grep -q "^make: without tshark .* some checks will skip; on Debian, as root: sh scripts/deps.sh --install$" "$TMP/deps.err"
then
    pass "--auto test, not root: one line naming what will skip and the command; goes on"
else
    fail "--auto test, not root" "$(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
run_deps 0 --auto test
if [ $? -eq 0 ] && grep -q "^apt-get install -y -qq --no-install-recommends .*tshark" "$TMP/called" &&
    [ "$(wc -l <"$TMP/deps.err")" -eq 1 ] && grep -q "^make: installing what the test needs with apt-get" "$TMP/deps.err"
then
    pass "--auto test as root: installs what is missing, saying so in one line"
else
    fail "--auto test as root" "$(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
run_deps 0 --auto build
if [ $? -eq 0 ] && [ ! -e "$TMP/called" ] && [ ! -s "$TMP/deps.err" ]; then
    pass "--auto build: the build's needs are here, tshark is not its: nothing done, nothing said"
else
    fail "--auto build with the build's needs here" "$(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
# without the C libraries the build needs (no pkg-config, no header where it
# looks): root installs them, others are told the command and stopped
rm -f "$TMP/bin/pkg-config"
mkdir -p "$TMP/inc"
DEPS_INCLUDE_DIRS=$TMP/inc run_deps 1000 --auto build
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$TMP/called" ] && [ "$(wc -l <"$TMP/deps.err")" -eq 1 ] &&
    grep -q "^make: the build needs .*cJSON (JSON results), inih (scenario files), .*; on Debian, as root: sh scripts/deps.sh --install$" "$TMP/deps.err"
then
    pass "--auto build, not root, libraries missing: one line with the command, status 1"
else
    fail "--auto build, not root, libraries missing" "status $rc" "$(cat "$TMP/deps.err")"
fi
DEPS_INCLUDE_DIRS=$TMP/inc run_deps 0 --auto build
rc=$?
if [ $rc -eq 0 ] && grep -q "^apt-get install .*libcjson-dev libinih-dev libpcap-dev libsodium-dev" "$TMP/called" &&
    ! grep -q "tshark" "$TMP/called"; then
    pass "--auto build as root: installs the build's libraries, not the tests' tools"
else
    fail "--auto build as root" "status $rc" "$(cat "$TMP/deps.err")" "called: $(cat "$TMP/called" 2>/dev/null)"
fi
expect_err "--auto without a scope" 2 "^deps: --auto needs a scope: build or test$" sh scripts/deps.sh --auto
expect_err "--auto with a bad scope" 2 "^deps: --auto 'all': want build or test$" sh scripts/deps.sh --auto all

# ---- make: demo and test set up first, plain make does not -----------------------------
if command -v make >/dev/null 2>&1; then
    make -n build >"$TMP/make.n" 2>&1
    if grep -qE "apt-get|deps\.sh" "$TMP/make.n"; then
        fail "plain make runs no installer" "$(grep -E "apt-get|deps\.sh" "$TMP/make.n")"
    else
        pass "plain make runs no installer"
    fi
    if make -n demo 2>&1 | grep -q "scripts/deps.sh --auto build" &&
        make -n test 2>&1 | grep -q "scripts/deps.sh --auto test"; then
        pass "make demo and make test set the machine up first"
    else
        fail "make demo and make test set the machine up first" "$(make -n demo test 2>&1 | head -5)"
    fi
else
    skip "make" "make not found"
fi
finish
