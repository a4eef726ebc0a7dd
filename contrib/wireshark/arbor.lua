-- arbor.lua - Wireshark / tshark dissector for the Arbor wire format.
--
-- The header is docs/protocol.md section 4 as docs/wire.md describes it: 16 B (ext = 0)
-- or 20 B (ext = 1), multi-byte fields big-endian, then a payload of
-- little-endian dtype elements that runs to the end of the UDP datagram.
-- Every rejection rule of the decoder (src/wire/hdr.c) is an expert item of
-- the "Malformed" group; the packet is still dissected field by field.
--
-- Registers on UDP port 17470 (preference "arbor.udp_port") and in the
-- "Decode As" list of udp.port. Field names: see contrib/wireshark/README.md.
--
-- Datagrams of the UDP runtime (docs/runtime.md) start with a 16 B runtime
-- header whose first byte is 0x41 (version bits 01, never an Arbor header):
-- it is shown as "Arbor runtime" (fields arbor_rt.*) and the Arbor packet
-- after it is dissected as usual; control messages (JOIN and its answers)
-- show their fields.
--
-- Works with Lua 5.1 to 5.4 (no bit library needed: bit fields are
-- extracted with ProtoField masks and plain arithmetic).

local DEFAULT_PORT = 17470
local HDR_SHORT = 16
local HDR_LONG = 20
local PAYLOAD_MAX = 8192

local arbor = Proto("arbor", "Arbor in-network aggregation")
local arbor_rt = Proto("arbor_rt", "Arbor runtime")
local RT_MAGIC = 0x41
local RT_HDR = 16

-- ------------------------------------------------------------------
-- Value names
-- ------------------------------------------------------------------

local PT = {
    [0] = "REGISTER",
    [1] = "DATA_REQUEST",
    [2] = "RESPONSE",
    [3] = "END",
    [4] = "END_ACK",
    [5] = "REGISTER_ACK",
    [6] = "AGG_MISS",
    [7] = "invalid (7)",
}
local OPS = { [0] = "NOP", [1] = "SUM", [2] = "MAX", [3] = "MIN" }
local KINDS = { [0] = "DATA", [1] = "COMPLETION", [2] = "REPLAY", [3] = "SEED" }
local DTYPES = { [0] = "f16", [1] = "bf16", [2] = "f32", [3] = "f64", [4] = "i32", [5] = "i64" }
local DTYPE_SIZE = { [0] = 2, [1] = 2, [2] = 4, [3] = 8, [4] = 4, [5] = 8 }
local EXT_NAMES = { [0] = "16 B header", [1] = "20 B header" }

-- ------------------------------------------------------------------
-- Fields
-- ------------------------------------------------------------------

