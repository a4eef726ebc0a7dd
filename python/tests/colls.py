"""The Python package's collectives, run as every rank of an Arbor job
(python/tests/test_python.sh: arbor run -n 4 -- /usr/bin/python3 colls.py).

Every rank's input is a function of its rank, so each rank computes the
expected result itself; inputs are small integers (also as floats), whose
sums are exact in every dtype and order, so every result must be exact.
Prints "rank R: N checks, W wrong, C calls" (C as the communicator counted
them) and exits 1 when a check failed.

    colls.py DIR         the checks (the ranks meet in the empty
                         directory DIR first)
    colls.py DIR kill R  rank R dies inside a 64 MiB AllReduce; the others
                         print "rank Q: error after T s: MESSAGE"
    colls.py DIR ticker  five 100 ms gaps between barriers, then 20
                         AllReduces of 16 MiB; prints "rank R: ticker
                         WAKES BUSY_WAKES WAIT_S TICKS" (ticker_stats())
"""
import array
import os
import signal
import sys
import time

import numpy as np

import arbor

comm = arbor.Comm()
me, n = comm.rank, comm.size
checks = wrong = calls = 0


def say(line, fd=1):
    """One line as one write: the ranks share the file, and print() writes
    the newline separately when Python runs unbuffered (PYTHONUNBUFFERED),
    which interleaves the ranks' lines."""
    os.write(fd, (line + "\n").encode())


def check(what, got, want):
    global checks, wrong
    checks += 1
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        wrong += 1
        say(f"rank {me}: WRONG {what}: {np.asarray(got)[:4]} want {np.asarray(want)[:4]}", 2)


def data(rank, count, dtype):
    i = np.arange(count, dtype=np.int64)
    return ((i * 7 + rank * 13) % 201 - 100).astype(dtype)


def kill_mode(victim):
    # arbor run stops the other ranks (SIGTERM) when one dies: these stay
    # to report their own call's end (SIGKILL comes 5 s later)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    x = np.ones(16 << 20, np.float32)
    t0 = time.monotonic()
    try:
        # the victim may die before it answered the peers' last packets of
        # this first call: then theirs is the call that fails
        comm.allreduce(np.ones(1, np.float32))
        if me == victim:
            req = comm.iallreduce(x)
            for _ in range(20):
                req.test()
            os.kill(os.getpid(), signal.SIGKILL)
        t0 = time.monotonic()
        comm.allreduce(x)
        say(f"rank {me}: success after {time.monotonic() - t0:.1f} s")
    except arbor.ArborError as e:
        say(f"rank {me}: error after {time.monotonic() - t0:.1f} s: {e}")
    os._exit(0)


def meet(ready):
    """Start together: a first call's engines give up on a peer silent for
    a second or two, and Python ranks on a loaded machine start seconds
    apart (importing NumPy)."""
    open(f"{ready}/{me}", "w").close()
    t_end = time.monotonic() + 60
    while len(os.listdir(ready)) < n and time.monotonic() < t_end:
        time.sleep(0.01)


def ticker_mode():
    for _ in range(5):
        time.sleep(0.1)
        comm.barrier()
    x = np.zeros(4 << 20, np.float32)
    for _ in range(20):
        comm.allreduce(x)
    tk = comm.ticker_stats()
    say(f"rank {me}: ticker {tk['wakes']} {tk['busy_wakes']} {tk['wait_s']:.3f} {tk['ticks']}")
    comm.free()
    sys.exit(0)


meet(sys.argv[1])
if len(sys.argv) > 3 and sys.argv[2] == "kill":
    kill_mode(int(sys.argv[3]))
if len(sys.argv) > 2 and sys.argv[2] == "ticker":
    ticker_mode()

OPS = {"sum": lambda a: a.sum(axis=0), "max": lambda a: a.max(axis=0),
       "min": lambda a: a.min(axis=0)}
