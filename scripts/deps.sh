#!/bin/sh
# Install the Debian packages Arbor needs to build and test, when missing.
# As root it runs apt-get; otherwise it prints the exact command to run.
# Usage: scripts/deps.sh [--optional]   (--optional adds the fuzzing tools)
set -eu

required="cmake make gcc pkg-config libcjson-dev libinih-dev gnuplot-nox libpcap-dev tshark nftables
          libprotobuf-c-dev protobuf-c-compiler libsodium-dev"
optional="clang libclang-rt-dev"

want=$required
[ "${1:-}" = "--optional" ] && want="$required $optional"

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >&2
else
    echo "deps: missing Debian packages; run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    exit 1
fi
