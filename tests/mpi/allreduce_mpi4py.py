"""An unmodified mpi4py program: comm.Allreduce on NumPy arrays (run by
tests/mpi/test_mpi_preload.sh under arbor mpirun). Every rank knows every
rank's input (a function of the rank), so it checks the result itself:
integers and integer-valued floats sum exactly in any order. Prints
"rank R: N checks, W wrong" and, on rank 0, "expect allreduce A", the
calls it made."""
import os
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
me, n = comm.Get_rank(), comm.Get_size()
checks = wrong = calls = 0


def say(line, fd=1):
    """One line as one write: the ranks share the file, and print() writes
    the newline separately when Python runs unbuffered (PYTHONUNBUFFERED)."""
    os.write(fd, (line + "\n").encode())


def data(rank, count, dtype):
    i = np.arange(count, dtype=np.int64)
    return ((i * 7 + rank * 13) % 1001 - 500).astype(dtype)


for c in (comm, comm.Dup()):
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        for count in (1, 1000, 300001):
            mine = data(me, count, dtype)
            every = np.stack([data(r, count, dtype) for r in range(n)])
            for op, ref in ((MPI.SUM, every.sum(axis=0, dtype=dtype)),
                            (MPI.MAX, every.max(axis=0)), (MPI.MIN, every.min(axis=0))):
                out = np.full(count, 77, dtype=dtype)
                c.Allreduce(mine, out, op=op)
                inplace = mine.copy()
                c.Allreduce(MPI.IN_PLACE, inplace, op=op)
                calls += 2
                for got in (out, inplace):
                    checks += 1
                    if not np.array_equal(got, ref):
                        wrong += 1
                        say(f"rank {me}: WRONG {dtype.__name__} {count} {op}", 2)
say(f"rank {me}: {checks} checks, {wrong} wrong")
if me == 0:
    say(f"expect allreduce {calls}")
sys.exit(1 if wrong else 0)
