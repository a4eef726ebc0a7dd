"""libarbor's runtime API (include/arbor/rt.h) through ctypes."""
import ctypes
import os

_c = ctypes.c_void_p
_sz = ctypes.c_size_t
_int = ctypes.c_int
_u32 = ctypes.c_uint32

# the calls used: (name, result, arguments)
_PROTOS = [
    ("arb_rt_config_default", None, [_c]),
    ("arb_rt_config_env", _int, [_c, ctypes.c_char_p, _sz]),
    ("arb_rt_comm_new", _int, [ctypes.POINTER(_c), _c, ctypes.c_char_p, _sz]),
    ("arb_rt_comm_free", _int, [_c]),
    ("arb_rt_rank", _u32, [_c]),
    ("arb_rt_size", _u32, [_c]),
    ("arb_rt_errmsg", ctypes.c_char_p, [_c]),
    ("arb_strerror", ctypes.c_char_p, [_int]),
    ("arb_rt_iallreduce", _int, [_c, _c, _c, _sz, _int, _int, ctypes.POINTER(_c)]),
    ("arb_rt_ireduce", _int, [_c, _c, _c, _sz, _int, _int, _u32, ctypes.POINTER(_c)]),
    ("arb_rt_ireducescatter", _int, [_c, _c, _c, _sz, _int, _int, ctypes.POINTER(_c)]),
    ("arb_rt_ibroadcast", _int, [_c, _c, _sz, _int, _u32, ctypes.POINTER(_c)]),
    ("arb_rt_iallgather", _int, [_c, _c, _c, _sz, _int, ctypes.POINTER(_c)]),
    ("arb_rt_ibarrier", _int, [_c, ctypes.POINTER(_c)]),
    ("arb_rt_wait", _int, [_c]),
    ("arb_rt_test", _int, [_c, ctypes.POINTER(_int)]),
    ("arb_rt_progress", _int, [_c]),
    ("arb_rt_get_stats", None, [_c, _c]),
]

# arb_rt_stats's leading counters, each a uint64_t, in the struct's order
STATS_FIELDS = ("calls", "tx_pkts", "rx_pkts", "tx_bytes", "rx_bytes", "dropped_tx",
                "rx_undecodable", "rx_strangers", "rx_unknown", "rx_late", "rejoins",
                "send_errors", "gso_sends", "credits", "retries", "spurious", "tail_replays",
                "repair_credits", "waits")
STATS_BYTES = 4096

# arb_rt_config is opaque here: the library fills it (arb_rt_config_default,
# arb_rt_config_env) in a block larger than the struct will grow to.
CONFIG_BYTES = 8192


def _candidates():
    env = os.environ.get("ARBOR_LIB")
    if env:
        yield env
    try:
        from . import _where  # written by CMake: the build tree's or the install's library
        yield _where.library(os.path.dirname(os.path.abspath(__file__)))
    except ImportError:
        pass
    yield "libarbor.so.0"


def load():
    """The library, its calls typed; OSError naming where it looked."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        for name, res, args in _PROTOS:
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        return lib
    raise OSError("libarbor.so not found (set ARBOR_LIB); tried: " + "; ".join(tried))
