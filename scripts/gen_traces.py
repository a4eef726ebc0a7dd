#!/usr/bin/env python3
"""Write the training-iteration traces shipped in scenarios/traces/.

    python3 scripts/gen_traces.py [OUTDIR]      (default: scenarios/traces)

Three steps in Arbor's text trace format (docs/workloads.md):
  dp-step.txt   data parallel: backward layers each followed by the AllReduce
                of their gradient bucket, overlapping the next layer's backward
                (and dp-step-64.txt, dp-step-512.txt: a larger model's step on
                64 and 512 ranks)
  pp-step.txt   pipeline parallel (GPipe): 4 stages, 4 micro-batches, the
                activations and gradients sent point to point between stages
  moe-step.txt  mixture of experts: two layers, each an AllToAll dispatch and
                an AllToAll combine around the experts' compute
and the data-parallel step again as a Chakra execution trace, one protobuf
file per rank (dp-step.R.et): a GlobalMetadata record, then Node records,
each preceded by its length as a varint, with the published field numbers of
Chakra's et_def.proto (encoded here by hand, no protobuf library needed).
The output is a pure function of this script: running it again gives the
same bytes.
"""
import os
import sys

# ---- the steps, as (rank, id, op, args, deps) per node -----------------------

DP_RANKS = 8
DP_LAYERS = 4
DP_FWD_US = 100      # forward pass
DP_BWD_US = 50       # backward of one layer
DP_BUCKET = 2 << 20  # gradient bucket per layer (bytes)
DP_OPT_US = 20       # optimizer step after every bucket is reduced


# The larger data-parallel step (dp-step-64.txt, dp-step-512.txt): the same
# shape with 8 layers of 8 MiB gradient buckets (2 Mi f32 parameters each),
# a 800 us forward, 500 us of backward per layer and a 100 us optimizer, on
# 64 and 512 ranks; the AllReduces go one after another, as on the one
# stream of a communicator (each waits for its layer and the previous one).
DPL_LAYERS = 8
DPL_FWD_US = 800
DPL_BWD_US = 500
DPL_BUCKET = 8 << 20
DPL_OPT_US = 100


def dp_nodes(layers=DP_LAYERS, fwd=DP_FWD_US, bwd_us=DP_BWD_US, bucket=DP_BUCKET, opt=DP_OPT_US,
             stream=False):
    """Every rank: fwd, then bwd layer L-1 .. 0; bucket i's AllReduce depends
    on bwd layer i (and with `stream` on AllReduce i-1); the optimizer on the
    last bwd and every AllReduce."""
    nodes = [(1, "comp", fwd, [])]
    prev = 1
    colls = []
    for k in range(layers):
        bwd = 10 + 2 * k
        nodes.append((bwd, "comp", bwd_us, [prev]))
        nodes.append((bwd + 1, "coll", ("allreduce", bucket),
                      [bwd] + ([colls[-1]] if stream and colls else [])))
        colls.append(bwd + 1)
        prev = bwd
    nodes.append((99, "comp", opt, [prev] + colls))
    return nodes


def dp_text(ranks=DP_RANKS, layers=DP_LAYERS, fwd=DP_FWD_US, bwd=DP_BWD_US, bucket=DP_BUCKET,
            opt=DP_OPT_US, stream=False):
    out = [
        "# Data-parallel training step (scripts/gen_traces.py): %d ranks, %d layers." % (ranks, layers),
        "# Forward %d us, backward %d us per layer; after layer k's backward its %d-byte"
        % (fwd, bwd, bucket),
        "# gradient bucket is all-reduced while the next layer's backward runs%s; the"
        % (" (the\n# AllReduces one after another, on one stream)" if stream else ""),
        "# optimizer (%d us) waits for the last backward and every AllReduce." % opt,
        "arbor-trace 1",
        "ranks %d" % ranks,
    ]
    for nid, op, arg, deps in dp_nodes(layers, fwd, bwd, bucket, opt, stream):
        d = " deps=" + ",".join(str(x) for x in deps) if deps else ""
        if op == "comp":
            out.append("* %d comp %dus%s" % (nid, arg, d))
        else:
            out.append("* %d coll %s %d%s" % (nid, arg[0], arg[1], d))
    return "\n".join(out) + "\n"


PP_STAGES = 4
PP_MICRO = 4
PP_FWD_US = 40
PP_BWD_US = 80
PP_ACT = 256 << 10  # activation (and its gradient) per micro-batch


