/*
 * pcap.c - packet capture of a runtime device (SOFTRNIC_PCAP / devcfg.pcap_path).
 *
 * The kernel adds the IP and UDP headers, so the capture synthesises them
 * exactly as the kernel sends them (src/wire/ipv4.c: IPv4, IHL 5, TOS = DSCP|ECN of
 * the packet, DF set, identification 0 - see udp.c -, TTL, protocol UDP, a
 * correct header checksum; UDP ports and length with a zero checksum, which
 * RoCEv2 allows) behind an Ethernet header with locally administered MACs
 * derived from the IP addresses (02:00:a:b:c:d). Written with libpcap as
 * DLT_EN10MB so Wireshark/tshark dissect the RoCEv2 packets (UDP 4791).
 * Timestamps are CLOCK_REALTIME. Not thread-safe by itself: the runtime
 * calls it under the device lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>

#include "rt_internal.h"

#define SNAPLEN 65535

struct srn_rt_pcap {
	pcap_t *p;
	pcap_dumper_t *d;
	uint8_t frame[SRN_RT_FRAME_HDR + SRN_RT_BUFSZ];
};

void srn_rt_pcap_mac(uint8_t mac[6], const uint8_t ip4[4])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	memcpy(mac + 2, ip4, 4);
}

size_t srn_rt_pcap_frame(uint8_t *out, size_t cap, const struct srn_ip_info *ip,
			 const uint8_t *pkt, size_t len)
{
	size_t total = SRN_RT_FRAME_HDR + len;
	if (total > cap || 20 + 8 + len > 0xffff)
		return 0;
	uint8_t *eth = out;

	/* Ethernet */
	srn_rt_pcap_mac(eth, ip->dst + 12);
	srn_rt_pcap_mac(eth + 6, ip->src + 12);
	srn_put16(eth + 12, 0x0800);
	/* IPv4 + UDP exactly as the kernel sends them (src/wire/ipv4.c) */
	srn_ipv4_udp_write(out + 14, SRN_RT_IPUDP_HDR, ip, len);
	memcpy(out + SRN_RT_FRAME_HDR, pkt, len);
	return total;
}

struct srn_rt_pcap *srn_rt_pcap_open(const char *path)
{
	struct srn_rt_pcap *pc = calloc(1, sizeof *pc);
	if (!pc) {
		fprintf(stderr, "softrnic: pcap %s: out of memory\n", path);
		return NULL;
	}
	pc->p = pcap_open_dead(DLT_EN10MB, SNAPLEN);
	if (!pc->p) {
		fprintf(stderr, "softrnic: pcap %s: pcap_open_dead failed\n", path);
		free(pc);
		return NULL;
	}
	pc->d = pcap_dump_open(pc->p, path);
	if (!pc->d) {
		fprintf(stderr, "softrnic: cannot open capture file %s: %s\n", path,
			pcap_geterr(pc->p));
		pcap_close(pc->p);
		free(pc);
		return NULL;
	}
	return pc;
}

void srn_rt_pcap_write(struct srn_rt_pcap *pc, const struct srn_ip_info *ip,
		       const uint8_t *pkt, size_t len)
{
	size_t n = srn_rt_pcap_frame(pc->frame, sizeof pc->frame, ip, pkt, len);
	if (!n)
		return;
	uint64_t t = srn_rt_realtime_ns();
	struct pcap_pkthdr h;
	memset(&h, 0, sizeof h);
	h.ts.tv_sec = (time_t)(t / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000ull / 1000);
	h.caplen = (bpf_u_int32)(n < SNAPLEN ? n : SNAPLEN);
	h.len = (bpf_u_int32)n;
	pcap_dump((u_char *)pc->d, &h, pc->frame);
}

void srn_rt_pcap_flush(struct srn_rt_pcap *pc)
{
	if (pc)
		pcap_dump_flush(pc->d);
}

void srn_rt_pcap_close(struct srn_rt_pcap *pc)
{
	if (!pc)
		return;
	pcap_dump_flush(pc->d);
	pcap_dump_close(pc->d);
	pcap_close(pc->p);
	free(pc);
}
