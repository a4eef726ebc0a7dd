#!/usr/bin/env python3
"""Write the simulator speed benchmark's traffic, bench/data/perm1024.cm.

    python3 scripts/gen_perm.py [N] [BYTES] [SEED] > bench/data/perm1024.cm

A random permutation of N hosts (default 1024) with no host sending to
itself, every host one flow of BYTES (default 2,000,000) starting at time 0,
in htsim's connection-matrix format (docs/scenarios.md, "htsim connection
matrix"): "Nodes N", "Connections N", then "SRC->DST id I start 0 size BYTES"
per flow. The shuffle draws from SplitMix64 seeded with SEED (default 1), so
the file is a pure function of the arguments: running it again gives the
same bytes, and the shipped file is checked against it by
tests/cli/test_workloads.sh.
"""
import sys

MASK = (1 << 64) - 1


def splitmix64(state):
    """One SplitMix64 step: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def derangement(n, seed):
    """Fisher-Yates shuffles until no element stays in place."""
    state = seed
    while True:
        p = list(range(n))
        for i in range(n - 1, 0, -1):
            state, r = splitmix64(state)
            j = r % (i + 1)
            p[i], p[j] = p[j], p[i]
        if all(p[i] != i for i in range(n)):
            return p


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 2000000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    p = derangement(n, seed)
    out = ["Nodes %d" % n, "Connections %d" % n]
    for i in range(n):
        out.append("%d->%d id %d start 0 size %d" % (i, p[i], i + 1, size))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
