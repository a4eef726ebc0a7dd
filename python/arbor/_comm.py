"""The communicator and its requests."""
import ctypes
import os
import threading
import time

from . import _lib

# arb_dtype and arb_op (include/arbor/base.h)
DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i32": 4, "i64": 5}
_DTYPE_SIZE = {0: 2, 1: 2, 2: 4, 3: 8, 4: 4, 5: 8}
OPS = {"sum": 1, "max": 2, "min": 3}
_FLOAT_FORMATS = {("e", 2): 0, ("f", 4): 2, ("d", 8): 3}
_INT_FORMATS = "bhilqnBHILQN"

_L = None


def _lib_once():
    global _L
    if _L is None:
        _L = _lib.load()
    return _L


class ArborError(RuntimeError):
    """A call of the runtime failed: .code is its ARB_E* code, the message
    the runtime's own (arb_rt_errmsg)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _dtype_of(mv, dtype):
    if dtype is not None:
        if dtype not in DTYPES:
            raise ValueError(f"dtype {dtype!r}: want one of {', '.join(DTYPES)}")
        return DTYPES[dtype]
    fmt = mv.format.lstrip("@=<")
    if (fmt, mv.itemsize) in _FLOAT_FORMATS:
        return _FLOAT_FORMATS[(fmt, mv.itemsize)]
    if fmt in _INT_FORMATS and fmt.islower() and mv.itemsize in (4, 8):
        return DTYPES["i32"] if mv.itemsize == 4 else DTYPES["i64"]
    raise TypeError(f"buffer of format {mv.format!r} ({mv.itemsize} B): no Arbor dtype; "
                    "give dtype= (f16, bf16, f32, f64, i32, i64)")


class _Buf:
    """A buffer's address, bytes and dtype, held while a call uses it."""

    def __init__(self, obj, dtype=None, writable=False, what="buffer"):
        mv = memoryview(obj)
        if not mv.c_contiguous:
            raise ValueError(f"{what}: not contiguous")
        if writable and mv.readonly:
            raise ValueError(f"{what}: read-only")
        self.obj = obj
        self.dt = _dtype_of(mv, dtype)
        self.nbytes = mv.nbytes
        es = _DTYPE_SIZE[self.dt]
        if self.nbytes % es:
            raise ValueError(f"{what}: {self.nbytes} B is not whole {es}-byte elements")
        self.count = self.nbytes // es
        self.mv = mv.cast("B") if mv.nbytes else mv
        self.keep = None
        if self.nbytes == 0:
            self.addr = None
        elif not mv.readonly:
            self.keep = (ctypes.c_char * self.nbytes).from_buffer(self.mv)
            self.addr = ctypes.addressof(self.keep)
        else:
            self.keep = ctypes.create_string_buffer(bytes(self.mv), self.nbytes)
            self.addr = ctypes.addressof(self.keep)


def _like(buf, count):
    """A new output like buf's object (NumPy when buf is one), count elements."""
    try:
        import numpy as np
        if isinstance(buf.obj, np.ndarray):
            return np.empty(count, dtype=buf.obj.dtype)
    except ImportError:
        pass
    return bytearray(count * _DTYPE_SIZE[buf.dt])


class Request:
    """A non-blocking call in flight: wait() returns its result, test()
    says whether it is done. Its buffers stay in use until then."""

    def __init__(self, comm, handle, result, bufs):
        self._comm = comm
        self._h = handle
        self._result = result
        self._bufs = bufs
        self._err = None

    def test(self):
        """True when the call completed (wait() then returns at once);
        ArborError when it failed."""
        with self._comm._lock:
            if self._h is None:
                done = True
            else:
                flag = ctypes.c_int(0)
                rc = self._comm._L.arb_rt_test(self._h, ctypes.byref(flag))
                done = rc < 0 or bool(flag.value)
        if done:
            self.wait()
        return done

    def wait(self):
        """Wait for the call; its result (the output buffer, or None for a
        barrier); ArborError when it failed. Safe from any thread: a second
        wait() (or one racing the first) returns the same result or raises
        the same error once the call is over."""
        with self._comm._lock:
            if self._h is not None:
                h, self._h = self._h, None
                rc = self._comm._wait(h)
                # the message while the communicator surely lives: free()
                # takes the same lock before it frees it
                self._err = self._comm._error(rc) if rc < 0 else None
                self._comm._inflight.discard(self)
                self._bufs = None
        if self._err is not None:
            raise self._err
        return self._result


