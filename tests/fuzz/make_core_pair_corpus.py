#!/usr/bin/python3
"""Writes seed inputs for fuzz_core_pair (record format in fuzz_core_pair.c).

Each seed is a short, meaningful exchange: requests to side 1's QPs at PSN 0
(the harness starts every QP at PSN 0), responses to side 0's requester, and
the regions' fixed I/O address 0x100000 with rkey 0x100 (first MR of side 1:
index 1 << 8, generation 0). Run from the repository root.
"""
import os
import struct

OUT = "tests/fuzz/corpus/core_pair"
IOVA = 0x100000


def bth(op, psn, ackreq=True, pad=0, se=False):
    b1 = (0x80 if se else 0) | (pad << 4)
    return struct.pack(">BBHBBHBBH", op, b1, 0xFFFF, 0, 0, 0, 0x80 if ackreq else 0,
                       psn >> 16, psn & 0xFFFF)


def reth(va, rkey, ln):
    return struct.pack(">QII", va, rkey, ln)


def aeth(syn, msn):
    return struct.pack(">I", (syn << 24) | msn)


def rec(side, qsel, pkt, dt=1, ce=False):
    ctl = side | (qsel << 1) | (8 if ce else 0)
    assert len(pkt) <= 255
    return bytes([ctl, dt, len(pkt)]) + pkt


RC, UC, UD = 1, 2, 3
seeds = {
    "send_only": rec(1, RC, bth(0x04, 0) + b"A" * 16),
    "send_first_last": rec(1, RC, bth(0x00, 0) + b"B" * 64) + rec(1, RC, bth(0x02, 1) + b"C" * 8),
    "write_only": rec(1, RC, bth(0x0A, 0) + reth(IOVA + 8, 0x100, 16) + b"D" * 16),
    "write_bad_rkey": rec(1, RC, bth(0x0A, 0) + reth(IOVA, 0x999, 16) + b"E" * 16),
    "read_req": rec(1, RC, bth(0x0C, 0) + reth(IOVA, 0x100, 100)),
    "read_dup": rec(1, RC, bth(0x0C, 0) + reth(IOVA, 0x100, 100)) * 2,
    "fetch_add": rec(1, RC, bth(0x14, 0) + struct.pack(">QIQQ", IOVA + 64, 0x100, 5, 0)),
    "cmp_swap_misaligned": rec(1, RC, bth(0x13, 0) + struct.pack(">QIQQ", IOVA + 3, 0x100, 5, 0)),
    "oos": rec(1, RC, bth(0x04, 5) + b"F" * 4) + rec(1, RC, bth(0x04, 6) + b"G" * 4),
    "ack": rec(0, RC, bth(0x11, 0) + aeth(0x00, 1), dt=10),
    "nak_seq": rec(0, RC, bth(0x11, 0) + aeth(0x60, 0), dt=10),
    "rnr_nak": rec(0, RC, bth(0x11, 0) + aeth(0x21, 0), dt=200),
    "read_resp": rec(0, RC, bth(0x10, 7) + aeth(0, 3) + b"H" * 32),
    "atomic_ack": rec(0, RC, bth(0x12, 13) + aeth(0, 4) + struct.pack(">Q", 42)),
    "uc_send": rec(1, UC, bth(0x24, 0) + b"I" * 12) + rec(1, UC, bth(0x21, 9) + b"J" * 12),
    "ud_send": rec(1, UD, bth(0x64, 77) + struct.pack(">II", 0x11111111, 3) + b"K" * 20),
    "cnp": rec(1, RC, bth(0x81, 0, ackreq=False) + bytes(16), ce=True),
    "timeouts": rec(1, RC, bth(0x04, 0) + b"L" * 4, dt=255) * 8,
}
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