local f = {
    version = ProtoField.uint8("arbor.version", "Version", base.DEC, nil, 0xC0),
    packet_type = ProtoField.uint8("arbor.packet_type", "Packet type", base.DEC, PT, 0x38),
    repair = ProtoField.uint8("arbor.repair", "Repair", base.DEC, nil, 0x04),
    op = ProtoField.uint8("arbor.op", "Op", base.DEC, OPS, 0x03),
    message_id = ProtoField.uint8("arbor.message_id", "Message ID", base.DEC),
    flags = ProtoField.uint8("arbor.flags", "Flags", base.HEX),
    payload_valid = ProtoField.uint8("arbor.payload_valid", "Payload valid", base.DEC, nil, 0x80),
    payload_kind = ProtoField.uint8("arbor.payload_kind", "Payload kind", base.DEC, KINDS, 0x60),
    credit_valid = ProtoField.uint8("arbor.credit_valid", "Credit valid", base.DEC, nil, 0x10),
    ext = ProtoField.uint8("arbor.ext", "Ext", base.DEC, EXT_NAMES, 0x08),
    agg_depth = ProtoField.uint8("arbor.agg_depth", "Aggregation depth", base.DEC, nil, 0x06),
    aggregated = ProtoField.uint8("arbor.aggregated", "Aggregated", base.DEC, nil, 0x01),
    offset_a = ProtoField.uint24("arbor.offset_a", "Offset A", base.DEC),
    offset_b = ProtoField.uint24("arbor.offset_b", "Offset B", base.DEC),
    agg_loc0 = ProtoField.uint16("arbor.agg_loc0", "Aggregator location [0]", base.DEC),
    agg_loc1 = ProtoField.uint16("arbor.agg_loc1", "Aggregator location [1]", base.DEC),
    agg_loc2 = ProtoField.uint16("arbor.agg_loc2", "Aggregator location [2]", base.DEC),
    fanin0 = ProtoField.uint8("arbor.fanin0", "Fan-in [0]", base.DEC),
    fanin1 = ProtoField.uint8("arbor.fanin1", "Fan-in [1]", base.DEC),
    fanin2 = ProtoField.uint8("arbor.fanin2", "Fan-in [2]", base.DEC),
    attempt = ProtoField.uint8("arbor.attempt", "Attempt", base.DEC),
    dtype = ProtoField.uint8("arbor.dtype", "Data type", base.DEC, DTYPES),
    header_len = ProtoField.uint8("arbor.header_len", "Header length", base.DEC),
    payload = ProtoField.bytes("arbor.payload", "Payload"),
    payload_len = ProtoField.uint32("arbor.payload.len", "Payload length", base.DEC),
    payload_count = ProtoField.uint32("arbor.payload.count", "Elements", base.DEC),
    v_f16 = ProtoField.float("arbor.payload.f16", "f16"),
    v_bf16 = ProtoField.float("arbor.payload.bf16", "bf16"),
    v_f32 = ProtoField.float("arbor.payload.f32", "f32"),
    v_f64 = ProtoField.double("arbor.payload.f64", "f64"),
    v_i32 = ProtoField.int32("arbor.payload.i32", "i32", base.DEC),
    v_i64 = ProtoField.int64("arbor.payload.i64", "i64", base.DEC),
}
arbor.fields = {
    f.version, f.packet_type, f.repair, f.op, f.message_id, f.flags, f.payload_valid,
    f.payload_kind, f.credit_valid, f.ext, f.agg_depth, f.aggregated, f.offset_a, f.offset_b,
    f.agg_loc0, f.agg_loc1, f.agg_loc2, f.fanin0, f.fanin1, f.fanin2, f.attempt, f.dtype,
    f.header_len, f.payload, f.payload_len, f.payload_count, f.v_f16, f.v_bf16, f.v_f32,
    f.v_f64, f.v_i32, f.v_i64,
}

local RT_KINDS = { [1] = "ARBOR", [2] = "JOIN", [3] = "WELCOME", [4] = "REJECT", [5] = "NOTICE",
    [6] = "JOBINFO" }
local RT_DST = { [0] = "responder", [1] = "group", [2] = "member" }
local RT_REJECT = { [1] = "unknown job", [2] = "bad MAC", [3] = "fields", [4] = "replay",
    [5] = "another fabric", [6] = "another size or host base", [7] = "another process is the rank" }