class Comm:
    """One rank of an Arbor job, from the ARBOR_* variables (or the
    keyword arguments rank and size over them)."""

    def __init__(self, rank=None, size=None):
        L = self._L = _lib_once()
        self._cfg = ctypes.create_string_buffer(_lib.CONFIG_BYTES)
        err = ctypes.create_string_buffer(512)
        L.arb_rt_config_default(self._cfg)
        if not os.environ.get("ARBOR_SWITCH") or not os.environ.get("ARBOR_SECRET"):
            raise ArborError(-1, "ARBOR_SWITCH and ARBOR_SECRET are not set: run under "
                             "arbor run -n N -- python3 ... (docs/python.md)")
        rc = L.arb_rt_config_env(self._cfg, err, len(err))
        if rc < 0:
            raise ArborError(rc, err.value.decode(errors="replace"))
        u32 = (ctypes.c_uint32 * 2).from_buffer(self._cfg)  # rank, size lead the struct
        if rank is not None:
            u32[0] = rank
        if size is not None:
            u32[1] = size
        h = ctypes.c_void_p()
        rc = L.arb_rt_comm_new(ctypes.byref(h), self._cfg, err, len(err))
        if rc < 0:
            raise ArborError(rc, err.value.decode(errors="replace"))
        self._h = h
        self._inflight = set()
        self.rank = L.arb_rt_rank(h)
        self.size = L.arb_rt_size(h)
        # A call done here may still owe its peers answers while this rank
        # computes before its next call: a thread answers them meanwhile
        # (ctypes lets it run beside Python code), a tick each quiet sleep.
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._waits = 0    # waits begun (the ticker reads it without a lock)
        self._waiting = 0  # waits running
        self._tk = {"wakes": 0, "busy_wakes": 0, "ticks": 0, "wait_s": 0.0}
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._ticker.start()

    # The ticker's sleeps: 1 ms after a quiet one, doubling up to 8 ms while
    # waits (which progress the engines themselves) run or ran in the last
    # one; 8 ms is below the engines' own 10 ms floor (docs/runtime.md
    # section 5). Each wake takes the interpreter's lock: through a long call
    # it now wakes every 8 ms, not every millisecond.
    _TICK_MIN, _TICK_MAX = 0.001, 0.008

    def _tick(self):
        seen, t, tk = self._waits, self._TICK_MIN, self._tk
        while not self._stop.wait(t):
            tk["wakes"] += 1
            if self._waits != seen or self._waiting:
                seen, t = self._waits, min(2 * t, self._TICK_MAX)
                tk["busy_wakes"] += 1
                continue
            tk["ticks"] += 1
            if self._lock.acquire(blocking=False):  # else a call progresses them
                try:
                    if self._h:
                        self._L.arb_rt_progress(self._h)
                finally:
                    self._lock.release()
            t = self._TICK_MIN

    def _wait(self, h):
        """arb_rt_wait(h), counted for the ticker; the caller holds the
        lock (so the counts are written under it)."""
        self._waits += 1
        self._waiting += 1
        t0 = time.monotonic()
        try:
            return self._L.arb_rt_wait(h)
        finally:
            self._waiting -= 1
            self._tk["wait_s"] += time.monotonic() - t0

    def ticker_stats(self):
        """What the thread that answers the peers between calls did: its
        wakes, those that found a wait running or run since (it skipped its
        tick and slept longer), its ticks, and the seconds spent in waits."""
        return dict(self._tk)

    def free(self):
        """Finish what lingers, leave the job. The communicator is unusable
        after (its calls raise ArborError). A call another thread is inside
        ends first (its deadline bounds the wait): the runtime is freed
        under the lock every call holds."""
        if getattr(self, "_h", None):
            with self._lock:
                pending = list(self._inflight)
            for r in pending:
                try:
                    r.wait()
                except ArborError:
                    pass
            self._stop.set()
            if self._ticker is not threading.current_thread():
                self._ticker.join()
            with self._lock:
                h, self._h = self._h, None
                if h:
                    self._L.arb_rt_comm_free(h)

    def stats(self):
        """The communicator's counters (arb_rt_get_stats): calls completed,
        datagrams and bytes each way, ..."""
        buf = ctypes.create_string_buffer(_lib.STATS_BYTES)
        with self._lock:
            if not self._h:
                raise ArborError(-1, "the communicator was freed")
            self._L.arb_rt_get_stats(self._h, buf)
        v = (ctypes.c_uint64 * len(_lib.STATS_FIELDS)).from_buffer(buf)
        return dict(zip(_lib.STATS_FIELDS, v))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def __del__(self):
        self.free()

    def _error(self, rc):
        """The ArborError of a call's return code rc (< 0), with the
        runtime's message; the caller holds the lock."""
        msg = self._L.arb_rt_errmsg(self._h) if self._h else None
        if not msg:
            msg = self._L.arb_strerror(rc)
        return ArborError(rc, msg.decode(errors="replace"))

    def _check(self, rc):
        if rc < 0:
            raise self._error(rc)

    def _start(self, fn, args, result, bufs):
        h = ctypes.c_void_p()
        with self._lock:
            if not self._h:
                raise ArborError(-1, "the communicator was freed")
            self._check(fn(self._h, *args, ctypes.byref(h)))
            req = Request(self, h, result, bufs)
            self._inflight.add(req)
        return req

    @staticmethod
    def _op(op):
        if op not in OPS:
            raise ValueError(f"op {op!r}: want sum, max or min")
        return OPS[op]

    # ---- non-blocking ---------------------------------------------------
    def iallreduce(self, buf, out=None, op="sum", dtype=None):
        """out[i] = op over ranks of buf[i]; out None: in place in buf."""
        s = _Buf(buf, dtype, writable=out is None, what="buf")
        r = s if out is None else _Buf(out, dtype, writable=True, what="out")
        self._same(s, r, 1)
        return self._start(self._L.arb_rt_iallreduce, (s.addr, r.addr, s.count, s.dt,
                                                        self._op(op)), r.obj, (s, r))

    def ireduce(self, buf, out=None, op="sum", root=0, dtype=None):
        """At root, out = op over ranks of buf (out None: in place in buf);
        out is ignored elsewhere."""
        s = _Buf(buf, dtype, writable=out is None and self.rank == root, what="buf")
        r = s if out is None else _Buf(out, dtype, writable=True, what="out")
        self._same(s, r, 1)
        return self._start(self._L.arb_rt_ireduce, (s.addr, r.addr, s.count, s.dt, self._op(op),
                                                     root), r.obj, (s, r))

    def ireducescatter(self, buf, out=None, op="sum", dtype=None):
        """buf holds size blocks; out = this rank's block of the reduction
        (out None: a new one like buf)."""
        s = _Buf(buf, dtype, what="buf")
        if s.count % self.size:
            raise ValueError(f"buf: {s.count} elements are not {self.size} equal blocks")
        n = s.count // self.size
        r = _Buf(out if out is not None else _like(s, n), dtype or _dtype_name(s.dt),
                 writable=True, what="out")
        if r.count != n:
            raise ValueError(f"out: {r.count} elements, want {n}")
        return self._start(self._L.arb_rt_ireducescatter, (s.addr, r.addr, n, s.dt,
                                                            self._op(op)), r.obj, (s, r))

    def ibroadcast(self, buf, root=0, dtype=None):
        """buf of root to every rank, in place."""
        b = _Buf(buf, dtype or self._mover(buf), writable=True, what="buf")
        return self._start(self._L.arb_rt_ibroadcast, (b.addr, b.count, b.dt, root), b.obj, (b,))

    def iallgather(self, buf, out=None, dtype=None):
        """out holds size blocks, block r = rank r's buf (out None: new)."""
        s = _Buf(buf, dtype or self._mover(buf), what="buf")
        r = _Buf(out if out is not None else _like(s, s.count * self.size),
                 dtype or _dtype_name(s.dt), writable=True, what="out")
        if r.count != s.count * self.size:
            raise ValueError(f"out: {r.count} elements, want {s.count * self.size}")
        return self._start(self._L.arb_rt_iallgather, (s.addr, r.addr, s.count, s.dt), r.obj,
                           (s, r))

    def ibarrier(self):
        """Returns once every rank has entered."""
        return self._start(self._L.arb_rt_ibarrier, (), None, ())

    # ---- blocking -------------------------------------------------------
    def allreduce(self, buf, out=None, op="sum", dtype=None):
        return self.iallreduce(buf, out, op, dtype).wait()

    def reduce(self, buf, out=None, op="sum", root=0, dtype=None):
        return self.ireduce(buf, out, op, root, dtype).wait()

    def reducescatter(self, buf, out=None, op="sum", dtype=None):
        return self.ireducescatter(buf, out, op, dtype).wait()

    def broadcast(self, buf, root=0, dtype=None):
        return self.ibroadcast(buf, root, dtype).wait()

    def allgather(self, buf, out=None, dtype=None):
        return self.iallgather(buf, out, dtype).wait()

    def barrier(self):
        self.ibarrier().wait()

    # ---- helpers --------------------------------------------------------
    @staticmethod
    def _same(s, r, blocks):
        if r.count != s.count * blocks or r.dt != s.dt:
            raise ValueError(f"out: {r.count} elements of dtype {_dtype_name(r.dt)}, want "
                             f"{s.count * blocks} of {_dtype_name(s.dt)}")

    @staticmethod
    def _mover(buf):
        """Broadcast and AllGather move bytes: any buffer of whole 4-byte
        words goes as i32 when its format has no dtype of its own."""
        mv = memoryview(buf)
        try:
            _dtype_of(mv, None)
            return None
        except TypeError:
            if mv.nbytes % 4:
                raise TypeError(f"buffer of format {mv.format!r}, {mv.nbytes} B: give dtype=, "
                                "or whole 4-byte words") from None
            return "i32"


def _dtype_name(dt):
    return next(k for k, v in DTYPES.items() if v == dt)
