#!/usr/bin/env python3
"""Write the seed corpus of fuzz_agg_repair to tests/fuzz/corpus/agg_repair/.

Each seed is a program in the target's byte language (tests/fuzz/fuzz_agg_repair.c):
a configuration byte, then operations: 0 credit (offset|attempt<<3|depth<<5|channel<<7,
then the armed ports), 1 request (which credit and attempt, then fan-in, CE and port),
2 expire (the clock's step in 5 us), 3 with a value >= 250 reset. The hand-written
seeds walk each path of local repair; the rest are random programs from a fixed seed.

Usage: python3 tests/fuzz/gen_agg_repair_corpus.py [OUTDIR]
"""
import os
import random
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "agg_repair")
CFG = 3 | 0 << 3 | 3 << 4  # 4 slots, values, 4 ports


def credit(offset, attempt=0, depth=0, ch=0, ports=0b0111):
    return bytes([0, offset | attempt << 3 | depth << 5 | ch << 7, ports])


def request(which, same_attempt=1, attempt=0, fanin3=0, port=0):
    return bytes([1, which | same_attempt << 4, fanin3 | attempt << 2 | port << 4])


def expire(step):
    return bytes([2, step])


SEEDS = {
    # a credit armed to 3 ports, two answer, the timer re-credits the third
    "recredit-timer": [credit(1), request(0, port=0), request(0, port=1), expire(200)],
    # attempt 1 adopts attempt 0's partial slot; an attempt-0 input counts in it
    "adopt": [credit(2), request(0, port=0), credit(2, attempt=1), request(1, port=1),
              request(0, 0, 0, port=2)],
    # the slot completes, attempt 1's credit is answered with the aggregate
    "replay": [credit(3, ports=0b11), request(0, port=0), request(0, port=1),
               credit(3, attempt=1, ports=0b11)],
    # a second copy of a live context's credit is held
    "held": [credit(4), credit(4), request(0, port=0)],
    # a reset loses every slot and timer
    "reset": [credit(5), request(0, port=0), bytes([255]), expire(200), credit(5, attempt=1)],
    # two channels, one offset each, at depth 1
    "channels": [credit(6, depth=1), credit(6, depth=1, ch=1), request(0, port=0),
                 request(1, port=0), expire(100), expire(200)],
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, ops in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([CFG]) + b"".join(ops))
    rng = random.Random(20261206)
    for i in range(8):
        with open(os.path.join(OUT, "random-%d" % i), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(64 + 64 * i)))


if __name__ == "__main__":
    main()
