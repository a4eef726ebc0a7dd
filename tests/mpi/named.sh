# named_in_time FILE VICTIM LIMIT RANK...: how many of the RANKs printed, in
# FILE, "rank R: error after T s: MESSAGE" with MESSAGE naming VICTIM as the
# rank that never answered and T at most LIMIT seconds; each other RANK's
# line (or its absence) is echoed indented. Sourced by the tests of a rank
# killed inside a call (tests/cli/test_mpi.sh, python/tests/test_python.sh).
named_in_time() {
    _f=$1 _v=$2 _lim=$3
    shift 3
    _n=0
    for _r in "$@"; do
        _line=$(grep "^rank $_r: error after " "$_f")
        _t=$(echo "$_line" | sed -n 's/^rank [0-9]*: error after \([0-9.]*\) s: .*/\1/p')
        if echo "$_line" | grep -Eq "rank $_v never answered|unanswered for [0-9.]+ s: ([0-9]+,)*$_v([,;]|\$)" &&
            [ -n "$_t" ] && awk -v t="$_t" -v l="$_lim" 'BEGIN { exit !(t <= l) }'; then
            _n=$((_n + 1))
        else
            echo "  rank $_r: ${_line:-no error line}" >&2
        fi
    done
    echo $_n
}