local rf = {
    kind = ProtoField.uint8("arbor_rt.kind", "Kind", base.DEC, RT_KINDS),
    flags = ProtoField.uint8("arbor_rt.flags", "Flags", base.HEX),
    ce = ProtoField.uint8("arbor_rt.ce", "CE", base.DEC, nil, 0x01),
    from_switch = ProtoField.uint8("arbor_rt.from_switch", "Made by a switch", base.DEC, nil, 0x02),
    dst_kind = ProtoField.uint8("arbor_rt.dst_kind", "Destination", base.DEC, RT_DST),
    job = ProtoField.uint32("arbor_rt.job", "Job", base.DEC),
    channel = ProtoField.uint16("arbor_rt.channel", "Channel (responder rank)", base.DEC),
    dst = ProtoField.uint16("arbor_rt.dst", "Destination rank", base.DEC),
    src = ProtoField.uint16("arbor_rt.src", "Source rank (65535: a switch)", base.DEC),
    sub = ProtoField.uint16("arbor_rt.subchannel", "Subchannel", base.DEC),
    size = ProtoField.uint32("arbor_rt.size", "Ranks", base.DEC),
    host_base = ProtoField.uint32("arbor_rt.host_base", "Host of rank 0", base.DEC),
    counter = ProtoField.uint64("arbor_rt.counter", "Counter", base.DEC),
    fabric = ProtoField.uint32("arbor_rt.fabric", "Fabric fingerprint", base.HEX),
    nonce = ProtoField.bytes("arbor_rt.nonce", "Nonce"),
    mac = ProtoField.bytes("arbor_rt.mac", "MAC (HMAC-SHA-512-256)"),
    reason = ProtoField.uint8("arbor_rt.reason", "Reason", base.DEC, RT_REJECT),
    other_addr = ProtoField.ipv4("arbor_rt.other_addr", "Address of the rank's other process"),
    other_port = ProtoField.uint16("arbor_rt.other_port", "Port of the rank's other process", base.DEC),
}
arbor_rt.fields = {
    rf.kind, rf.flags, rf.ce, rf.from_switch, rf.dst_kind, rf.job, rf.channel, rf.dst, rf.src,
    rf.sub, rf.size, rf.host_base, rf.counter, rf.fabric, rf.nonce, rf.mac, rf.reason,
    rf.other_addr, rf.other_port,
}
local rt_short = ProtoExpert.new("arbor_rt.short", "Shorter than the runtime header or its message",
    expert.group.MALFORMED, expert.severity.ERROR)
arbor_rt.experts = { rt_short }

-- ------------------------------------------------------------------
-- Expert info: one item per rejection rule of the decoder
-- ------------------------------------------------------------------

local MAL, ERR = expert.group.MALFORMED, expert.severity.ERROR
local e = {
    short = ProtoExpert.new("arbor.short", "Buffer shorter than the Arbor header", MAL, ERR),
    version = ProtoExpert.new("arbor.bad_version", "Version is not 2", MAL, ERR),
    ptype = ProtoExpert.new("arbor.bad_type", "packet_type 7 is invalid", MAL, ERR),
    depth_ext = ProtoExpert.new("arbor.depth_ext",
        "agg_depth > 1 needs the 20 B header (ext = 1)", MAL, ERR),
    dtype = ProtoExpert.new("arbor.bad_dtype", "dtype is not 0..5", MAL, ERR),
    table = ProtoExpert.new("arbor.bad_combination",
        "Field combination the per-type table forbids", MAL, ERR),
    fanin = ProtoExpert.new("arbor.bad_fanin", "fanin is 0 below agg_depth", MAL, ERR),
    missing = ProtoExpert.new("arbor.payload_missing",
        "payload_valid = 1 but no payload follows", MAL, ERR),
    align = ProtoExpert.new("arbor.payload_align",
        "Payload is not a whole number of dtype elements", MAL, ERR),
    too_long = ProtoExpert.new("arbor.payload_too_long",
        "Payload longer than 8192 bytes", MAL, ERR),
    unexpected = ProtoExpert.new("arbor.payload_unexpected",
        "payload_valid = 0 but payload bytes follow", MAL, ERR),
    attempt = ProtoExpert.new("arbor.bad_attempt",
        "attempt is not 0 outside a normal credit, a normal request or AGG_MISS", MAL, ERR),
    snap = ProtoExpert.new("arbor.payload_cut",
        "Payload cut by the capture's snapshot length", expert.group.UNDECODED, expert.severity.NOTE),
}
arbor.experts = {
    e.short, e.version, e.ptype, e.depth_ext, e.dtype, e.table, e.fanin, e.missing,
    e.align, e.too_long, e.unexpected, e.attempt, e.snap,
}

-- ------------------------------------------------------------------
-- Preferences
-- ------------------------------------------------------------------

arbor.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
    "UDP port of Arbor channels (default 17470). Other ports: \"Decode As...\".")
arbor.prefs.max_values = Pref.uint("Payload values shown", 8,
    "How many payload elements to decode and show (0: none)")

-- ------------------------------------------------------------------
-- Helpers
-- ------------------------------------------------------------------

