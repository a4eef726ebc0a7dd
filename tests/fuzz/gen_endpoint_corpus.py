#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_responder and fuzz_requester.

Each seed is a small program in the byte language the targets read (see
the comments at the top of tests/fuzz/fuzz_responder.c and
fuzz_requester.c): a configuration, then steps. The seeds walk the main
paths (a clean message, loss with timeouts and repair, AGG_MISS, END and
tail replay, registration edge cases) so the fuzzer starts deep.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write(kind, name, data):
    path = os.path.join(HERE, "corpus", kind, name)
    with open(path, "wb") as f:
        f.write(bytes(data))


# ---- responder ---------------------------------------------------------
def rsp_cfg(members=3, kind=0, header_only=0, window=4, budget=1, wrap=0, attempts=4,
            order=True, miss_limit=2, dead_after=3, subchannels=1, adaptive=True):
    b0 = (members - 1) | kind << 3 | header_only << 5
    b1 = (window - 1) << 2 | (budget - 1) << 5  # op = 1 + b1 % 3
    b2 = (subchannels - 1) | 3 << 2 | (0x20 if wrap else 0) | (0x40 if adaptive else 0)
    b4 = (attempts - 1) | (0 if order else 8) | (miss_limit - 1) << 4 | (dead_after - 1) << 6
    return [b0, b1, b2, 0x0C if wrap else 0, b4]


def rsp_start(packets):
    return [0x00, packets * 2]  # length = packets * payload


def rsp_register(j):
    return [0x03, 0x00, 0x20 | j]


def rsp_end(j):
    return [0x0B, 0x00, 0x20 | j]


def rsp_master(k, count_ok=True, payload=16, attempt=0):
    y = 0x10 if count_ok else 0x00
    return [0x1B | attempt << 6, k | 0x80, y] + [k + 1] * payload


def rsp_repair(k, j, payload=16):
    return [0x2B, k | 0x80, 0x20 | j] + [j + 2] * payload


def rsp_miss(k, attempt=0):
    return [0x13 | attempt << 6, k, 0x00]


def rsp_time(ms8):
    return [0x01, 0x80 | ms8]  # ms8 eighths of a millisecond (x 1)


def rsp_time_us(us):
    return [0x01, us & 0x7F]  # us microseconds, below 128


def responder_seeds():
    R = 3
    clean = rsp_cfg() + rsp_start(6)
    for j in range(R):
        clean += rsp_register(j)
    for k in range(6):
        clean += rsp_master(k)
    for j in range(R):
        clean += rsp_end(j)
    write("responder", "clean-message", clean)

    lossy = rsp_cfg() + rsp_start(6)
    for j in range(R):
        lossy += rsp_register(j)
    lossy += rsp_master(1) + rsp_miss(0) + rsp_master(0)  # late master after the miss
    for j in range(R):
        lossy += rsp_repair(0, j)
    lossy += rsp_time(0x7F) + rsp_time(0x7F)  # timeouts: repair of 2, 3
    for k in (2, 3):
        for j in range(R):
            lossy += rsp_repair(k, j) + rsp_repair(k, j)
    for k in (4, 5):
        lossy += rsp_master(k, count_ok=False) + rsp_master(k)
    lossy += rsp_time(0x7F) + rsp_end(0) + rsp_time(0x7F) + rsp_end(1) + rsp_end(2)
    write("responder", "miss-timeout-repair-tail", lossy)

    wrap = rsp_cfg(wrap=1, window=8) + rsp_start(20) + rsp_start(4)
    for j in range(R):
        wrap += rsp_register(j)
    for k in range(20):
        wrap += rsp_master(k)
    wrap += [0x03, 0x00, 0x60] + [0x03, 0x00, 0x61] + [0x03, 0x00, 0x62]  # ahead
    for j in range(R):
        wrap += rsp_end(j)
    for k in range(4):
        wrap += rsp_master(k)
    write("responder", "offset-wrap-and-ahead", wrap)

    for kind, name in ((1, "completion"), (2, "push"), (3, "barrier")):
        s = rsp_cfg(kind=kind, header_only=kind == 2) + rsp_start(3)
        for j in range(R):
            s += rsp_register(j)
        for k in range(3):
            s += [0x1B, k | 0x40, 0x10]  # header-only master
        s += rsp_time(0x7F)
        for j in range(R):
            s += rsp_end(j)
        write("responder", "kind-" + name, s)

    # retries in the network: offset 0 presumed lost by order once offset 1
    # committed, credited again (attempt 1); its attempt-0 aggregate comes
    # late (spurious), then an AGG_MISS of attempt 1 for offset 2, the
    # retry of 2 times out and 3 goes to the bypass repair after 2 misses
    retry = rsp_cfg(attempts=3, subchannels=2) + rsp_start(6)
    for j in range(R):
        retry += rsp_register(j)
    retry += rsp_master(1) + rsp_time_us(100) + rsp_master(0, attempt=1)
    retry += rsp_master(0) + rsp_miss(2) + rsp_master(2, attempt=1) + rsp_time(0x7F)
    retry += rsp_miss(3) + rsp_miss(3, attempt=1)
    for j in range(R):
        retry += rsp_repair(3, j)
    for k in (4, 5):
        retry += rsp_master(k)
    retry += rsp_time(0x7F) + rsp_time(0x7F)
    for j in range(R):
        retry += rsp_end(j)
    write("responder", "attempts-spurious-miss-bypass", retry)

    # a channel that cannot finish: nothing ever answers
    dead = rsp_cfg(attempts=2, subchannels=2) + rsp_start(4)
    for j in range(R):
        dead += rsp_register(j)
    dead += rsp_time(0x7F) * 40
    write("responder", "nothing-answers-fails", dead)

    raw = rsp_cfg(members=1) + rsp_start(2) + [0x02, 16] + [
        0x80, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4] + [0x00]
    write("responder", "raw-register", raw)


