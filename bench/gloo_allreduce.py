"""gloo_allreduce: PyTorch's gloo all-reduce timed the way `arbor bench
allreduce` times Arbor (f32 SUM, iterations after a warm-up, the slowest
rank's mean per call, nccl-tests' columns), one process per host of an
`arbor lab` fabric (bench/lab_vs_mpi runs it as `arbor lab FILE -- ...`).

Usage: gloo_allreduce.py MINBYTES MAXBYTES ITERS WARMUP
Reads ARBOR_LAB_RANK, ARBOR_LAB_SIZE and ARBOR_LAB_ADDRS (rank 0's address
is the rendezvous); each host's one interface is e0. Needs Debian's
python3-torch (/usr/bin/python3).
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    minb, maxb, iters, warm = (int(a) for a in sys.argv[1:5])
    rank = int(os.environ["ARBOR_LAB_RANK"])
    size = int(os.environ["ARBOR_LAB_SIZE"])
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "e0")
    master = os.environ["ARBOR_LAB_ADDRS"].split()[0]
    dist.init_process_group("gloo", init_method="tcp://%s:29500" % master, rank=rank,
                            world_size=size, timeout=__import__("datetime").timedelta(seconds=120))
    if rank == 0:
        print("# gloo all_reduce: %d ranks, f32 sum, %d iterations (%d warm-up)" % (size, iters, warm))
        print("# %12s %12s %10s %8s" % ("size", "count", "time", "algbw"))
        print("# %12s %12s %10s %8s" % ("(B)", "(elements)", "(us)", "(GB/s)"))
    nbytes = minb
    while nbytes <= maxb:
        count = nbytes // 4
        x = torch.tensor([float((7 * rank + 13 * (i % 17)) % 17 - 8) for i in range(min(count, 17))],
                         dtype=torch.float32).repeat((count + 16) // 17)[:count].contiguous()
        total = 0.0
        for it in range(warm + iters):
            y = x.clone()
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(y, op=dist.ReduceOp.SUM)
            if it >= warm:
                total += time.perf_counter() - t0
        mean = torch.tensor([total / iters], dtype=torch.float64)
        dist.all_reduce(mean, op=dist.ReduceOp.MAX)
        if rank == 0:
            t = mean.item()
            print("  %12d %12d %10.1f %8.3f" % (count * 4, count, t * 1e6, count * 4 / t / 1e9))
            sys.stdout.flush()
        nbytes *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
