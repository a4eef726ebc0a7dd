"""What the torch test scripts of python/tests share: a count of checks
(a failed one written to stderr, naming the rank) and a stand-in for DDP's
GradBucket."""
import os


class Checks:
    """check(what, ok): count it; a failed one says so on stderr."""

    def __init__(self, rank):
        self.rank = rank
        self.n = 0
        self.wrong = 0

    def __call__(self, what, ok):
        self.n += 1
        if not ok:
            self.wrong += 1
            os.write(2, f"rank {self.rank}: WRONG {what}\n".encode())


class Bucket:
    """What the hook reads of DDP's GradBucket."""

    def __init__(self, t):
        self.t = t

    def buffer(self):
        return self.t
