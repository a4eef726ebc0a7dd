#!/usr/bin/env python3
"""Write the seed corpus of the switch fuzz target to tests/fuzz/corpus/switch/.

An input is one configuration byte (bit 0: leaf of a leaf-spine with a peer
spine) and records [who][length, 2 bytes big-endian][datagram]; who 0..3 is
rank r's address, 4 a stranger, 5 the peer switch (tests/fuzz/fuzz_switch.c).
Datagrams are the 16-byte runtime header (docs/runtime.md) before an Arbor
packet packed here from the header's bit layout. The seeds walk one
AllReduce offset of channel 0 through the star (registers, a credit, three
requests that complete the slot, an END), then strangers, unknown jobs and
channels, broken runtime headers and a JOIN with a bad MAC.

Usage: python3 tests/fuzz/gen_switch_corpus.py [OUTDIR]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_wire_corpus import hdr, payload, PT, REPLAY, SEED  # noqa: E402

SWITCH = 0xFFFF


def rt(kind=1, flags=0, dst_kind=0, job=1, channel=0, dst=0, src=0, sub=0):
    return bytes([0x41, kind, flags, dst_kind]) + struct.pack(">IHHHH", job, channel, dst, src, sub)


def rec(who, dgram):
    return bytes([who]) + struct.pack(">H", len(dgram)) + dgram


def arbor(src, dst_kind, h, body=b"", **kw):
    return rt(dst_kind=dst_kind, src=src, **kw) + h + body


def seeds():
    out = {}
    # One offset of channel 0 (responder rank 0) through the star.
    reg = [rec(r, arbor(r, 0, hdr(PT["REGISTER"], repair=1))) for r in (1, 2, 3)]
    ack = rec(0, arbor(0, 2, hdr(PT["REGISTER_ACK"], repair=1), dst=1))
    credit = rec(0, arbor(0, 1, hdr(PT["RESPONSE"], op=1, credit=1, off_b=0)))
    reqs = [rec(r, arbor(r, 0, hdr(PT["DATA_REQUEST"], op=1, pv=1, depth=1, off_a=0, off_b=1,
                                   fanin=(3, 0, 0)), payload(16)))
            for r in (1, 2, 3)]
    end = rec(1, arbor(1, 0, hdr(PT["END"])))
    tail = rec(0, arbor(0, 1, hdr(PT["RESPONSE"], op=1, pv=1), payload(16)))
    out["star-offset"] = b"\x00" + b"".join(reg) + ack + credit + b"".join(reqs) + tail + end
    # a seeded credit (docs/protocol.md section 5): the switch keeps rank 0's input and sends
    # the whole result down as well as up; then a late copy and a seed of another offset
    seeded = rec(0, arbor(0, 1, hdr(PT["RESPONSE"], op=1, pv=1, kind=SEED, credit=1, off_a=0,
                                    off_b=0), payload(16)))
    out["star-seeded-offset"] = b"\x00" + b"".join(reg) + ack + seeded + b"".join(reqs) + \
        reqs[2] + end + rec(0, arbor(0, 1, hdr(PT["RESPONSE"], op=1, pv=1, kind=SEED, credit=1,
                                               off_a=1, off_b=2), payload(16)))
    out["star-duplicate-request"] = b"\x00" + credit + reqs[0] + reqs[0] + reqs[1]
    out["star-late-request"] = b"\x00" + credit + b"".join(reqs) + reqs[2]
    out["star-repair"] = b"\x00" + rec(0, arbor(0, 1, hdr(PT["RESPONSE"], repair=1, op=1, credit=1,
                                                     pv=1, kind=REPLAY), payload(16))) + \
        rec(2, arbor(2, 0, hdr(PT["DATA_REQUEST"], repair=1, op=1, pv=1, off_b=1), payload(16)))
    out["star-miss"] = b"\x00" + credit + rec(1, arbor(1, 0, hdr(
        PT["DATA_REQUEST"], op=1, pv=1, depth=1, off_a=7, off_b=1, loc=(5, 0, 0),
        fanin=(3, 0, 0)), payload(16)))
    out["strangers"] = b"\x00" + rec(4, arbor(1, 0, hdr(PT["REGISTER"], repair=1))) + \
        rec(1, arbor(2, 0, hdr(PT["REGISTER"], repair=1))) + \
        rec(5, rt(kind=6) + struct.pack(">II", 4, 0))
    out["unknown"] = b"\x00" + rec(1, arbor(1, 0, hdr(PT["REGISTER"], repair=1), job=9)) + \
        rec(1, arbor(1, 0, hdr(PT["REGISTER"], repair=1), channel=200)) + \
        rec(1, arbor(1, 3, hdr(PT["REGISTER"], repair=1))) + \
        rec(0, arbor(0, 1, hdr(PT["RESPONSE"], op=1, credit=1), sub=9))
    out["broken"] = b"\x00" + rec(1, b"") + rec(1, b"\x41") + rec(1, rt()[:15]) + \
        rec(1, rt(kind=9)) + rec(1, rt() + b"\x80") + rec(1, rt(kind=2) + bytes(64)) + \
        rec(1, arbor(1, 0, hdr(PT["DATA_REQUEST"], op=1, pv=1, depth=1, off_b=1, fanin=(0, 0, 0)),
                     payload(3)))
    # The leaf 1.0 of leafspine:2,2,1: a credit from the spine goes down to
    # ranks 0 and 1; their requests go up to it.
    spine_credit = rec(5, arbor(2, 1, hdr(PT["RESPONSE"], op=1, credit=1, ext=1, depth=1,
                                          loc=(3, 0, 0)), channel=2))
    up = [rec(r, arbor(r, 0, hdr(PT["DATA_REQUEST"], op=1, pv=1, ext=1, depth=2,
                                 loc=(3, 0, 0), fanin=(3, 2, 0), off_b=1), payload(16),
                       channel=2)) for r in (0, 1)]
    jobinfo = rec(5, rt(kind=6, src=SWITCH) + struct.pack(">II", 4, 0))
    out["leafspine"] = b"\x01" + jobinfo + spine_credit + b"".join(up) + \
        rec(0, arbor(0, 0, hdr(PT["REGISTER"], repair=1), channel=3))
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "switch")
    os.makedirs(outdir, exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
