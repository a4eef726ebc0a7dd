#!/bin/sh
# What Arbor's build and tests need, checked without a package manager, and on
# Debian installed when asked (or, for make demo and make test, when missing).
#
#   sh scripts/deps.sh                 say what is missing (exit 1 if the build needs it)
#   sh scripts/deps.sh --install       install everything missing (Debian, as root): the
#                                      build's libraries and tools, the optional libraries
#                                      (io_uring, Chakra, Open MPI) and every test's tools
#   sh scripts/deps.sh --dry-run       print the apt-get command --install would run
#   sh scripts/deps.sh --list          every package this script knows: package, scope,
#                                      the commands or modules it checks, what for
#   sh scripts/deps.sh --auto SCOPE    what make does before building: nothing when all of
#                                      SCOPE (build: make demo; test: make test) is here;
#                                      else install it when root with apt-get, saying so in
#                                      one line; else one line with the command to run, and
#                                      exit 1 when the build itself cannot go on
#   sh scripts/deps.sh --fuzz ...      also clang and libFuzzer's runtime (make fuzz)
#
# Scopes: build (the library and the command), opt (optional libraries that add
# features), test (tools the tests call), fuzz (make fuzz). A library counts as
# here when pkg-config knows it or its header is in one of DEPS_INCLUDE_DIRS
# (default /usr/include /usr/local/include /opt/homebrew/include). The build
# itself (CMake) finds the libraries wherever they are and names the missing ones.
set -eu

mode=check scope=test fuzz=0
while [ $# -gt 0 ]; do
    case $1 in
    --install) mode=install ;;
    --dry-run) mode=dry ;;
    --list) mode=list ;;
    --auto)
        mode=auto
        [ $# -ge 2 ] || {
            echo "deps: --auto needs a scope: build or test" >&2
            exit 2
        }
        scope=$2
        shift
        case $scope in build | test) ;; *)
            echo "deps: --auto '$scope': want build or test" >&2
            exit 2
            ;;
        esac
        ;;
    --fuzz) fuzz=1 ;;
    -h | --help)
        sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "deps: unknown option '$1' (--install, --dry-run, --list, --auto SCOPE, --fuzz)" >&2
        exit 2
        ;;
    esac
    shift
done

# The packages, one a line: package, scope, checks (comma-separated; any one
# found is enough: cmd:NAME a command on PATH; lib:MODULE:HEADER a C library
# known to pkg-config or whose header is in a usual place; py:MODULE a module
# of Debian's /usr/bin/python3; fuzz:libfuzzer clang links -fsanitize=fuzzer),
# then what it is for. Commands a package provides beyond the one checked are
# listed after a '+' (cmd:ip+tc): tests/cli/test_deps.sh reads them.
packages() {
    cat <<'EOF'
cmake               build cmd:cmake                               CMake
make                build cmd:make                                make
gcc                 build cmd:cc,cmd:gcc                          a C compiler
pkg-config          build cmd:pkg-config,cmd:pkgconf              pkg-config
libcjson-dev        build lib:libcjson:cjson/cJSON.h              cJSON (JSON results)
libinih-dev         build lib:inih:ini.h                          inih (scenario files)
libpcap-dev         build lib:libpcap:pcap.h                      libpcap (captures)
libsodium-dev       build lib:libsodium:sodium.h                  libsodium (the runtime's admission MACs)
liburing-dev        opt   lib:liburing:liburing.h                 liburing (the runtime's io_uring option)
libprotobuf-c-dev   opt   lib:libprotobuf-c:protobuf-c/protobuf-c.h  protobuf-c (Chakra traces)
protobuf-c-compiler opt   cmd:protoc-c                            protoc-c (Chakra traces)
libopenmpi-dev      opt   lib:ompi-c:mpi.h,lib:ompi-c:openmpi/mpi.h  Open MPI headers (arbor sim --partition, arbor sweep over MPI)
openmpi-bin         test  cmd:mpirun+mpicc                        mpirun (the partition, sweep and MPI-hosts tests)
python3             test  cmd:python3                             Python (JSON fields and generators in tests)
python3-jsonschema  test  py:jsonschema                           jsonschema (the output schema tests)
python3-numpy       test  py:numpy                                NumPy (the Python package's tests)
python3-mpi4py      test  py:mpi4py                               mpi4py (an unmodified mpi4py program over the MPI interposer)
python3-torch       opt   py:torch                                PyTorch, CPU (arbor.torch, the DDP hook, and its tests)
tshark              test  cmd:tshark                              tshark (capture and dissector tests)
gnuplot-nox         test  cmd:gnuplot                             gnuplot (arbor plot, route --plot)
doxygen             test  cmd:doxygen                             doxygen (the API reference, make docs)
nftables            test  cmd:nft                                 nftables (the runtime's loss test in namespaces)
iproute2            test  cmd:ip+tc                               iproute2 (network namespaces in tests)
procps              test  cmd:ps+pgrep+pkill                      procps (tests that look for processes)
clang-format        test  cmd:clang-format                        clang-format (the format test)
binutils            test  cmd:objdump+nm+readelf                     binutils (the prefetch and install tests)
git                 test  cmd:git                                 git (the docs and version tests)
clang               fuzz  cmd:clang                               clang (make fuzz)
libclang-rt-dev     fuzz  fuzz:libfuzzer                          libFuzzer's runtime (make fuzz)
EOF
}

have_cmd() { command -v "$1" >/dev/null 2>&1; }

# A C library: pkg-config knows it, or its header is in a usual place.
have_lib() { # MODULE HEADER
    if have_cmd pkg-config && pkg-config --exists "$1" 2>/dev/null; then return 0; fi
    for d in ${DEPS_INCLUDE_DIRS:-/usr/include /usr/local/include /opt/homebrew/include}; do
        [ -e "$d/$2" ] && return 0
    done
    return 1
}

have_libfuzzer() {
    have_cmd clang &&
        echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}' |
        clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1
}

# have CHECKS: one of the comma-separated checks holds
have() {
    old_ifs=$IFS
    IFS=,
    # shellcheck disable=SC2086
    set -- $1
    IFS=$old_ifs
    for c in "$@"; do
        c=${c%%+*}
        case $c in
        cmd:*) have_cmd "${c#cmd:}" && return 0 ;;
        lib:*)
            m=${c#lib:}
            have_lib "${m%%:*}" "${m#*:}" && return 0
            ;;
        py:*) [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import ${c#py:}" >/dev/null 2>&1 && return 0 ;;
        fuzz:libfuzzer) have_libfuzzer && return 0 ;;
        esac
    done
    return 1
}

# in_scope SCOPE: the package's scope is wanted in this mode
in_scope() {
    case $1 in
    build) return 0 ;;
    fuzz) [ $fuzz -eq 1 ] ;;
    *) [ "$mode" != auto ] || [ "$scope" = test ] ;;
    esac
}

