"""DistributedDataParallel on synthetic data, twice side by side: one model
all-reduces its gradients with gloo (DDP's default), the other through
Arbor; the only difference is one line, model.register_comm_hook(...).
Prints both loss curves and the time per step, and at the end how far the
two models' parameters are apart against the bound derived below
(docs/pytorch.md).

    arbor run -n 4 -- /usr/bin/python3 examples/ddp_synthetic.py [--steps 100]

The model is linear regression (torch.nn.Linear, mean squared error) on
data y = X w + noise, each rank its own batch of every step. Its loss is a
quadratic whose Hessian H = 2 X^T X / B (B the global batch) is known, so
with the learning rate 1 / lambda_max(H) a gradient step is non-expansive
in exact arithmetic: two runs' parameters drift apart only by what
rounding adds in each step, and the sum of those bounds bounds the drift:

    |theta_gloo - theta_arbor|_2 <= sum over steps of |e_s|_2

where e_s, per parameter, is lr times twice (either run) the all-reduce's
rounding, 3 u sum_r |g_r| / n for a sum of n = 4 terms (the division by
n = 4 is exact), plus lr times twice the local gradient's rounding,
gamma(D + b + 4) |X|^T (|X| |theta| + |y|) 2 / B over a rank's batch of
b rows of D features (gamma(k) = k u / (1 - k u), u = 2^-24), plus twice
the update's rounding u |theta|. The bound is computed as the run goes,
from the run's own values."""
import argparse
import hashlib
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import arbor.torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--features", type=int, default=64)
ap.add_argument("--batch", type=int, default=256, help="rows per rank and step")
args = ap.parse_args()

rank, size = int(os.environ["ARBOR_RANK"]), int(os.environ["ARBOR_SIZE"])
# gloo meets in a file named after this job's secret (a fresh one per arbor run)
tag = hashlib.sha256(os.environ["ARBOR_SECRET"].encode()).hexdigest()[:16]
store = dist.FileStore(os.path.join(tempfile.gettempdir(), f"arbor-ddp-{tag}"), size)
dist.init_process_group("gloo", store=store, rank=rank, world_size=size)
torch.set_num_threads(1)

D, b, S = args.features, args.batch, args.steps
B = b * size
gen = torch.Generator().manual_seed(1234)
w_true = torch.randn(D, 1, generator=gen)


def batch(step, r):
    """Rank r's rows of step `step`: every rank can make every rank's."""
    g = torch.Generator().manual_seed(1_000_003 * step + r)
    x = torch.randn(b, D, generator=g)
    return x, x @ w_true + 0.1 * torch.randn(b, 1, generator=g)


# lr = 1 / lambda_max of the Hessian over every step's global batch (the
# largest; each step's own is at most that, so every step is non-expansive)
lam = 0.0
for s in range(S):
    xs = torch.cat([batch(s, r)[0] for r in range(size)]).double()
    lam = max(lam, torch.linalg.eigvalsh(2 * xs.T @ xs / B).max().item())
lr = 1.0 / lam


def make():
    torch.manual_seed(0)
    return DDP(torch.nn.Linear(D, 1, bias=False))


gloo, arb = make(), make()
hook = arbor.torch.state()
arb.register_comm_hook(hook, arbor.torch.allreduce_hook)  # the one line
opts = {m: torch.optim.SGD(m.parameters(), lr=lr) for m in (gloo, arb)}
u = 2.0**-24


def say(line):
    """A line in one write: the ranks share stdout."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def gamma(k):
    return k * u / (1 - k * u)


if rank == 0:
    say(f"# {size} ranks, linear regression D={D}, {b} rows per rank and step, lr {lr:.4g}")
    say(f"# {'step':>4} {'loss gloo':>12} {'loss arbor':>12} {'ms gloo':>8} {'ms arbor':>8}")
tsum = {gloo: 0.0, arb: 0.0}
bound = 0.0
for s in range(S):
    x, y = batch(s, rank)
    loss, ms = {}, {}
    theta = arb.module.weight.detach().clone()
    for m in (gloo, arb):
        t0 = time.perf_counter()
        opts[m].zero_grad()
        lv = torch.nn.functional.mse_loss(m(x), y, reduction="sum") / B
        lv.backward()
        opts[m].step()
        ms[m] = (time.perf_counter() - t0) * 1e3
        tsum[m] += ms[m]
        loss[m] = lv.detach()
    # this step's bound: |g_r| and the local rounding term, summed over the
    # ranks through gloo (a bound, not a result of either run)
    with torch.no_grad():
        th = theta.T
        g_loc = (2.0 / B) * x.T @ (x @ th - y)
        e = torch.cat([g_loc.abs() / size,
                       gamma(D + b + 4) * (2.0 / B) * x.abs().T @ (x.abs() @ th.abs() + y.abs())],
                      dim=1).double()
        lsum = torch.stack([loss[gloo], loss[arb]]).double() * 1.0
        dist.all_reduce(e)
        dist.all_reduce(lsum)
        e_s = lr * (2 * 3 * u * e[:, 0] + 2 * e[:, 1]) + 2 * u * th.abs().double()[:, 0]
        bound += e_s.norm().item()
    if rank == 0:
        say(f"  {s:>4} {lsum[0].item():>12.6f} {lsum[1].item():>12.6f} "
            f"{ms[gloo]:>8.2f} {ms[arb]:>8.2f}")

diff = (gloo.module.weight - arb.module.weight).double().norm().item()
st = hook.comm.stats()
say(f"rank {rank}: |theta_gloo - theta_arbor|_2 = {diff:.3e}, bound {bound:.3e}, "
    f"hook buckets {hook.buckets}, arbor calls {st['calls']}, "
    f"ms per step gloo {tsum[gloo] / S:.2f} arbor {tsum[arb] / S:.2f}")
dist.barrier()
if rank == 0:
    try:
        os.unlink(os.path.join(tempfile.gettempdir(), f"arbor-ddp-{tag}"))
    except FileNotFoundError:
        pass
hook.close()
hook.comm.free()
dist.destroy_process_group()
