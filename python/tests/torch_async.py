"""arbor.torch's communication thread (python/tests/test_torch.sh:
arbor run -n 4 -- /usr/bin/python3 torch_async.py DIR MODE ...).

    torch_async.py DIR order      the hook returns before its all-reduce is
                                  done, buckets keep their order, the queue
                                  stays bounded (below)
    torch_async.py DIR kill R     rank R dies inside a bucket's all-reduce
    torch_async.py DIR exit       every rank leaves with buckets in flight

order: rank 0 hands its buckets DELAY seconds after the others. On the
other ranks the hook must return at once (well before DELAY) with a future
not done, which completes only once rank 0 has joined, exact; six buckets
of six sizes, handed in one order on every rank, must all come back
exact (a bucket paired with another's on some rank would not: the sizes
differ). A state of depth 2 on the same ranks: of five buckets handed while
rank 0 waits, the first is in its call and two wait, so the fourth hook
call blocks until rank 0 comes, and no more than two ever waited. Prints
"rank R: N checks, W wrong" and exits 1 when a check failed.

kill: every rank hands a 64 MiB bucket; rank R kills itself while its
call runs. The others print "rank Q: error after T s: MESSAGE" (the
future's ArborError, T from the hook), then hand one more bucket, whose
future must fail at once naming the first failure: "rank Q: next bucket
failed after T s: MESSAGE".

exit: every rank hands four buckets and ends its script without waiting
for them, closing the state or freeing the communicator: the interpreter's
exit must finish them (each future's callback prints "rank R: bucket K
done, exact" or "... WRONG") and the process must end.

The ranks meet first in the empty directory DIR."""
import os
import signal
import sys
import time

import torch

import arbor
import arbor.torch
from torchkit import Bucket, Checks

DELAY = 1.5
rank, size = int(os.environ["ARBOR_RANK"]), int(os.environ["ARBOR_SIZE"])
check = Checks(rank)


def say(line):
    os.write(1, (line + "\n").encode())


def data(r, n, k=0):
    """Rank r's bucket k of n elements: small integers, times the ranks, so
    that the hook's division by them and the sum are exact."""
    return (((torch.arange(n) * 7 + r * 13 + k * 5) % 31 - 15) * size).float()


def average(n, k=0):
    return sum(data(r, n, k) for r in range(size)) / size


def meet(ready):
    open(f"{ready}/{rank}", "w").close()
    t_end = time.monotonic() + 60
    while len(os.listdir(ready)) < size and time.monotonic() < t_end:
        time.sleep(0.01)


def order():
    st = arbor.torch.state()
    arbor.torch.allreduce(st, torch.zeros(1))  # all joined: a barrier
    sizes = [4096, 1, 70000, 513, 262144, 8]
    if rank == 0:
        time.sleep(DELAY)
    t0 = time.monotonic()
    futs = [arbor.torch.allreduce_hook(st, Bucket(data(rank, n, k)))
            for k, n in enumerate(sizes)]
    handed = time.monotonic() - t0
    if rank != 0:
        check(f"the hook returned after {handed:.3f} s, before rank 0 came ({DELAY} s)",
              handed < DELAY / 3)
        check("the first bucket's future is not done before rank 0 came", not futs[0].done())
    for k, (n, f) in enumerate(zip(sizes, futs)):
        check(f"bucket {k} ({n} elements) is the average", torch.equal(f.wait(), average(n, k)))
    if rank != 0:
        waited = time.monotonic() - t0
        check(f"the buckets completed after {waited:.3f} s: once rank 0 came",
              waited > DELAY / 2)
    # depth 2: the first bucket in its call, two waiting, the fourth blocks
    small = arbor.torch.HookState(st.comm, depth=2)
    arbor.torch.allreduce(small, torch.zeros(1))
    if rank == 0:
        time.sleep(DELAY)
    t0 = time.monotonic()
    futs, times = [], []
    for k in range(5):
        futs.append(arbor.torch.allreduce_hook(small, Bucket(data(rank, 1000, k))))
        times.append(time.monotonic() - t0)
    if rank != 0:
        check(f"depth 2: the third hook call returned at once ({times[2]:.3f} s)",
              times[2] < DELAY / 3)
        check(f"depth 2: the fourth hook call waited for rank 0 ({times[3]:.3f} s)",
              times[3] > DELAY / 2)
    for k, f in enumerate(futs):
        check(f"depth 2: bucket {k} is the average", torch.equal(f.wait(), average(1000, k)))
    check(f"depth 2: at most 2 buckets waited ({small.most_queued})", small.most_queued <= 2)
    small.close()
    check("close() joined the thread", not small._thread.is_alive())
    try:
        arbor.torch.allreduce_hook(small, Bucket(data(rank, 8)))
        check("a closed state refuses a bucket", False)
    except arbor.ArborError as e:
        check("a closed state refuses a bucket: " + str(e), "closed" in str(e))
    st.close()
    say(f"rank {rank}: {check.n} checks, {check.wrong} wrong")
    st.comm.free()
    sys.exit(1 if check.wrong else 0)


def kill(victim):
    # arbor run stops the other ranks (SIGTERM) when one dies: these stay
    # to report (SIGKILL comes 5 s later)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    st = arbor.torch.state()
    arbor.torch.allreduce(st, torch.zeros(1))
    x = torch.ones(16 << 20)
    t0 = time.monotonic()
    fut = arbor.torch.allreduce_hook(st, Bucket(x))
    if rank == victim:
        # once the thread has started the call (its request registered),
        # die inside it: 64 MiB take longer than 50 ms
        while not st.comm._inflight and time.monotonic() - t0 < 10:
            time.sleep(0.001)
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        fut.wait()
        say(f"rank {rank}: success after {time.monotonic() - t0:.1f} s")
    except arbor.ArborError as e:
        say(f"rank {rank}: error after {time.monotonic() - t0:.1f} s: {e}")
    t1 = time.monotonic()
    try:
        arbor.torch.allreduce_hook(st, Bucket(torch.ones(8))).wait()
        say(f"rank {rank}: next bucket succeeded")
    except arbor.ArborError as e:
        say(f"rank {rank}: next bucket failed after {time.monotonic() - t1:.1f} s: {e}")
    os._exit(0)


def leave():
    st = arbor.torch.state()
    arbor.torch.allreduce(st, torch.zeros(1))
    sizes = [1 << 20, 4096, 1 << 18, 1]
    for k, n in enumerate(sizes):
        def done(f, k=k, n=n):
            ok = torch.equal(f.value(), average(n, k))
            say(f"rank {rank}: bucket {k} done, {'exact' if ok else 'WRONG'}")
        arbor.torch.allreduce_hook(st, Bucket(data(rank, n, k))).add_done_callback(done)
    say(f"rank {rank}: leaving")


meet(sys.argv[1])
mode = sys.argv[2]
if mode == "order":
    order()
elif mode == "kill":
    kill(int(sys.argv[3]))
elif mode == "exit":
    leave()
else:
    sys.exit(f"torch_async.py: mode {mode!r}: want order, kill or exit")