for dtype in (np.float16, np.float32, np.float64, np.int32, np.int64):
    for count in (1, 1000, 100003):
        mine = data(me, count, dtype)
        every = np.stack([data(r, count, dtype) for r in range(n)])
        for op, f in OPS.items():
            want = f(every).astype(dtype)
            what = f"{dtype.__name__} x {count} {op}"
            check("allreduce " + what, comm.allreduce(mine, np.empty_like(mine), op=op), want)
            x = mine.copy()
            comm.allreduce(x, op=op)  # in place
            check("allreduce in place " + what, x, want)
            x = mine.copy()
            out = comm.reduce(x, op=op, root=n - 1)  # in place at the root
            if me == n - 1:
                check("reduce in place " + what, out, want)
            out = comm.reduce(mine, np.empty_like(mine), op=op, root=0)
            if me == 0:
                check("reduce " + what, out, want)
            big = np.concatenate([data(me + 100 * b, count, dtype) for b in range(n)])
            bwant = f(np.stack([np.concatenate([data(r + 100 * b, count, dtype) for b in range(n)])
                                for r in range(n)])).astype(dtype)
            check("reducescatter " + what, comm.reducescatter(big, op=op),
                  bwant[me * count:(me + 1) * count])
            r1 = comm.iallreduce(mine, np.empty_like(mine), op=op)
            r2 = comm.iallreduce(mine.copy(), op=op)
            while not r1.test():
                pass
            check("iallreduce " + what, r1.wait(), want)
            check("iallreduce in place " + what, r2.wait(), want)
            calls += 7
        b = mine.copy() if me == 1 else np.zeros_like(mine)
        check(f"broadcast {dtype.__name__} x {count}", comm.broadcast(b, root=1), data(1, count, dtype))
        check(f"allgather {dtype.__name__} x {count}", comm.allgather(mine), every.reshape(-1))
        calls += 2

# bfloat16: the wire carries it; NumPy has no such type, so uint16 storage.
# Its 8-bit significand holds integers exactly up to 256 only, so the inputs
# are halved: |x| <= 50, and every partial sum of 4 ranks, in any order, is
# exact (data()'s values would reach 400, where the order of the sums
# decides the rounding)
def half(rank):
    return np.floor_divide(data(rank, 64, np.float32), 2)


bf = (half(me).view(np.uint32) >> 16).astype(np.uint16)
want = sum(half(r) for r in range(n))
got = (comm.allreduce(bf, dtype="bf16").astype(np.uint32) << 16).view(np.float32)
check("allreduce bf16", got, want)
calls += 1
# any buffer-protocol object: array.array, bytearray (moved as 4-byte words)
a = array.array("i", [me + 1] * 10)
comm.allreduce(a)
check("allreduce array.array", list(a), [n * (n + 1) // 2] * 10)
ba = bytearray(b"arbor-py" * 4) if me == 0 else bytearray(32)
comm.broadcast(ba, root=0)
check("broadcast bytearray", list(ba), list(b"arbor-py" * 4))
g = comm.allgather(bytes([me] * 8))
check("allgather bytes", list(g), [r for r in range(n) for _ in range(8)])
comm.barrier()
req = comm.ibarrier()
req.wait()
calls += 5
# errors: named, and the communicator goes on
for bad, kind in ((lambda: comm.allreduce(mine, op="prod"), ValueError),
                  (lambda: comm.allreduce(bytearray(b"abc")), TypeError),
                  (lambda: comm.allreduce(np.zeros(3), np.zeros(4)), ValueError),
                  (lambda: comm.reduce(mine, root=n), arbor.ArborError)):
    try:
        bad()
        check("an error is raised", 0, 1)
    except kind as e:
        check(f"{kind.__name__}: {e}", 1, 1)
try:
    comm.reduce(mine, root=n)
except arbor.ArborError as e:
    check("the runtime's message: " + str(e), f"root {n} is not a rank of {n}" in str(e), True)
comm.barrier()
calls += 1
st = comm.stats()
check(f"the communicator counted {st['calls']} calls, {calls} made", st["calls"], calls)
say(f"rank {me}: {checks} checks, {wrong} wrong, {st['calls']} calls, "
    f"{st['tx_bytes']} B sent")
comm.free()
sys.exit(1 if wrong else 0)
