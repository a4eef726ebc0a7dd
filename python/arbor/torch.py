"""PyTorch DistributedDataParallel over Arbor: a communication hook that
all-reduces each gradient bucket through the switch (docs/pytorch.md).

    import arbor.torch
    model = torch.nn.parallel.DistributedDataParallel(net)   # gloo group
    model.register_comm_hook(arbor.torch.state(), arbor.torch.allreduce_hook)

The hook averages as DDP's own all-reduce does: the bucket is divided by
the number of ranks, then summed over them. float32, float64, bfloat16
and float16 buckets go as Arbor's f32, f64, bf16 and f16 (the wire
carries the half types; the switch sums them in float and rounds once per
aggregation). Any other bucket dtype is a TypeError.

The hook is blocking: it returns a completed future once the bucket's
all-reduce is done, so the all-reduce does not overlap the rest of the
backward pass as gloo's asynchronous one does. A failed call (a rank died,
the deadline passed) raises arbor.ArborError carrying the runtime's message
from the backward pass."""
import torch

from ._comm import Comm

_DT = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16", torch.float16: "f16"}
# a same-size type NumPy knows, to pass the bucket's memory as a buffer
_VIEW = {torch.float32: torch.float32, torch.float64: torch.float64,
         torch.bfloat16: torch.int16, torch.float16: torch.float16}


class HookState:
    """The hook's state: the communicator and what the hook did (buckets
    all-reduced, their bytes)."""

    def __init__(self, comm=None):
        self.comm = comm if comm is not None else Comm()
        self.buckets = 0
        self.bytes = 0


_default = None


def state(comm=None):
    """The hook state over comm (None: one communicator from the ARBOR_*
    variables, made once per process and shared)."""
    global _default
    if comm is not None:
        return HookState(comm)
    if _default is None:
        _default = HookState()
    return _default


def allreduce(st, tensor):
    """All-reduce a contiguous CPU tensor in place through Arbor (sum);
    returns it."""
    if tensor.dtype not in _DT:
        raise TypeError(f"arbor.torch: a {tensor.dtype} bucket; Arbor carries "
                        "float32, float64, bfloat16 and float16")
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise ValueError("arbor.torch: the bucket must be a contiguous CPU tensor")
    if tensor.numel():
        st.comm.allreduce(tensor.view(_VIEW[tensor.dtype]).numpy(), dtype=_DT[tensor.dtype])
    st.buckets += 1
    st.bytes += tensor.numel() * tensor.element_size()
    return tensor


def allreduce_hook(st, bucket):
    """DDP communication hook: the bucket's average over the ranks,
    through Arbor. st: state() (or None for the default state)."""
    st = st if st is not None else state()
    tensor = bucket.buffer()
    tensor.div_(st.comm.size)
    allreduce(st, tensor)
    fut = torch.futures.Future()
    fut.set_result(tensor)
    return fut