def pp_text():
    S, M = PP_STAGES, PP_MICRO
    out = [
        "# Pipeline-parallel training step, GPipe schedule (scripts/gen_traces.py):",
        "# %d stages (one rank each), %d micro-batches; forward %d us and backward %d us"
        % (S, M, PP_FWD_US, PP_BWD_US),
        "# per micro-batch and stage; stage s sends each micro-batch's %d-byte activation"
        % PP_ACT,
        "# to stage s+1 and the gradient of the same size back. All forwards come first.",
        "arbor-trace 1",
        "ranks %d" % S,
    ]
    # ids: fwd m: 100+m, its send 200+m, its recv 300+m;
    #      bwd m: 400+m, gradient send 500+m, gradient recv 600+m
    for s in range(S):
        for m in range(M):
            deps = []
            if m > 0:
                deps.append(100 + m - 1)
            if s > 0:
                out.append("%d %d recv %d from=%d tag=%d" % (s, 300 + m, PP_ACT, s - 1, m))
                deps.append(300 + m)
            out.append("%d %d comp %dus%s" % (s, 100 + m, PP_FWD_US,
                                              " deps=" + ",".join(map(str, deps)) if deps else ""))
            if s < S - 1:
                out.append("%d %d send %d to=%d tag=%d deps=%d" % (s, 200 + m, PP_ACT, s + 1, m, 100 + m))
        for m in range(M):
            deps = [100 + M - 1] if m == 0 else [400 + m - 1]
            if s < S - 1:
                out.append("%d %d recv %d from=%d tag=%d" % (s, 600 + m, PP_ACT, s + 1, 1000 + m))
                deps.append(600 + m)
            out.append("%d %d comp %dus deps=%s" % (s, 400 + m, PP_BWD_US, ",".join(map(str, deps))))
            if s > 0:
                out.append("%d %d send %d to=%d tag=%d deps=%d" % (s, 500 + m, PP_ACT, s - 1, 1000 + m, 400 + m))
    return "\n".join(out) + "\n"


MOE_RANKS = 8
MOE_LAYERS = 2
MOE_ATTN_US = 30
MOE_EXPERT_US = 40
MOE_A2A = 8 << 20  # AllToAll send buffer per rank (S/n to every rank)


def moe_text():
    out = [
        "# Mixture-of-experts step (scripts/gen_traces.py): %d ranks, %d MoE layers, each"
        % (MOE_RANKS, MOE_LAYERS),
        "# attention (%d us), an AllToAll dispatch of %d bytes per rank, the experts (%d us)"
        % (MOE_ATTN_US, MOE_A2A, MOE_EXPERT_US),
        "# and an AllToAll combine of the same size; every node waits for the previous one.",
        "arbor-trace 1",
        "ranks %d" % MOE_RANKS,
    ]
    prev = None
    nid = 1
    for _ in range(MOE_LAYERS):
        for op in ("attn", "dispatch", "expert", "combine"):
            d = " deps=%d" % prev if prev else ""
            if op == "attn":
                out.append("* %d comp %dus%s" % (nid, MOE_ATTN_US, d))
            elif op == "expert":
                out.append("* %d comp %dus%s" % (nid, MOE_EXPERT_US, d))
            else:
                out.append("* %d coll alltoall %d%s" % (nid, MOE_A2A, d))
            prev = nid
            nid += 1
    return "\n".join(out) + "\n"


# ---- Chakra: protobuf by hand -------------------------------------------------

def varint(v):
    b = bytearray()
    while True:
        x = v & 0x7F
        v >>= 7
        if v:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, data):
    return key(field, 2) + varint(len(data)) + data


def f_str(field, s):
    return f_bytes(field, s.encode())


def attr_int64(name, v):  # AttributeProto: name = 1, int64_val = 9
    return f_str(1, name) + f_varint(9, v)


def attr_str(name, s):  # string_val = 29
    return f_str(1, name) + f_str(29, s)


def attr_bool(name, v):  # bool_val = 27
    return f_str(1, name) + f_varint(27, 1 if v else 0)


COMP_NODE, COMM_COLL_NODE = 4, 7
ALL_REDUCE = 0


def chakra_node(nid, name, ntype, deps, dur_us=0, attrs=()):
    # Node: id = 1, name = 2, type = 3, data_deps = 5 (packed), duration_micros = 7, attr = 10
    b = f_varint(1, nid) + f_str(2, name) + f_varint(3, ntype)
    if deps:
        b += f_bytes(5, b"".join(varint(d) for d in deps))
    if dur_us:
        b += f_varint(7, dur_us)
    for a in attrs:
        b += f_bytes(10, a)
    return b


def delimited(msg):
    return varint(len(msg)) + msg


def dp_chakra(rank):
    meta = f_str(1, "0.0.4") + f_bytes(2, attr_str("schema", "arbor gen_traces.py dp-step"))
    out = delimited(meta)
    for nid, op, arg, deps in dp_nodes():
        if op == "comp":
            node = chakra_node(nid, "comp_%d" % nid, COMP_NODE, deps, arg, [attr_bool("is_cpu_op", False)])
        else:
            node = chakra_node(nid, "allreduce_%d" % nid, COMM_COLL_NODE, deps, 0,
                               [attr_int64("comm_type", ALL_REDUCE), attr_int64("comm_size", arg[1]),
                                attr_str("pg_name", "dp")])
        out += delimited(node)
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "traces")
    os.makedirs(outdir, exist_ok=True)
    large = [("dp-step-%d.txt" % n, dp_text(n, DPL_LAYERS, DPL_FWD_US, DPL_BWD_US, DPL_BUCKET,
                                             DPL_OPT_US, True)) for n in (64, 512)]
    for name, text in [("dp-step.txt", dp_text()), ("pp-step.txt", pp_text()),
                       ("moe-step.txt", moe_text())] + large:
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)
    for r in range(DP_RANKS):
        with open(os.path.join(outdir, "dp-step.%d.et" % r), "wb") as f:
            f.write(dp_chakra(r))


if __name__ == "__main__":
    main()
