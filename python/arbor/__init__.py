"""Arbor's collectives from Python: a communicator from the ARBOR_*
environment (as ``arbor run`` sets it) and the six collectives on NumPy
arrays or any buffer-protocol object, blocking and non-blocking, over
libarbor's shared library through ctypes (docs/python.md).

    import numpy as np, arbor
    comm = arbor.Comm()                 # rank, size, switch, job from ARBOR_*
    x = np.ones(1 << 20, np.float32)
    comm.allreduce(x)                   # in place: x = sum over ranks
    y = comm.allreduce(x, np.empty_like(x), op="max")
    req = comm.iallreduce(x); ...; req.wait()

Errors are ArborError, carrying the runtime's message (what was lost,
which rank never answered)."""
from ._comm import ArborError, Comm, Request, DTYPES, OPS

__all__ = ["ArborError", "Comm", "Request", "DTYPES", "OPS"]