if [ $mode = list ]; then
    packages | while read -r pkg sc checks what; do
        printf '%s\t%s\t%s\t%s\n' "$pkg" "$sc" "$checks" "$what"
    done
    exit 0
fi

missing_req="" missing_opt="" pkgs=""
tab=$(packages | tr -s ' ' | sed 's/ /|/; s/ /|/; s/ /|/')
old_ifs=$IFS
IFS='
'
for line in $tab; do
    IFS=$old_ifs
    pkg=${line%%|*} rest=${line#*|}
    sc=${rest%%|*} rest=${rest#*|}
    checks=${rest%%|*} what=${rest#*|}
    in_scope "$sc" || continue
    have "$checks" && continue
    pkgs="$pkgs $pkg"
    case $sc in
    build | fuzz) missing_req="$missing_req, $what" ;;
    *) missing_opt="$missing_opt, $what" ;;
    esac
done
IFS=$old_ifs
missing_req=${missing_req#, } missing_opt=${missing_opt#, }

can_install() { have_cmd apt-get && [ "$(id -u)" -eq 0 ]; }

apt_install() { # PACKAGES...: apt-get's output in a log, its tail on failure
    log=${TMPDIR:-/tmp}/arbor-deps.$$.log
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq --no-install-recommends "$@" >>"$log" 2>&1
    then
        rm -f "$log"
        return 0
    fi
    echo "deps: apt-get failed; its last lines (all of them in $log):" >&2
    tail -5 "$log" >&2
    return 1
}

case $mode in
dry)
    if [ -z "$pkgs" ]; then
        echo "deps: nothing to install"
    else
        echo "apt-get install -y --no-install-recommends$pkgs"
    fi
    exit 0
    ;;
check)
    [ -z "$pkgs" ] && exit 0
    [ -n "$missing_req" ] && echo "deps: the build needs: $missing_req" >&2
    [ -n "$missing_opt" ] && echo "deps: optional, not found: $missing_opt" >&2
    echo "deps: on Debian, 'sh scripts/deps.sh --install' as root installs:$pkgs" >&2
    [ -z "$missing_req" ]
    exit
    ;;
auto)
    [ -z "$pkgs" ] && exit 0
    if can_install; then
        echo "make: installing what the $scope needs with apt-get (sh scripts/deps.sh --install):$pkgs" >&2
        # shellcheck disable=SC2086
        apt_install $pkgs
        exit
    fi
    if [ -n "$missing_req" ]; then
        echo "make: the build needs $missing_req; on Debian, as root: sh scripts/deps.sh --install" >&2
        exit 1
    fi
    echo "make: without $missing_opt some checks will skip; on Debian, as root: sh scripts/deps.sh --install" >&2
    exit 0
    ;;
esac

# --install
[ -z "$pkgs" ] && exit 0
[ -n "$missing_req" ] && echo "deps: the build needs: $missing_req" >&2
[ -n "$missing_opt" ] && echo "deps: optional, not found: $missing_opt" >&2
if ! have_cmd apt-get; then
    echo "deps: --install knows Debian's apt-get only; install the above by hand" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: --install needs root; run: sudo sh scripts/deps.sh --install" >&2
    exit 1
fi
echo "deps: installing$pkgs" >&2
# shellcheck disable=SC2086
apt_install $pkgs
