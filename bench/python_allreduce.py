"""comm.allreduce from Python timed the way arbor bench times the runtime
(bench/python_allreduce): a barrier, then the timed call; the slowest
rank's mean over ITERS calls after WARM untimed ones; one line of the
nccl-tests table on rank 0. Usage (a rank of arbor run):
    python_allreduce.py BYTES ITERS WARM"""
import os
import sys
import time

import numpy as np

import arbor

size, iters, warm = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
comm = arbor.Comm()
x = np.ones(size // 4, np.float32)
out = np.empty_like(x)
t = 0.0
for it in range(warm + iters):
    comm.barrier()
    t0 = time.perf_counter()
    comm.allreduce(x, out)
    if it >= warm:
        t += time.perf_counter() - t0
slowest = comm.allreduce(np.array([t / iters]), op="max")[0]
if comm.rank == 0:
    algbw = size / slowest / 1e9
    n = comm.size
    os.write(1, (f"  {size:12d} {size // 4:12d} {'float':>8} {'sum':>6} {-1:5d} "
                 f"{slowest * 1e6:10.1f} {algbw:8.3f} {algbw * 2 * (n - 1) / n:8.3f} "
                 f"{'N/A':>7}\n").encode())
comm.free()
