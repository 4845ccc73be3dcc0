/*
 * fuzz_rt_frame.c - libFuzzer target for the runtime's parser of whole
 * IPv4+UDP+RoCEv2 datagrams received from the fabric daemon
 * (srn_rt_ipv4_udp_parse in src/runtime/ipv4.c, called by rx_round in
 * rt_dev.c on every datagram of the fabric backend).
 *
 * For arbitrary bytes (one datagram as recvmmsg hands it over):
 *   - the parser must not crash or read outside the datagram, and returns
 *     either a payload length >= 0 or one of its SRN_RT_IP_* codes;
 *   - on success: the payload offset is the IHL + 8 and payload offset +
 *     length is the datagram length; the header is IPv4, its checksum
 *     right, protocol UDP, not a fragment, UDP length consistent; the meta
 *     is exactly what the header says (IPv4-mapped GIDs, ports, ECN, DSCP,
 *     TTL, ID);
 *   - for a plain header (IHL 5, DF only, TTL != 0) the writer of the same
 *     file, fed the meta back (the path pcap and the fabric transmit side
 *     take), re-creates the same 28 header bytes except the UDP checksum,
 *     and the re-created datagram parses to the same meta;
 *   - the UDP payload then goes to the wire parser (srn_pkt_parse) as the
 *     runtime hands it to the core; it must stay within the payload.
 * Any disagreement aborts.
 *
 * Seeds: tests/fuzz/corpus/rt_frame/ - RoCEv2 datagrams as the fabric
 * delivers them (various opcodes, ECN, DSCP, TTL, IDs, IP options), a fabric
 * HELLO echo, and a few rejects (truncated, fragment, bad checksum, not UDP).
 */
#include "runtime/rt_internal.h"
#include "wire/srn_wire.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/* UBSan reports are findings: stop at the first (the libraries are built
 * with recoverable UBSan, which otherwise only prints) */
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the runtime never hands over more than SRN_RT_BUFSZ bytes; the
	 * parser must still cope with anything up to 64 KiB */
	if (size > 0xffff + 16)
		return 0;
	/* an exactly sized heap copy so ASan sees every overread */
	uint8_t *d = malloc(size ? size : 1);
	FUZZ_CHECK(d != NULL);
	if (size)
		memcpy(d, data, size);

	struct srn_pkt_meta m;
	size_t off = 0xdead;
	memset(&m, 0x5a, sizeof(m));
	int r = srn_rt_ipv4_udp_parse(d, size, &m, &off);
	FUZZ_CHECK(r >= SRN_RT_IP_HELLO);
	if (r == SRN_RT_IP_HELLO)
		FUZZ_CHECK(size == SRN_RT_HELLO_LEN && d[9] == SRN_RT_HELLO_PROTO &&
			   srn_ipv4_csum(d, 20) == 0);
	if (r < 0) {
		FUZZ_CHECK(off == 0xdead);      /* nothing claimed on failure */
		free(d);
		return 0;
	}

	/* what a success means */
	size_t ihl = (size_t)(d[0] & 0x0f) * 4;
	FUZZ_CHECK((d[0] >> 4) == 4 && ihl >= 20);
	FUZZ_CHECK(off == ihl + 8 && off + (size_t)r == size);
	FUZZ_CHECK(srn_get16(d + 2) == size && srn_ipv4_csum(d, ihl) == 0);
	FUZZ_CHECK(d[9] == 17 && (srn_get16(d + 6) & 0x3fff) == 0);
	FUZZ_CHECK(srn_get16(d + ihl + 4) == (size_t)r + 8);

	/* the meta is the header */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	FUZZ_CHECK(memcmp(m.src_gid, mapped, 12) == 0 && memcmp(m.src_gid + 12, d + 12, 4) == 0);
	FUZZ_CHECK(memcmp(m.dst_gid, mapped, 12) == 0 && memcmp(m.dst_gid + 12, d + 16, 4) == 0);
	FUZZ_CHECK(m.l4.src == srn_get16(d + ihl) && m.l4.dst == srn_get16(d + ihl + 2));
	FUZZ_CHECK(m.ecn == (d[1] & 3) && m.dscp == (d[1] >> 2) && m.dscp <= 0x3f);
	FUZZ_CHECK(m.ttl == d[8] && m.l4.ip_id == srn_get16(d + 4));

	/* round trip through the writer for the header the runtime itself sends */
	if (ihl == 20 && srn_get16(d + 6) == 0x4000 && d[8] != 0) {
		struct srn_ip_info ip;
		srn_roce_ip_info(&ip, &m);
		uint8_t *w = malloc(size);
		FUZZ_CHECK(w != NULL);
		FUZZ_CHECK(srn_ipv4_udp_write(w, size, &ip, (size_t)r) == SRN_RT_IPUDP_HDR);
		/* all but the checksums: an IPv4 checksum of 0xffff and of 0x0000
		 * are the same ones'-complement zero, both verify, and the writer
		 * computes 0x0000 (fuzzing found such a header) */
		FUZZ_CHECK(memcmp(w, d, 10) == 0 && memcmp(w + 12, d + 12, 14) == 0);
		FUZZ_CHECK(srn_ipv4_csum(w, 20) == 0);
		FUZZ_CHECK(srn_get16(w + 26) == 0);
		memcpy(w + 28, d + 28, (size_t)r);
		struct srn_pkt_meta m2;
		size_t off2 = 0;
		FUZZ_CHECK(srn_rt_ipv4_udp_parse(w, size, &m2, &off2) == r && off2 == off);
		FUZZ_CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
		free(w);
	}

	/* the payload as the core gets it */
	struct srn_pkt p;
	int pr = srn_pkt_parse(&p, d + off, (size_t)r);
	FUZZ_CHECK(pr <= 0);
	if (pr == SRN_WIRE_OK)
		FUZZ_CHECK(p.payload >= d + off && p.payload + p.paylen <= d + size);
	free(d);
	return 0;
}
