"""arbor.torch on every bucket dtype it carries (python/tests/test_torch.sh:
arbor run -n 4 -- /usr/bin/python3 torch_dtypes.py). Inputs are small
integers, exact in bf16, f16, f32 and f64, and so are their sums and the
division by 4 ranks before the sum: every result must be exact.

  - arbor.torch.allreduce on a tensor of each dtype: the sum over ranks;
  - DDP with the hook on a float32 and a float64 model (on the CPU, torch
    1.13 has no half-precision Linear, and gloo, which DDP needs to start,
    cannot broadcast bf16): after one backward pass every
    rank's gradient is the average of the ranks' gradients, which each
    rank computes itself (every rank knows every rank's input);
  - the hook on a bf16 and an f16 bucket (an object with DDP's
    GradBucket.buffer()): the average;
  - a bucket of another dtype (int32): TypeError.
Prints "rank R: N checks, W wrong, B buckets, C calls" and exits 1 when a
check failed."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import arbor.torch

rank, size = int(os.environ["ARBOR_RANK"]), int(os.environ["ARBOR_SIZE"])
store = dist.FileStore(sys.argv[1], size)
dist.init_process_group("gloo", store=store, rank=rank, world_size=size)
st = arbor.torch.state()
checks = wrong = 0


def check(what, ok):
    global checks, wrong
    checks += 1
    if not ok:
        wrong += 1
        os.write(2, f"rank {rank}: WRONG {what}\n".encode())


def data(r, n):
    return ((torch.arange(n) * 7 + r * 13) % 31 - 15).double()


for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    n = 5000
    x = data(rank, n).to(dt)
    arbor.torch.allreduce(st, x)
    want = sum(data(r, n) for r in range(size))
    check(f"allreduce {dt}", torch.equal(x.double(), want))
    if dt in (torch.bfloat16, torch.float16):
        class Bucket:
            def __init__(self, t):
                self.t = t

            def buffer(self):
                return self.t

        x = data(rank, n).to(dt)
        got = arbor.torch.allreduce_hook(st, Bucket(x)).wait()
        check(f"allreduce_hook {dt}", torch.equal(got.double(), want / size))
        continue
    # one DDP step: inputs and weights are small integers, so the
    # gradients are exact, and their average over 4 ranks too
    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 1, bias=False).to(dt)
    with torch.no_grad():
        lin.weight.copy_(data(99, 16).to(dt))
    m = DDP(lin)
    m.register_comm_hook(st, arbor.torch.allreduce_hook)
    inp = [data(r, 16 * 4).reshape(4, 16) / 4 for r in range(size)]
    m(inp[rank].to(dt)).sum().backward()
    want = sum(i.sum(0) for i in inp) / size
    check(f"DDP gradient {dt}", torch.equal(m.module.weight.grad.double()[0], want))
try:
    arbor.torch.allreduce(st, torch.ones(4, dtype=torch.int32))
    check("an int32 bucket is refused", False)
except TypeError as e:
    check("an int32 bucket is refused: " + str(e), "int32" in str(e))
s = st.comm.stats()
os.write(1, f"rank {rank}: {checks} checks, {wrong} wrong, {st.buckets} buckets, "
         f"{s['calls']} calls\n".encode())
dist.barrier()
st.comm.free()
sys.exit(1 if wrong else 0)