local floor = math.floor

-- Bits hi..lo of byte b (bit 7 is the most significant). Integer powers
-- of two keep the result an integer under Lua 5.3+ (where 2 ^ n is a float).
local P2 = { [0] = 1, 2, 4, 8, 16, 32, 64, 128, 256 }
local function bits(b, hi, lo)
    return floor(b / P2[lo]) % P2[hi - lo + 1]
end

local function half_to_number(u) -- IEEE 754 binary16
    local sign = (u >= 0x8000) and -1 or 1
    local ex = floor(u / 1024) % 32
    local m = u % 1024
    if ex == 0 then return sign * m * 2 ^ -24 end
    if ex == 31 then return (m == 0) and sign * math.huge or 0 / 0 end
    return sign * (1 + m / 1024) * 2 ^ (ex - 15)
end

local function bf16_to_number(u) -- the upper half of a binary32
    local sign = (u >= 0x8000) and -1 or 1
    local ex = floor(u / 128) % 256
    local m = u % 128
    if ex == 0 then return sign * m * 2 ^ -133 end
    if ex == 255 then return (m == 0) and sign * math.huge or 0 / 0 end
    return sign * (1 + m / 128) * 2 ^ (ex - 127)
end

-- The per-type table (docs/wire.md section 3), indexed by
-- packet_type, repair, credit_valid. Each row: the allowed
-- payload_valid/kind pairs, the largest agg_depth, whether aggregated may
-- be 1, the offset_b rule ("zero", "one", "pos" or "any"), whether op
-- must be NOP and whether the attempt (byte 14) may be nonzero.
local function row(pairs_, depth, aggr, offb, nop, att)
    return { pairs = pairs_, depth = depth, aggr = aggr, offb = offb, nop = nop, att = att }
end
local P_NONE = { ["0/0"] = true }
local P_REQ = { ["1/0"] = true, ["0/0"] = true }
-- a normal request may be a seeded slot's aggregate (kind SEED, 3)
local P_REQ_SEED = { ["1/0"] = true, ["0/0"] = true, ["1/3"] = true, ["0/3"] = true }
local TABLE = {
    [0] = { [1] = { [0] = row(P_NONE, 0, false, "zero", true) } },
    [5] = { [1] = { [0] = row(P_NONE, 0, false, "zero", true) } },
    [1] = {
        [0] = { [0] = row(P_REQ_SEED, 3, true, "pos", false, true) },
        [1] = { [0] = row(P_REQ, 0, false, "one", false) },
    },
    [2] = {
        [0] = {
            [1] = row({ ["1/0"] = true, ["0/1"] = true, ["0/0"] = true, ["1/3"] = true,
                ["0/3"] = true }, 3, false, "any", false, true),
            [0] = row({ ["1/0"] = true, ["0/1"] = true }, 0, false, "zero", false),
        },
        [1] = {
            [1] = row({ ["1/2"] = true, ["0/0"] = true }, 0, false, "any", false),
            [0] = row({ ["1/2"] = true }, 0, false, "zero", false),
        },
    },
    [3] = { [0] = { [0] = row(P_NONE, 0, false, "zero", true) } },
    [4] = { [0] = { [0] = row(P_NONE, 0, false, "zero", true) } },
    [6] = { [0] = { [0] = row(P_NONE, 0, false, "zero", true, true) } },
}

-- Is the attempt byte allowed to be nonzero on this packet?
local function attempt_allowed(h)
    local by_repair = TABLE[h.ptype]
    local by_credit = by_repair and by_repair[h.repair]
    local r = by_credit and by_credit[h.credit]
    return r ~= nil and r.att == true
end

