#!/usr/bin/python3
"""Writes seed inputs for fuzz_rt_frame: whole IPv4+UDP+RoCEv2 datagrams as
the fabric daemon delivers them to a device (src/runtime/ipv4.c). The
RoCEv2 payloads are the wire_parse seeds (valid ICRC for 10.0.0.1 ->
10.0.0.2, UDP source port 0xC000, IP ID 0, DF), wrapped in the header the
runtime writes; then header variants (ECN, DSCP, TTL, ID, IP options), the
fabric HELLO echo and a few rejects. Run from the repository root.
"""
import os
import struct

OUT = "tests/fuzz/corpus/rt_frame"
WIRE = "tests/fuzz/corpus/wire_parse"
SRC = bytes([10, 0, 0, 1])
DST = bytes([10, 0, 0, 2])


def csum(h):
    if len(h) & 1:
        h += b"\0"
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def dgram(pay, tos=0, ttl=64, ip_id=0, flags=0x4000, proto=17, opts=b"",
          sport=0xC000, dport=4791, src=SRC, dst=DST, udplen=None, total=None, bad_csum=False):
    ihl = 5 + len(opts) // 4
    tot = ihl * 4 + 8 + len(pay) if total is None else total
    h = struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, tos, tot, ip_id, flags, ttl, proto, 0, src, dst) + opts
    c = csum(h)
    if bad_csum:
        c ^= 1
    h = h[:10] + struct.pack(">H", c) + h[12:]
    u = struct.pack(">HHHH", sport, dport, 8 + len(pay) if udplen is None else udplen, 0)
    return h + u + pay


def hello(self_ip):
    h = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20, 0, 0x4000, 64, 253, 0, self_ip, b"\0\0\0\0")
    return h[:10] + struct.pack(">H", csum(h)) + h[12:]


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    for name in sorted(os.listdir(WIRE)):
        with open(os.path.join(WIRE, name), "rb") as f:
            seeds["00_" + name] = dgram(f.read())
    with open(os.path.join(WIRE, "04_rc_send_only"), "rb") as f:
        send = f.read()
    seeds["10_ecn_ce"] = dgram(send, tos=3)
    seeds["11_dscp26_ect0"] = dgram(send, tos=(26 << 2) | 2)
    seeds["12_ttl1_id"] = dgram(send, ttl=1, ip_id=0x1234)
    seeds["13_no_df"] = dgram(send, flags=0)
    seeds["14_ip_options"] = dgram(send, opts=b"\x01\x01\x01\x00")   # NOP NOP NOP EOL
    seeds["15_empty_udp"] = dgram(b"")
    seeds["16_other_ports"] = dgram(send, sport=1, dport=4792)
    seeds["20_hello"] = hello(SRC)
    seeds["30_bad_csum"] = dgram(send, bad_csum=True)
    seeds["31_fragment"] = dgram(send, flags=0x2000)
    seeds["32_not_udp"] = dgram(send, proto=6)
    seeds["33_bad_udplen"] = dgram(send, udplen=9)
    seeds["34_bad_total"] = dgram(send, total=100)
    seeds["35_truncated"] = dgram(send)[:27]
    seeds["36_ipv6"] = b"\x60" + dgram(send)[1:]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
