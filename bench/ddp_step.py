"""ddp_step: one DistributedDataParallel training step's time with gloo's
all-reduce (DDP's default) and with Arbor's (arbor.torch.allreduce_hook),
one process per host of an `arbor lab` fabric (bench/ddp_lab runs it as
`arbor lab FILE -- ...`), and the step's compute alone (the same step
under DDP's no_sync(): no all-reduce), so that what each all-reduce adds
to a step is the difference.

Usage: ddp_step.py MIB STEPS WARMUP [sync]
The model is a stack of square float32 Linear layers of 1 MiB of weights
each (512 x 512), MIB of them, so its gradient is MIB MiB, in DDP's buckets
(bucket_cap_mb 4 after its first pass); each rank runs a batch of 32 rows.
The three alternate step by step; each figure is the slowest rank's mean
over STEPS steps after WARMUP, and beside it the CPU time a step took in
the ranks' processes, summed over the ranks (the switch's is not in it). With "sync", a fourth model alternates with
them: Arbor's hook made synchronous (it waits for its bucket's all-reduce
before it returns, so nothing overlaps the backward pass), which shows
what the overlap gives.
Reads ARBOR_LAB_RANK, ARBOR_LAB_SIZE, ARBOR_LAB_ADDRS (rank 0's address
is gloo's rendezvous) and the ARBOR_* variables of an Arbor rank; needs
Debian's python3-torch (/usr/bin/python3) and arbor's Python package on
PYTHONPATH.
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import arbor.torch

W = 512  # 512 x 512 f32 = 1 MiB a layer


def model(layers):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[torch.nn.Linear(W, W, bias=False) for _ in range(layers)])


def sync_hook(state, bucket):
    """arbor.torch.allreduce_hook, waited for inside the hook."""
    fut = arbor.torch.allreduce_hook(state, bucket)
    fut.wait()
    return fut


def one_step(m, opt, x, sync):
    """The step's wall time and the CPU time of this rank's process (every
    thread: the compute's, gloo's, Arbor's communication thread)."""
    dist.barrier()
    c0 = time.process_time()
    t0 = time.perf_counter()
    opt.zero_grad()
    if sync:
        m(x).square().mean().backward()
    else:
        with m.no_sync():
            m(x).square().mean().backward()
    opt.step()
    return time.perf_counter() - t0, time.process_time() - c0


def main():
    mib, steps, warm = (int(a) for a in sys.argv[1:4])
    with_sync = sys.argv[4:5] == ["sync"]
    rank = int(os.environ["ARBOR_LAB_RANK"])
    size = int(os.environ["ARBOR_LAB_SIZE"])
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "e0")
    master = os.environ["ARBOR_LAB_ADDRS"].split()[0]
    dist.init_process_group("gloo", init_method="tcp://%s:29501" % master, rank=rank,
                            world_size=size, timeout=datetime.timedelta(seconds=300))
    torch.set_num_threads(1)
    x = torch.randn(32, W, generator=torch.Generator().manual_seed(rank))
    names = ("compute", "gloo", "arbor") + (("arbor-sync",) if with_sync else ())
    runs = []
    for name in names:
        m = DDP(model(mib), bucket_cap_mb=4)
        if name == "arbor":
            m.register_comm_hook(arbor.torch.state(), arbor.torch.allreduce_hook)
        if name == "arbor-sync":
            m.register_comm_hook(arbor.torch.state(), sync_hook)
        runs.append((m, torch.optim.SGD(m.parameters(), lr=1e-3), name != "compute"))
    # the three alternate step by step, so that what else the machine does
    # falls on each alike
    total = [0.0] * len(runs)
    cpu = [0.0] * len(runs)
    for it in range(warm + steps):
        for i, (m, opt, sync) in enumerate(runs):
            t, c = one_step(m, opt, x, sync)
            if it >= warm:
                total[i] += t
                cpu[i] += c
    t = torch.tensor([v / steps for v in total], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    c = torch.tensor([v / steps for v in cpu], dtype=torch.float64)
    dist.all_reduce(c)
    rows = list(zip(names, t.tolist(), c.tolist()))
    if rank == 0:
        comp = rows[0][1]
        print("# DDP step, %d ranks, a %d MiB float32 gradient, %d steps after %d warm-up"
              % (size, mib, steps, warm))
        print("# %-10s %10s %14s %16s" % ("", "step (ms)", "all-reduce adds (ms)",
                                            "CPU, all ranks (ms)"))
        for name, t, c in rows:
            print("  %-10s %10.1f %14.1f %16.1f" % (name, t * 1e3, (t - comp) * 1e3, c * 1e3))
        g, a = rows[1][1] - comp, rows[2][1] - comp
        print("# gloo's all-reduce adds %.2fx what Arbor's adds to a step" % (g / a if a > 0 else float("inf")))
        sys.stdout.flush()
    dist.barrier()
    arbor.torch.state().close()
    arbor.torch.state().comm.free()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
