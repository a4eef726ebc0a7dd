#!/usr/bin/env python3
"""Write the seed corpus of the wire fuzz target to tests/fuzz/corpus/wire/.

The packets are packed here from the bit layout of docs/protocol.md section 4 (not by
the library), so the corpus is also a second, independent encoding of the
format. Seeds cover every packet type and variant in both header sizes,
Ethernet/IPv4/UDP frames around them, the 28-byte field-by-field form the
target's third reading uses, and one malformed input per rejection rule.

Usage: python3 tests/fuzz/gen_wire_corpus.py [OUTDIR]
Rerunning it rewrites the seed files it owns (names not starting with
"found-"); inputs the fuzzer found are kept as found-* files beside them.
"""
import os
import struct
import sys

PT = dict(REGISTER=0, DATA_REQUEST=1, RESPONSE=2, END=3, END_ACK=4, REGISTER_ACK=5, AGG_MISS=6)
DATA, COMPLETION, REPLAY, SEED = 0, 1, 2, 3
ESIZE = [2, 2, 4, 8, 4, 8]  # f16 bf16 f32 f64 i32 i64


def hdr(pt, repair=0, op=0, msg=0, pv=0, kind=DATA, credit=0, ext=0, depth=0, agg=0,
        off_a=0, off_b=0, loc=(0, 0, 0), fanin=(0, 0, 0), dtype=2, reserved=0,
        version=2):
    b0 = version << 6 | pt << 3 | repair << 2 | op
    b2 = pv << 7 | kind << 5 | credit << 4 | ext << 3 | depth << 1 | agg
    h = bytes([b0, msg, b2]) + off_a.to_bytes(3, "big") + off_b.to_bytes(3, "big")
    h += struct.pack(">H", loc[0]) + bytes(fanin) + bytes([reserved, dtype])
    if ext:
        h += struct.pack(">HH", loc[1], loc[2])
    return h


def payload(n):
    return bytes((i * 7 + 1) & 0xFF for i in range(n))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(udp_payload, src=0x0A000001, dst=0x0A000002, sport=49152, dport=17470,
          ttl=64, tos=0, ident=1, flags=0x4000, proto=17, udp_csum=True, pad=0,
          ethertype=0x0800):
    udp_len = 8 + len(udp_payload)
    ip = struct.pack(">BBHHHBBHII", 0x45, tos, 20 + udp_len, ident, flags, ttl, proto, 0,
                     src, dst)
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    udp = struct.pack(">HHHH", sport, dport, udp_len, 0) + udp_payload
    if udp_csum:
        pseudo = struct.pack(">IIBBH", src, dst, 0, 17, udp_len)
        c = csum(pseudo + udp) or 0xFFFF
        udp = udp[:6] + struct.pack(">H", c) + udp[8:]
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + struct.pack(">H", ethertype)
    return eth + ip + udp + bytes(pad)


def fields(version=2, pt=1, repair=0, op=1, msg=0, pv=1, kind=0, credit=0, ext=1, depth=2,
           agg=0, off_a=5, off_b=3, loc=(1, 2, 3), fanin=(4, 2, 0), dtype=2, plen=8):
    """The target's third reading: one byte per field, then the payload."""
    b = bytes([version, pt, repair, op, msg, pv, kind, credit, ext, depth, agg])
    b += off_a.to_bytes(3, "big") + b"\0" + off_b.to_bytes(3, "big")
    b += b"".join(struct.pack(">H", v) for v in loc) + bytes(fanin) + bytes([dtype])
    return b + payload(plen)


