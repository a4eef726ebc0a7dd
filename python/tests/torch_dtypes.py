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
  - a bucket of another dtype (int32): TypeError;
  - the hook is asynchronous: with the communicator's lock held by this
    thread, the hook returns a future not yet done (the all-reduce waits
    on the state's thread), which completes, exact, once the lock goes;
  - DDP over a model of five layers, a bucket each (after DDP's first
    pass, which goes in one): several buckets in flight on the state's
    thread, every gradient the average (to rounding: its sum's order);
  - a call that fails on the state's thread (a communicator that raises
    ArborError) reaches the future's wait() as that ArborError.
Prints "rank R: N checks, W wrong, B buckets, C calls" and exits 1 when a
check failed."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import arbor.torch
from torchkit import Bucket, Checks

rank, size = int(os.environ["ARBOR_RANK"]), int(os.environ["ARBOR_SIZE"])
store = dist.FileStore(sys.argv[1], size)
dist.init_process_group("gloo", store=store, rank=rank, world_size=size)
st = arbor.torch.state()
check = Checks(rank)


def data(r, n):
    return ((torch.arange(n) * 7 + r * 13) % 31 - 15).double()


for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    n = 5000
    x = data(rank, n).to(dt)
    arbor.torch.allreduce(st, x)
    want = sum(data(r, n) for r in range(size))
    check(f"allreduce {dt}", torch.equal(x.double(), want))
    if dt in (torch.bfloat16, torch.float16):
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

# ---- asynchronous: the future is not done while the thread cannot call ----
x = data(rank, 4096).float()
with st.comm._lock:
    fut = arbor.torch.allreduce_hook(st, Bucket(x))
    check("the hook returns before its all-reduce is done", not fut.done())
check("the hook's future after the lock goes: the average",
      torch.equal(fut.wait().double(), sum(data(r, 4096) for r in range(size)) / size))

# ---- DDP, several buckets in flight ----------------------------------------
# five 384 x 384 layers: each gradient (1.125 MiB) over DDP's first bucket's
# 1 MiB and bucket_cap_mb, so each is a bucket of its own
N = 384


def five_layers():
    net = torch.nn.Sequential(*[torch.nn.Linear(N, N, bias=False).double() for _ in range(5)])
    for i, l in enumerate(net):
        with torch.no_grad():
            l.weight.copy_(data(50 + i, N * N).reshape(N, N) / N)
    return net


net = five_layers()
m = DDP(net, bucket_cap_mb=1)
m.register_comm_hook(st, arbor.torch.allreduce_hook)
inp = [data(r, N * 4).reshape(4, N) / 4 for r in range(size)]
# DDP's first backward pass goes in one bucket; it then rebuilds them by
# the cap: the second goes in five
m(inp[rank]).sum().backward()
net.zero_grad()
before = st.buckets
m(inp[rank]).sum().backward()
check("DDP over five layers, second pass: five buckets", st.buckets - before == 5)
grads = []
for r in range(size):  # every rank's gradient, computed here alike
    ref = five_layers()
    ref(inp[r]).sum().backward()
    grads.append([l.weight.grad for l in ref])
for i, l in enumerate(net):
    # the sums over ranks in another order: rounding only
    want = sum(g[i] for g in grads) / size
    err = (l.weight.grad - want).abs().max().item()
    check(f"DDP over five layers: layer {i}'s gradient the average, max error {err:.2e} "
          "within 1e-12 of its largest element", err <= 1e-12 * want.abs().max().item())


# ---- a failed call reaches the future ----------------------------------------
class Failing:
    size = size

    def allreduce(self, *a, **k):
        raise arbor.ArborError(-110, "rank 2 did not answer within 1.000 s")


bad = arbor.torch.state(Failing())
try:
    arbor.torch.allreduce_hook(bad, Bucket(torch.ones(8))).wait()
    check("a failed call raises from the future's wait()", False)
except arbor.ArborError as e:
    check("a failed call raises from the future's wait(): " + str(e), "rank 2" in str(e))

s = st.comm.stats()
os.write(1, f"rank {rank}: {check.n} checks, {check.wrong} wrong, {st.buckets} buckets, "
         f"{s['calls']} calls\n".encode())
dist.barrier()
st.close()
st.comm.free()
sys.exit(1 if check.wrong else 0)