-- Problems with the per-type table, as messages (empty: none).
local function table_problems(h)
    local out = {}
    local name = PT[h.ptype]
    local by_repair = TABLE[h.ptype]
    if not by_repair then return out end
    local by_credit = by_repair[h.repair]
    if not by_credit then
        out[#out + 1] = string.format("%s with repair = %d", name, h.repair)
        return out
    end
    local r = by_credit[h.credit]
    if not r then
        out[#out + 1] = string.format("%s%s with credit_valid = %d", name,
            h.repair == 1 and " (repair)" or "", h.credit)
        return out
    end
    if not r.pairs[h.pvalid .. "/" .. h.kind] then
        out[#out + 1] = string.format("%s with payload_valid = %d / payload_kind %s", name,
            h.pvalid, KINDS[h.kind])
    elseif h.kind == 3 and h.ptype == 2 and h.offa ~= h.offb then
        out[#out + 1] = string.format("a seed of offset %d on the credit of offset %d", h.offa,
            h.offb)
    elseif h.kind == 3 and h.ptype == 1 and h.aggregated == 0 then
        out[#out + 1] = "a SEED request that is no switch's aggregate"
    end
    if h.depth > r.depth then
        out[#out + 1] = string.format("%s with agg_depth %d (at most %d)", name, h.depth, r.depth)
    end
    if h.aggregated == 1 and not r.aggr then
        out[#out + 1] = string.format("%s with aggregated = 1", name)
    end
    if (r.offb == "zero" and h.offb ~= 0) or (r.offb == "one" and h.offb ~= 1) or
        (r.offb == "pos" and h.offb == 0) then
        local want = ({ zero = "0", one = "1", pos = ">= 1" })[r.offb]
        out[#out + 1] = string.format("%s with offset_b %d (must be %s)", name, h.offb, want)
    end
    if r.nop and h.op ~= 0 then
        out[#out + 1] = string.format("%s with op %s (must be NOP)", name, OPS[h.op])
    end
    return out
end

-- What offset_a / offset_b mean for this packet.
local function offset_meanings(h)
    local t = h.ptype
    if t == 0 or t == 5 or t == 3 or t == 4 then return "start_seq", nil end
    if t == 1 then return "request offset", "contribution count" end
    if t == 2 then
        local a = "payload offset"
        if h.pvalid == 0 then
            a = (h.kind == 1) and "committed offset" or "unused without payload"
        end
        return a, (h.credit == 1) and "credit offset" or nil
    end
    if t == 6 then return "request offset", nil end
    return nil, nil
end

-- The Info column.
local function summary(h, plen)
    local s = { PT[h.ptype] or "?" }
    local t = h.ptype
    if h.repair == 1 and t ~= 0 and t ~= 5 then s[#s + 1] = "repair" end
    if t == 0 or t == 5 or t == 3 or t == 4 then
        s[#s + 1] = "start_seq=" .. h.offa
    elseif t == 1 then
        s[#s + 1] = "offset=" .. h.offa
        s[#s + 1] = "count=" .. h.offb
        if h.aggregated == 1 then s[#s + 1] = "aggregated" end
        if h.kind == 3 then s[#s + 1] = "whole result" end
    elseif t == 2 then
        if h.credit == 1 then s[#s + 1] = "credit=" .. h.offb else s[#s + 1] = "tail" end
        if h.pvalid == 1 then
            local tag = (h.kind == 2) and "replay@" or (h.kind == 3) and "seed@" or "payload@"
            s[#s + 1] = tag .. h.offa
        elseif h.kind == 1 then
            s[#s + 1] = "commit@" .. h.offa
        end
    elseif t == 6 then
        s[#s + 1] = "offset=" .. h.offa
    end
    if h.attempt ~= 0 then s[#s + 1] = "attempt=" .. h.attempt end
    if h.depth > 0 then s[#s + 1] = "depth=" .. h.depth end
    s[#s + 1] = "msg=" .. h.msg
    if h.op ~= 0 then s[#s + 1] = OPS[h.op] end
    if plen > 0 then
        local sz = DTYPE_SIZE[h.dtype]
        if sz and plen % sz == 0 then
            s[#s + 1] = string.format("%dx%s", floor(plen / sz), DTYPES[h.dtype])
        else
            s[#s + 1] = plen .. "B"
        end
    end
    return table.concat(s, " ")
end

-- ------------------------------------------------------------------
-- Dissector
-- ------------------------------------------------------------------

local function dissect_arbor(tvb, pinfo, root)
    local caplen = tvb:len()
    local replen = tvb:reported_len()
    pinfo.cols.protocol = "Arbor"
    local tree = root:add(arbor, tvb())

    -- Bytes 0..2 decide the header length.
    if replen < 3 then
        if caplen >= 1 then
            local r = tvb(0, 1)
            tree:add(f.version, r)
            tree:add(f.packet_type, r)
            tree:add(f.repair, r)
            tree:add(f.op, r)
        end
        if caplen >= 2 then tree:add(f.message_id, tvb(1, 1)) end
        tree:add_proto_expert_info(e.short,
            string.format("Buffer shorter than the Arbor header (%d of at least 16 bytes)", replen))
        pinfo.cols.info = string.format("Arbor [short: %d B] [Malformed]", replen)
        return caplen
    end
    local function have(off, n) return off + n <= caplen end
    local malformed = false
    -- A rejection rule broken: an expert item, and "[Malformed]" in Info.
    local function bad(ex, msg)
        malformed = true
        if msg then tree:add_proto_expert_info(ex, msg) else tree:add_proto_expert_info(ex) end
    end

    local b0 = have(0, 1) and tvb(0, 1):uint() or 0
    local b2 = have(2, 1) and tvb(2, 1):uint() or 0
    local ext = bits(b2, 3, 3)
    local hlen = (ext == 1) and HDR_LONG or HDR_SHORT
    local h = {
        version = bits(b0, 7, 6), ptype = bits(b0, 5, 3), repair = bits(b0, 2, 2),
        op = bits(b0, 1, 0),
        msg = have(1, 1) and tvb(1, 1):uint() or 0,
        pvalid = bits(b2, 7, 7), kind = bits(b2, 6, 5), credit = bits(b2, 4, 4), ext = ext,
        depth = bits(b2, 2, 1), aggregated = bits(b2, 0, 0),
        offa = have(3, 3) and tvb(3, 3):uint() or 0,
        offb = have(6, 3) and tvb(6, 3):uint() or 0,
        fanin = {
            have(11, 1) and tvb(11, 1):uint() or 0,
            have(12, 1) and tvb(12, 1):uint() or 0,
            have(13, 1) and tvb(13, 1):uint() or 0,
        },
        attempt = have(14, 1) and tvb(14, 1):uint() or 0,
        dtype = have(15, 1) and tvb(15, 1):uint() or 0,
    }

    -- Header fields, each only if its bytes were captured.
    if have(0, 1) then
        local r = tvb(0, 1)
        tree:add(f.version, r)
        tree:add(f.packet_type, r)
        tree:add(f.repair, r)
        tree:add(f.op, r)
    end
    if have(1, 1) then tree:add(f.message_id, tvb(1, 1)) end
    if have(2, 1) then
        local r = tvb(2, 1)
        local ft = tree:add(f.flags, r)
        ft:add(f.payload_valid, r)
        ft:add(f.payload_kind, r)
        ft:add(f.credit_valid, r)
        ft:add(f.ext, r)
        ft:add(f.agg_depth, r)
        ft:add(f.aggregated, r)
    end
    local mean_a, mean_b = offset_meanings(h)
    if have(3, 3) then
        local it = tree:add(f.offset_a, tvb(3, 3))
        if mean_a then it:append_text(" (" .. mean_a .. ")") end
    end
    if have(6, 3) then
        local it = tree:add(f.offset_b, tvb(6, 3))
        if mean_b then it:append_text(" (" .. mean_b .. ")") end
    end
    if have(9, 2) then tree:add(f.agg_loc0, tvb(9, 2)) end
    if have(11, 1) then tree:add(f.fanin0, tvb(11, 1)) end
    if have(12, 1) then tree:add(f.fanin1, tvb(12, 1)) end
    if have(13, 1) then tree:add(f.fanin2, tvb(13, 1)) end
    if have(14, 1) then tree:add(f.attempt, tvb(14, 1)) end
    if have(15, 1) then tree:add(f.dtype, tvb(15, 1)) end
    if ext == 1 then
        if have(16, 2) then tree:add(f.agg_loc1, tvb(16, 2)) end
        if have(18, 2) then tree:add(f.agg_loc2, tvb(18, 2)) end
    end
    tree:add(f.header_len, hlen):set_generated()

    if replen < hlen then
        bad(e.short,
            string.format("Buffer shorter than the Arbor header (%d of %d bytes)", replen, hlen))
        pinfo.cols.info = string.format("%s [short: %d of %d B] [Malformed]", PT[h.ptype],
            replen, hlen)
        return caplen
    end

    -- Rules checked in the decoder's order.
    if h.version ~= 2 then
        bad(e.version, string.format("Version is %d, not 2", h.version))
    end
    if h.ptype == 7 then bad(e.ptype) end
    if h.depth > 1 and ext == 0 then
        bad(e.depth_ext,
            string.format("agg_depth %d needs the 20 B header (ext = 1)", h.depth))
    end
    local esize = DTYPE_SIZE[h.dtype]
    if not esize then
        bad(e.dtype, string.format("dtype %d is not 0..5", h.dtype))
    end
    local problems = table_problems(h)
    for _, msg in ipairs(problems) do
        bad(e.table, "Per-type table forbids " .. msg)
    end
    if #problems == 0 and h.attempt ~= 0 and not attempt_allowed(h) then
        bad(e.attempt, string.format("%s with attempt %d (must be 0)", PT[h.ptype], h.attempt))
    end
    if h.ptype == 1 then
        for i = 1, h.depth do
            if h.fanin[i] == 0 then
                bad(e.fanin,
                    string.format("fanin[%d] is 0 with agg_depth %d", i - 1, h.depth))
            end
        end
    end

    -- Payload: the rest of the datagram.
    local plen = replen - hlen
    local pcap = math.max(0, caplen - hlen)
    if plen > 0 then
        local ptree = tree
        if pcap > 0 then ptree = tree:add(f.payload, tvb(hlen, pcap)) end
        ptree:add(f.payload_len, plen):set_generated()
        if esize then
            local n = floor(plen / esize)
            local cnt = ptree:add(f.payload_count, n):set_generated()
            cnt:append_text(" x " .. DTYPES[h.dtype])
            if pcap < plen then
                ptree:add_proto_expert_info(e.snap,
                    string.format("Payload cut by the capture: %d of %d bytes captured", pcap, plen))
            end
            local show = math.min(n, floor(pcap / esize), arbor.prefs.max_values)
            local fields = { [0] = f.v_f16, [1] = f.v_bf16, [2] = f.v_f32, [3] = f.v_f64,
                [4] = f.v_i32, [5] = f.v_i64 }
            for i = 0, show - 1 do
                local r = tvb(hlen + i * esize, esize)
                local it
                if h.dtype == 0 then
                    it = ptree:add(fields[0], r, half_to_number(r:le_uint()))
                elseif h.dtype == 1 then
                    it = ptree:add(fields[1], r, bf16_to_number(r:le_uint()))
                else
                    it = ptree:add_le(fields[h.dtype], r)
                end
                it:prepend_text(string.format("[%d] ", i))
            end
            if show < n and show < floor(pcap / esize) then
                ptree:add(tvb(hlen + show * esize, pcap - show * esize),
                    string.format("... %d more elements", n - show))
            end
        end
    end

    if h.pvalid == 1 then
        if plen == 0 then
            bad(e.missing)
        elseif esize and plen % esize ~= 0 then
            bad(e.align, string.format(
                "Payload of %d bytes is not a whole number of %s elements (%d B each)",
                plen, DTYPES[h.dtype], esize))
        elseif plen > PAYLOAD_MAX then
            bad(e.too_long,
                string.format("Payload of %d bytes is longer than 8192", plen))
        end
    elseif plen > 0 then
        bad(e.unexpected,
            string.format("payload_valid = 0 but %d payload bytes follow", plen))
    end

    local info = summary(h, plen)
    tree:append_text(", " .. info)
    if malformed then info = info .. " [Malformed]" end
    pinfo.cols.info = info
    return caplen
end

-- The runtime header, then what it carries.
local function dissect_rt(tvb, pinfo, root)
    local len = tvb:len()
    local t = root:add(arbor_rt, tvb(0, math.min(len, RT_HDR)))
    if len < RT_HDR then
        t:add_proto_expert_info(rt_short)
        pinfo.cols.protocol = "Arbor"
        pinfo.cols.info = string.format("Arbor runtime [short: %d B] [Malformed]", len)
        return len
    end
    local kind = tvb(1, 1):uint()
    t:add(rf.kind, tvb(1, 1))
    local fl = t:add(rf.flags, tvb(2, 1))
    fl:add(rf.ce, tvb(2, 1))
    fl:add(rf.from_switch, tvb(2, 1))
    t:add(rf.dst_kind, tvb(3, 1))
    t:add(rf.job, tvb(4, 4))
    t:add(rf.channel, tvb(8, 2))
    t:add(rf.dst, tvb(10, 2))
    t:add(rf.src, tvb(12, 2))
    t:add(rf.sub, tvb(14, 2))
    local job, src = tvb(4, 4):uint(), tvb(12, 2):uint()
    local who = src == 65535 and "switch" or ("rank " .. src)
    local pre = string.format("job %d %s: ", job, who)
    if kind == 1 then
        if len > RT_HDR then
            dissect_arbor(tvb(RT_HDR):tvb(), pinfo, root)
        else
            t:add_proto_expert_info(rt_short)
        end
        pinfo.cols.info = pre .. tostring(pinfo.cols.info)
        return len
    end
    pinfo.cols.protocol = "Arbor"
    local name = RT_KINDS[kind] or string.format("kind %d", kind)
    if kind == 2 and len >= RT_HDR + 68 then
        t:add(rf.size, tvb(16, 4))
        t:add(rf.host_base, tvb(20, 4))
        t:add(rf.counter, tvb(24, 8))
        t:add(rf.nonce, tvb(32, 16))
        t:add(rf.fabric, tvb(48, 4))
        t:add(rf.mac, tvb(52, 32))
    elseif kind == 3 and len >= RT_HDR + 56 then
        t:add(rf.counter, tvb(16, 8))
        t:add(rf.nonce, tvb(24, 16))
        t:add(rf.mac, tvb(40, 32))
    elseif kind == 4 and len >= RT_HDR + 1 then
        t:add(rf.reason, tvb(16, 1))
        -- reason 6: the job's size and host base; 7: the address and port
        -- of the process already that rank
        local why = tvb(16, 1):uint()
        if why == 6 and len >= RT_HDR + 9 then
            t:add(rf.size, tvb(17, 4))
            t:add(rf.host_base, tvb(21, 4))
        elseif why == 7 and len >= RT_HDR + 7 then
            t:add(rf.other_addr, tvb(17, 4))
            t:add(rf.other_port, tvb(21, 2))
        end
    elseif kind == 6 and len >= RT_HDR + 8 then
        t:add(rf.size, tvb(16, 4))
        t:add(rf.host_base, tvb(20, 4))
    end
    pinfo.cols.info = pre .. name
    return len
end

function arbor.dissector(tvb, pinfo, root)
    if tvb:len() >= 1 and tvb(0, 1):uint() == RT_MAGIC then return dissect_rt(tvb, pinfo, root) end
    return dissect_arbor(tvb, pinfo, root)
end

-- ------------------------------------------------------------------
-- Registration
-- ------------------------------------------------------------------

local udp_table = DissectorTable.get("udp.port")
local current_port = 0

local function register_port(port)
    if current_port ~= 0 then udp_table:remove(current_port, arbor) end
    current_port = port
    if port ~= 0 then udp_table:add(port, arbor) end
end

function arbor.prefs_changed()
    if arbor.prefs.udp_port ~= current_port then register_port(arbor.prefs.udp_port) end
end

register_port(DEFAULT_PORT)
if udp_table.add_for_decode_as then udp_table:add_for_decode_as(arbor) end