# ---- requester ---------------------------------------------------------
def req_cfg(kind=0, header_only=0, member=1, fan=True, ext=0, wrap=0):
    b0 = member | kind << 3 | header_only << 5
    b1 = 1 | (4 if fan else 0) | ext << 3 | (0x20 if wrap else 0)
    return [b0, b1, 3]


def req_credit(k, ride=None, repair=False, payload=16):
    op = (6 if repair else 4) << 3 | 3
    x = k | (0x40 if ride is not None else 0) | (0x80 if ride is not None else 0)
    y = (ride or 0) | 0x10 | 0x20
    data = [op, x, y]
    if ride is not None:
        data += [ride + 1] * payload
    return data


def req_tail(p, replay=False, payload=16):
    op = (3 if replay else 2) << 3 | 3
    return [op, 0x80, p] + [p + 1] * payload


def requester_seeds():
    s = req_cfg() + [0x00, 8] + [0x03, 0x00, 0x00]  # 4 packets, REGISTER_ACK
    s += req_credit(0) + req_credit(1) + req_credit(2, ride=0) + req_credit(2, ride=0)
    s += req_credit(3, ride=1) + req_credit(3, repair=True, ride=1)
    s += req_tail(2) + req_tail(3) + req_tail(3, replay=True) + [0x0B, 0x00, 0x00]
    write("requester", "clean-message", s)

    s = req_cfg(wrap=1) + [0x00, 20] + [0x01, 40] * 9  # REGISTER retries to failure
    write("requester", "register-fails", s)

    s = req_cfg(ext=1) + [0x00, 4] + req_credit(0) + req_credit(1, ride=0)
    s += req_tail(1) + [0x01, 40, 0x01, 80] + [0x0B, 0x00, 0x00] + [0x00, 4] + req_credit(0)
    write("requester", "end-retry-next-message", s)

    for kind, name in ((1, "completion"), (2, "push"), (3, "barrier")):
        s = req_cfg(kind=kind, header_only=1) + [0x00, 6] + req_credit(0) + req_credit(1)
        s += req_credit(2, repair=True) + [0x13, 0x40, 0x00] + [0x0B, 0x00, 0x00]
        write("requester", "kind-" + name, s)


if __name__ == "__main__":
    responder_seeds()
    requester_seeds()
