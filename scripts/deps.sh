#!/bin/sh
# What Arbor needs, checked without a package manager, and on Debian
# installed when asked.
#
#   sh scripts/deps.sh              say what is missing (exit 1 if the build needs it)
#   sh scripts/deps.sh --install    also install what is missing (Debian, as root):
#                                   the build's libraries and tools, the test tools
#                                   and Open MPI (optional: arbor sweep over MPI)
#   sh scripts/deps.sh --fuzz       check (with --install: install) clang for `make fuzz`
#
# The build itself (CMake) finds the libraries wherever they are and names the
# missing ones; this script is a convenience for Debian and for CI.
set -eu

install=0 fuzz=0
for a in "$@"; do
    case $a in
    --install) install=1 ;;
    --fuzz) fuzz=1 ;;
    -h | --help)
        sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "deps: unknown option '$a' (--install, --fuzz)" >&2
        exit 2
        ;;
    esac
done

have_cmd() { command -v "$1" >/dev/null 2>&1; }

# A C library: pkg-config knows it, or its header is in a usual place.
have_lib() { # MODULE HEADER
    if have_cmd pkg-config && pkg-config --exists "$1" 2>/dev/null; then return 0; fi
    for d in /usr/include /usr/local/include /opt/homebrew/include; do
        [ -e "$d/$2" ] && return 0
    done
    return 1
}

have_py_jsonschema() {
    for p in python3 /usr/bin/python3; do
        have_cmd "$p" && "$p" -c 'import jsonschema' >/dev/null 2>&1 && return 0
    done
    return 1
}

missing_req="" missing_opt="" pkgs=""
need() { # KIND WHAT DEBIAN_PACKAGE  (KIND: req or opt)
    if [ "$1" = req ]; then missing_req="$missing_req $2"; else missing_opt="$missing_opt $2"; fi
    pkgs="$pkgs $3"
}

# the build
have_cmd cmake || need req cmake cmake
have_cmd make || need req make make
have_cmd cc || have_cmd gcc || need req "a C compiler" gcc
have_cmd pkg-config || have_cmd pkgconf || need req pkg-config pkg-config
have_lib libcjson cjson/cJSON.h || need req cJSON libcjson-dev
have_lib inih ini.h || need req inih libinih-dev
have_lib libpcap pcap.h || need req libpcap libpcap-dev
have_lib libsodium sodium.h || need req libsodium libsodium-dev
# optional: liburing (the runtime's io_uring option, ARBOR_IO=uring; "not built" without)
have_lib liburing liburing.h || need opt "liburing (the runtime's io_uring option)" liburing-dev
# optional: nftables (the runtime's namespace test drops packets with it; skipped without)
have_cmd nft || need opt "nftables (runtime loss test)" nftables
# optional: Chakra traces (protobuf-c); the tests that use a tool skip without it
have_lib libprotobuf-c protobuf-c/protobuf-c.h || need opt "protobuf-c (Chakra traces)" libprotobuf-c-dev
have_cmd protoc-c || need opt "protoc-c (Chakra traces)" protobuf-c-compiler
have_cmd tshark || need opt "tshark (capture and dissector tests)" tshark
have_cmd gnuplot || need opt "gnuplot (arbor plot, route --plot)" gnuplot-nox
have_cmd doxygen || need opt "doxygen (the API reference, make docs)" doxygen
have_py_jsonschema || need opt "python3 jsonschema (JSON Schema tests)" python3-jsonschema
# optional: Open MPI, for `mpirun -np K arbor sweep` and the tests that run it
have_lib ompi-c mpi.h || have_lib ompi-c openmpi/mpi.h ||
    need opt "Open MPI headers (arbor sweep over MPI ranks)" libopenmpi-dev
have_cmd mpirun || need opt "mpirun (the MPI sweep tests)" openmpi-bin
if [ $fuzz -eq 1 ]; then
    have_cmd clang || need req "clang (make fuzz)" clang
    # libFuzzer's runtime comes with Debian's libclang-rt-dev
    if have_cmd clang && ! echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}' |
        clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1; then
        need req "libFuzzer (make fuzz)" libclang-rt-dev
    fi
fi

[ -z "$pkgs" ] && exit 0
[ -n "$missing_req" ] && echo "deps: the build needs:$missing_req" >&2
[ -n "$missing_opt" ] && echo "deps: optional, not found:$missing_opt" >&2

if [ $install -eq 0 ]; then
    echo "deps: on Debian, 'sh scripts/deps.sh --install' as root installs:$pkgs" >&2
    [ -z "$missing_req" ]
    exit
fi
if ! have_cmd apt-get; then
    echo "deps: --install knows Debian's apt-get only; install the above by hand" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: --install needs root; run: sudo sh scripts/deps.sh --install" >&2
    exit 1
fi
echo "deps: installing$pkgs" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $pkgs >&2
