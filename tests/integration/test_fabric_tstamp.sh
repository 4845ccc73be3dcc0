#!/bin/bash
# test_fabric_tstamp.sh - the fabric daemon takes a packet's arrival time
# from the kernel's receive time stamp (SO_TIMESTAMPNS), not from when it
# reads the packet: a daemon that does not run for a while must not turn
# what came meanwhile into a burst in its modelled queues (docs/fabric.md,
# "The daemon").
# A paced stream of 1 KiB packets at 100 Mbit/s goes from $SIP to $CIP
# through a 1g output port; the daemon is stopped (SIGSTOP) for ~10 ms five
# times while the stream runs. Had the stream entered the model when the
# daemon read it, each stop would put ~10 ms of it (~125 KB) into the queue
# at once; with the kernel's times it enters as it came, and the queue never
# holds more than a few packets. The daemon's own counters must show that it
# did read packets late (rx_late_max_ns).
. "$(dirname "$0")/lib.sh"

FABIP=${SIP%.1}.250
FABPORT=$(port)
SECS=2.5

# send FABRIC_IP FABRIC_PORT SRC DST SECS RATE_BPS LEN: valid IPv4/UDP packets
# of LEN bytes at RATE_BPS; a late sender skips ahead instead of catching up,
# so it never sends a burst of its own
send() {
	python3 - "$@" <<'EOF'
import socket, struct, sys, time
fab, port, src, dst, secs, rate, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
	sys.argv[4], float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
def csum(b):
	s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
	while s >> 16:
		s = (s & 0xffff) + (s >> 16)
	return ~s & 0xffff
hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, n, 0, 0x4000, 64, 17, 0,
		  socket.inet_aton(src), socket.inet_aton(dst))
hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
pkt = hdr + struct.pack("!HHHH", 49152, 4791, n - 20, 0) + bytes(n - 28)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
gap = int(n * 8 / rate * 1e9)
t = time.monotonic_ns()
end = t + int(secs * 1e9)
sent = 0
while t < end:
	s.sendto(pkt, (fab, port))
	sent += 1
	t += gap
	now = time.monotonic_ns()
	if now > t + gap:
		t = now              # late: skip ahead, no burst
	while time.monotonic_ns() < t:
		pass
print("sent", sent)
EOF
}

"$SOFTRNIC" fabric --listen "$FABIP:$FABPORT" port "$SIP" port "$CIP" rate=1g buffer=4m \
	>"$TMP/fabric.log" 2>&1 &
fp=$!
for _ in $(seq 50); do grep -qs "listening on" "$TMP/fabric.log" && break; sleep 0.1; done
send "$FABIP" "$FABPORT" "$SIP" "$CIP" "$SECS" 100e6 1024 >"$TMP/send.log" 2>&1 &
sp=$!
for _ in 1 2 3 4 5; do
	sleep 0.3
	kill -STOP $fp
	sleep 0.01
	kill -CONT $fp
done
wait $sp
check "the sender ran: $(cat "$TMP/send.log")" grep -q "^sent [0-9]" "$TMP/send.log"
sleep 0.2
kill -INT $fp
check "the fabric exits 0 on SIGINT" wait $fp
cat "$TMP/fabric.log"
# the counters at exit (the last print)
last=$(awk '/^fabric counters/ {b = ""} {b = b $0 "\n"} END {printf "%s", b}' "$TMP/fabric.log")
val() { grep -A2 "port $1 " <<<"$last" | grep "$2:" | grep -o " $3=[0-9]*" | cut -d= -f2; }
pin=$(val "$SIP" "in " pkts_in)
peak=$(val "$CIP" out queue_peak_bytes)
late=$(grep "daemon rx:" <<<"$last" | grep -o "rx_late_max_ns=[0-9]*" | cut -d= -f2)
check "the stream went through the switch: ${pin:-0} packets" test "${pin:-0}" -gt 10000
check "the daemon was stopped: it read a packet ${late:-0} ns after the kernel received it (>= 5 ms)" \
	test "${late:-0}" -ge 5000000
check "the stops did not become bursts: the output queue peaked at ${peak:-?} B < 16 KiB (~125 KB per stop if arrival = read time)" \
	test -n "$peak" -a "${peak:-0}" -lt 16384
finish
