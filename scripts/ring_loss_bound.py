#!/usr/bin/env python3
"""scripts/ring_loss_bound.py --topo T --size S --loss P --cct0 US [--tail US]

The ring AllReduce's efficiency under random loss, from the model's
parameters (docs/results.md, "The ring's timers"): bounds on
CCT(loss 0) / CCT(loss P) for the ring over IRN with its derived timers and
the tail-loss probe (docs/transports.md), at the simulator's defaults
(100 Gb/s, 1 us links, 4096 B payload + 82 B, 86 B acks).

T is star:N, leafspine:L,D,U or kary:K,2 (ranks: every host, in order;
rank r sends to r + 1). S the buffer (bytes, or with KiB, MiB, GiB). P the
loss per packet per link. US the measured loss-free CCT in microseconds,
whose 2(N-1) equal steps each last t0 = US / 2(N-1).

Per step each of the N flows sends M = S / N / 4096 packets over l links
(2 between hosts of one switch, 4 across the spines); a packet is lost on
its way with q = 1 - (1 - P)^l. What a flow adds to its step:
  - every lost data packet but the last: its resend, one packet time T, in
    the stream (IRN resends it as soon as the next packet's NACK is back),
    and T again for each resend lost too (a later packet's NACK shows it);
  - the last packet lost (probability q): nothing behind it tells; the
    probe finds it, 2 x the flow's loop (at least the fabric's longest
    loop) after the last answer, and arrives a loop later: PTO + loop.
The ring's CCT is the longest chain of steps through the ranks (each rank
waits for the step it receives), and every chain takes one flow a step:
  - at least the mean chain: t0 + E[X] a step, X a flow's addition;
  - at most the chain of each step's worst flow: t0 + E[max of N X's].
So t0 / (t0 + E[max X]) <= efficiency <= t0 / (t0 + E[X]), up to what the
model leaves out: the losses of the probe itself (q^2: an rto_low), of
acks (they delay no receiver), and queueing. --tail US sets what a lost
last packet costs instead of the probe (IRN with a fixed timeout: about
the timeout).
"""
import argparse
import math
import re
import sys

RATE = 100e9
DELAY = 1e-6
T = 4178 * 8 / RATE  # a data packet's wire time
A = 86 * 8 / RATE  # an ack's


def size_of(s):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB|GiB)?", s)
    if not m:
        raise SystemExit("bad size: " + s)
    return int(m.group(1)) * {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)]


def fabric(spec):
    """(hosts, hosts per switch of level 1, switch levels)"""
    kind, _, params = spec.partition(":")
    v = [int(x) for x in params.split(",")]
    if kind == "star":
        return v[0], v[0], 1
    if kind == "leafspine":
        return v[0] * v[1], v[1], 2
    if kind == "kary" and v[1] == 2:
        return v[0] * v[0], v[0], 2
    raise SystemExit("topology not modelled: " + spec)


def binom(n, k, p):
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def flow_dist(m, q, t_tail):
    """The distribution of one flow's addition X: {value: probability}."""
    d = {}
    for k in range(m + 1):  # k of its m packets lost on the first send
        pk = binom(m, k, q)
        if pk < 1e-15:
            continue
        for last in (0, 1):  # whether the last packet is among them
            pl = (k / m) if last else (1 - k / m)
            if pl == 0:
                continue
            for j in range(k - last + 1):  # resends lost as well
                pj = binom(k - last, j, q)
                if pj < 1e-15:
                    continue
                x = round(((k - last + j) * T + last * t_tail) * 1e12)  # ps, exact keys
                d[x] = d.get(x, 0) + pk * pl * pj
    return {x * 1e-12: p for x, p in d.items()}


def e_max(dists):
    """E[max] of independent discrete variables."""
    xs = sorted({x for d in dists for x in d})
    cdfs = []
    for d in dists:
        acc, c = 0.0, {}
        for x in xs:
            acc += d.get(x, 0)
            c[x] = min(acc, 1.0)
        cdfs.append(c)
    e, prev = 0.0, 0.0
    for x in xs:
        f = 1.0
        for c in cdfs:
            f *= c[x]
        e += x * (f - prev)
        prev = f
    return e


def main():
    ap = argparse.ArgumentParser(description="bounds on the ring's efficiency under loss")
    ap.add_argument("--topo", required=True)
    ap.add_argument("--size", required=True)
    ap.add_argument("--loss", type=float, required=True)
    ap.add_argument("--cct0", type=float, required=True, help="loss-free CCT, us")
    ap.add_argument("--tail", type=float, help="a lost last packet's cost, us (default: the probe's)")
    a = ap.parse_args()
    n, per_leaf, h = fabric(a.topo)
    m = size_of(a.size) // n // 4096
    hop = (DELAY + T) + (DELAY + A)
    fabric_loop = 2 * h * hop
    t0 = a.cct0 * 1e-6 / (2 * (n - 1))
    dists, means = [], []
    for r in range(n):
        links = 2 if r // per_leaf == ((r + 1) % n) // per_leaf else 4
        loop = links * hop
        pto = min(max(2 * loop, fabric_loop), 4 * fabric_loop)
        q = 1 - (1 - a.loss) ** links
        d = flow_dist(m, q, a.tail * 1e-6 if a.tail is not None else pto + loop)
        dists.append(d)
        means.append(sum(x * p for x, p in d.items()))
    mean = sum(means) / n
    worst = e_max(dists)
    print("%s %s loss %g: %d ranks, %d packets a step, t0 %.3f us; per step E[X] %.3f us, "
          "E[max X] %.3f us; efficiency %.3f .. %.3f"
          % (a.topo, a.size, a.loss, n, m, t0 * 1e6, mean * 1e6, worst * 1e6, t0 / (t0 + worst),
             t0 / (t0 + mean)))


if __name__ == "__main__":
    sys.exit(main())