def seeds():
    s = {}
    # Valid packets: every type and variant, both header sizes.
    s["pkt-register"] = hdr(PT["REGISTER"], repair=1, msg=7, off_a=0x100)
    s["pkt-register-ack-ext"] = hdr(PT["REGISTER_ACK"], repair=1, ext=1, loc=(0, 0xBEEF, 2))
    s["pkt-request-pull"] = hdr(PT["DATA_REQUEST"], op=1, pv=1, depth=1, off_a=9, off_b=1,
                                loc=(0x42, 0, 0), fanin=(3, 0, 0)) + payload(16)
    s["pkt-request-ext-depth3-agg"] = hdr(PT["DATA_REQUEST"], op=1, pv=1, ext=1, depth=3, agg=1,
                                          off_a=0x123456, off_b=5, loc=(10, 11, 12),
                                          fanin=(8, 4, 2), dtype=3) + payload(24)
    s["pkt-request-push-ack"] = hdr(PT["DATA_REQUEST"], depth=1, off_b=1, fanin=(1, 0, 0),
                                    dtype=5)
    s["pkt-request-repair"] = hdr(PT["DATA_REQUEST"], repair=1, op=2, pv=1, off_a=16, off_b=1,
                                  dtype=0) + payload(6)
    s["pkt-response-credit-data-ext"] = hdr(PT["RESPONSE"], op=1, pv=1, credit=1, ext=1, depth=2,
                                            off_a=0xABC, off_b=0xABD, loc=(1, 2, 0),
                                            dtype=1) + payload(4)
    s["pkt-response-bare-credit"] = hdr(PT["RESPONSE"], credit=1, off_b=0x800000)
    s["pkt-response-credit-completion"] = hdr(PT["RESPONSE"], kind=COMPLETION, credit=1, depth=1,
                                              off_a=7, off_b=9, dtype=4)
    s["pkt-response-tail"] = hdr(PT["RESPONSE"], op=1, pv=1, off_a=0xFF00) + payload(8)
    s["pkt-response-tail-completion"] = hdr(PT["RESPONSE"], kind=COMPLETION, off_a=1)
    s["pkt-response-repair-replay-ext"] = hdr(PT["RESPONSE"], repair=1, op=1, pv=1, kind=REPLAY,
                                              credit=1, ext=1, off_a=0x20, off_b=0x30,
                                              dtype=3) + payload(8)
    s["pkt-response-repair-bare"] = hdr(PT["RESPONSE"], repair=1, credit=1, off_a=0x21,
                                        off_b=0x31)
    s["pkt-response-tail-replay"] = hdr(PT["RESPONSE"], repair=1, pv=1, kind=REPLAY,
                                        off_a=0x22) + payload(8)
    # seeded credits (docs/protocol.md section 5): the credited offset's own input, and the
    # whole-result aggregate a seeded slot sends up; header-only forms without a payload
    s["pkt-response-seeded-credit"] = hdr(PT["RESPONSE"], op=1, pv=1, kind=SEED, credit=1,
                                          off_a=0x41, off_b=0x41) + payload(16)
    s["pkt-response-seeded-credit-header-only"] = hdr(PT["RESPONSE"], op=1, kind=SEED, credit=1,
                                                      depth=1, off_a=5, off_b=5)
    s["pkt-request-seeded-aggregate"] = hdr(PT["DATA_REQUEST"], op=1, pv=1, kind=SEED, agg=1,
                                            off_a=0x41, off_b=3) + payload(16)
    s["pkt-end"] = hdr(PT["END"], msg=12, off_a=0x200)
    s["pkt-end-ack-ext"] = hdr(PT["END_ACK"], msg=12, ext=1, off_a=0x200)
    s["pkt-agg-miss"] = hdr(PT["AGG_MISS"], off_a=0x123456, loc=(7, 0, 0), fanin=(2, 0, 0))
    s["pkt-reserved-set"] = hdr(PT["END"], reserved=0xA5)
    s["pkt-max-payload"] = hdr(PT["DATA_REQUEST"], op=1, pv=1, off_b=1) + payload(8192)

    # Frames around some of them.
    s["frame-end"] = frame(s["pkt-end"], ident=0x1234)
    s["frame-request-pull"] = frame(s["pkt-request-pull"], sport=49153)
    s["frame-response-ext"] = frame(s["pkt-response-credit-data-ext"], tos=3, ttl=1)
    s["frame-register-padded"] = frame(s["pkt-register"], pad=2)
    s["frame-tail-replay-nocsum"] = frame(s["pkt-response-tail-replay"], udp_csum=False)
    s["frame-agg-miss-no-df"] = frame(s["pkt-agg-miss"], flags=0, ttl=0)
    s["frame-empty-udp"] = frame(b"")

    # Malformed packets: one per rejection rule.
    s["bad-short-2"] = hdr(PT["END"])[:2]
    s["bad-short-15"] = hdr(PT["END"])[:15]
    s["bad-short-ext"] = hdr(PT["END"], ext=1)[:18]
    s["bad-version"] = hdr(PT["END"], version=1)
    s["bad-type"] = hdr(7)
    s["bad-kind"] = hdr(PT["END"], kind=SEED)  # a seed on a control packet: PAYLOAD_FLAG
    s["bad-seed-other-offset"] = hdr(PT["RESPONSE"], op=1, pv=1, kind=SEED, credit=1, off_a=4,
                                     off_b=5) + payload(4)
    s["bad-seed-request"] = hdr(PT["DATA_REQUEST"], op=1, pv=1, kind=SEED, off_b=1) + payload(4)
    s["bad-depth-ext"] = hdr(PT["DATA_REQUEST"], depth=2, off_b=1, fanin=(1, 1, 0))
    s["bad-dtype"] = hdr(PT["END"], dtype=6)
    s["bad-repair"] = hdr(PT["REGISTER"])
    s["bad-credit"] = hdr(PT["DATA_REQUEST"], credit=1, off_b=1)
    s["bad-payload-flag"] = hdr(PT["RESPONSE"], pv=1, kind=COMPLETION, credit=1) + payload(4)
    s["bad-depth"] = hdr(PT["RESPONSE"], pv=1, depth=1) + payload(4)
    s["bad-aggregated"] = hdr(PT["RESPONSE"], credit=1, agg=1)
    s["bad-offset-b"] = hdr(PT["DATA_REQUEST"], repair=1, off_b=2)
    s["bad-op"] = hdr(PT["END"], op=3)
    s["bad-fanin"] = hdr(PT["DATA_REQUEST"], ext=1, depth=3, off_b=1, fanin=(1, 0, 1))
    s["bad-payload-missing"] = hdr(PT["DATA_REQUEST"], pv=1, off_b=1)
    s["bad-payload-align"] = hdr(PT["DATA_REQUEST"], pv=1, off_b=1, dtype=3) + payload(12)
    s["bad-payload-unexpected"] = hdr(PT["END"]) + payload(2)
    s["bad-payload-too-long"] = hdr(PT["DATA_REQUEST"], pv=1, off_b=1) + payload(8196)

    # Malformed frames: one per framing rule.
    good = frame(s["pkt-end"])
    s["badframe-ethertype"] = frame(s["pkt-end"], ethertype=0x86DD)
    s["badframe-truncated"] = good[:50]
    s["badframe-ip-checksum"] = good[:24] + bytes([good[24] ^ 1]) + good[25:]
    s["badframe-udp-checksum"] = good[:-1] + bytes([good[-1] ^ 0x40])
    s["badframe-fragment"] = frame(s["pkt-end"], flags=0x2000)
    s["badframe-proto"] = frame(s["pkt-end"], proto=6)
    s["badframe-udp-length"] = good[:38] + b"\x00\x07" + good[40:]

    # The field-by-field reading.
    s["fields-request"] = fields()
    s["fields-tail-replay"] = fields(pt=2, repair=1, op=0, kind=2, ext=0, depth=0, off_b=0,
                                     loc=(0, 0, 0), dtype=3, plen=16)
    s["fields-out-of-range"] = fields(version=2, pt=3, op=0, pv=0, ext=0, depth=0, off_b=0,
                                      loc=(0, 9, 0), plen=0)
    return s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "wire")
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds()), out))


if __name__ == "__main__":
    main()
