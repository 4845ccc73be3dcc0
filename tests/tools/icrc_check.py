#!/usr/bin/python3
"""icrc_check.py - verify the RoCEv2 ICRC of every UDP/4791 packet in a pcap.

Usage: icrc_check.py [-q] FILE.pcap

The ICRC is recomputed with scapy's own RoCE code (scapy.contrib.roce,
BTH.compute_icrc), not softrnic's, so this is an independent check of what
softrnic put on the wire. Link types: Ethernet (captures on `lo` are
Ethernet), Linux cooked (SLL/SLL2) and raw IP, whatever scapy's rdpcap reads.

Prints one line per RoCE packet and then "N packets, N bad ICRC".
Exit status: 0 if every RoCE packet has a good ICRC, 1 if any is bad or the
file has no (checkable) RoCE packet, 2 on a usage or read error.

IPv6 packets are reported as SKIP: scapy's ICRC code supports IPv4 only.
Runs with the system python (/usr/bin/python3 with python3-scapy).
"""
import logging
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import IP, IPv6, UDP, rdpcap, raw  # noqa: E402
from scapy.contrib.roce import BTH, _bth_opcodes  # noqa: E402

ROCEV2_PORT = 4791


def roce_udp(pkt):
    """The UDP layer of a RoCEv2 packet, or None."""
    if UDP not in pkt:
        return None
    udp = pkt[UDP]
    return udp if udp.dport == ROCEV2_PORT else None


def check_packet(pkt):
    """Return (status, description) with status 'OK', 'BAD' or 'SKIP'."""
    udp = roce_udp(pkt)
    if IPv6 in pkt and IP not in pkt:
        return "SKIP", "IPv6 (scapy computes the ICRC for IPv4 only)"
    ip = pkt[IP]
    if ip.flags.MF or ip.frag:
        return "SKIP", "IP fragment"
    body = raw(udp.payload)
    if len(body) < 16:
        return "BAD", "UDP payload of %d bytes is shorter than BTH + ICRC" % len(body)
    # Re-dissect from the IP header so the BTH layer (and its ICRC field)
    # comes from scapy's own RoCE dissector, independent of the link type.
    fresh = IP(raw(ip))
    if BTH not in fresh:
        return "BAD", "scapy did not dissect a BTH"
    bth = fresh[BTH]
    computed = bth.compute_icrc(None)
    stored = body[-4:]
    op = body[0]
    desc = "%s:%d -> %s:%d id %d opcode 0x%02x (%s) qpn 0x%06x psn 0x%06x len %d icrc %s%s" % (
        ip.src, udp.sport, ip.dst, udp.dport, ip.id, op,
        _bth_opcodes.get(op, "unknown"), bth.dqpn, bth.psn, len(body),
        stored.hex(), "" if computed == stored else " expected " + computed.hex())
    return ("OK" if computed == stored else "BAD"), desc


def main(argv):
    args = [a for a in argv[1:] if a != "-q"]
    quiet = "-q" in argv[1:]
    if len(args) != 1:
        sys.stderr.write("usage: icrc_check.py [-q] FILE.pcap\n")
        return 2
    try:
        pkts = rdpcap(args[0])
    except Exception as e:  # noqa: BLE001 - OSError or scapy's own exception types
        sys.stderr.write("icrc_check: cannot read %s: %s\n" % (args[0], e))
        return 2

    checked = bad = skipped = 0
    for i, pkt in enumerate(pkts, 1):
        if roce_udp(pkt) is None:
            continue
        status, desc = check_packet(pkt)
        if status == "SKIP":
            skipped += 1
        else:
            checked += 1
            bad += status == "BAD"
        if not quiet or status != "OK":
            print("#%d %s %s" % (i, status, desc))

    print("%d packets, %d bad ICRC" % (checked, bad) +
          (" (%d skipped)" % skipped if skipped else ""))
    if checked == 0:
        sys.stderr.write("icrc_check: no checkable RoCEv2 (UDP/%d) packets in %s\n"
                         % (ROCEV2_PORT, args[0]))
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
