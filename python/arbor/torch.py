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

The hook is asynchronous, as gloo's all-reduce is: it hands the bucket to
the state's one communication thread and returns a future at once, so the
backward pass goes on computing the next buckets' gradients while this one
is all-reduced (the runtime's calls release the interpreter's lock). The
thread runs the state's calls one at a time in the order they were handed
to it: DDP hands the buckets in the same order on every rank, and
arbor.torch.allreduce goes through the same thread, so both keep that
order. At most `depth` buckets wait for the thread (16 by default): a
further one waits in the hook for a place. A failed call (a rank died, the
deadline passed) sets the future's exception: arbor.ArborError carrying
the runtime's message, raised where DDP waits for the bucket (the end of
the backward pass); every later bucket of the state then fails at once
with an ArborError naming that first failure (the ranks' calls no longer
match, so none is started). close() lets the thread finish the buckets
handed to it and joins it; it runs at the interpreter's exit too."""
import atexit
import queue
import threading

import torch

from ._comm import ArborError, Comm

_DT = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16", torch.float16: "f16"}
# a same-size type NumPy knows, to pass the bucket's memory as a buffer
_VIEW = {torch.float32: torch.float32, torch.float64: torch.float64,
         torch.bfloat16: torch.int16, torch.float16: torch.float16}


class HookState:
    """The hook's state: the communicator, its communication thread (made
    on the first call) and what the hook did (buckets all-reduced, their
    bytes, and the most buckets queued at once). depth: how many buckets
    may wait for the thread (at least 1)."""

    def __init__(self, comm=None, depth=16):
        if depth < 1:
            raise ValueError(f"depth {depth}: want at least 1")
        self.comm = comm if comm is not None else Comm()
        self.buckets = 0
        self.bytes = 0
        self.most_queued = 0
        self._queue = queue.Queue(maxsize=depth)
        self._thread = None
        self._lock = threading.Lock()  # the thread's start, the queue's order, close
        self._closed = False
        self._failed = None  # the first failed call's ArborError

    def _submit(self, tensor):
        """Queue tensor's all-reduce (sum, in place); its future."""
        fut = torch.futures.Future()
        with self._lock:
            if self._closed:
                raise ArborError(-1, "arbor.torch: the hook state was closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, daemon=True,
                                                name="arbor.torch")
                self._thread.start()
                atexit.register(self.close)
            # under the lock, so that close()'s end mark comes after it; a
            # full queue blocks here until the thread takes a bucket
            self._queue.put((tensor, fut))
            self.most_queued = max(self.most_queued, self._queue.qsize())
        return fut

    def _serve(self):
        while True:
            item = self._queue.get()
            if item is None:  # close(): everything before it is done
                return
            tensor, fut = item
            try:
                if self._failed is not None:
                    raise ArborError(self._failed.code, "arbor.torch: not started, an earlier "
                                     f"all-reduce of this state failed: {self._failed}")
                _allreduce_now(self, tensor)
            except ArborError as e:
                if self._failed is None:
                    self._failed = e
                fut.set_exception(e)
            except BaseException as e:  # the future carries it to the waiter
                fut.set_exception(e)
            else:
                fut.set_result(tensor)

    def close(self):
        """Take no more buckets, let the thread finish those handed to it
        (each bounded by the runtime's deadline) and join it. The
        communicator stays open (comm.free() leaves the job)."""
        with self._lock:
            thread, self._closed = (None if self._closed else self._thread), True
            if thread is not None:
                self._queue.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join()


_default = None


def state(comm=None, depth=16):
    """The hook state over comm (None: one communicator from the ARBOR_*
    variables, made once per process and shared; its state too)."""
    global _default
    if comm is not None:
        return HookState(comm, depth)
    if _default is None:
        _default = HookState(depth=depth)
    return _default


def _check_bucket(tensor):
    if tensor.dtype not in _DT:
        raise TypeError(f"arbor.torch: a {tensor.dtype} bucket; Arbor carries "
                        "float32, float64, bfloat16 and float16")
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise ValueError("arbor.torch: the bucket must be a contiguous CPU tensor")


def _allreduce_now(st, tensor):
    """On the state's thread: the all-reduce itself."""
    if tensor.numel():
        st.comm.allreduce(tensor.view(_VIEW[tensor.dtype]).numpy(), dtype=_DT[tensor.dtype])
    st.buckets += 1
    st.bytes += tensor.numel() * tensor.element_size()


def allreduce_async(st, tensor):
    """Start all-reducing a contiguous CPU tensor in place through Arbor
    (sum) on the state's thread; a torch.futures.Future whose value is the
    tensor (its wait() raises arbor.ArborError if the call failed)."""
    _check_bucket(tensor)
    return st._submit(tensor)


def allreduce(st, tensor):
    """All-reduce a contiguous CPU tensor in place through Arbor (sum), in
    order with the hook's buckets; returns it."""
    return allreduce_async(st, tensor).wait()


def allreduce_hook(st, bucket):
    """DDP communication hook: the bucket's average over the ranks,
    through Arbor, as a future (the all-reduce overlaps the rest of the
    backward pass). st: state() (or None for the default state)."""
    st = st if st is not None else state()
    tensor = bucket.buffer()
    _check_bucket(tensor)
    tensor.div_(st.comm.size)
    return st._submit(tensor)
