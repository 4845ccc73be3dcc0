/*
 * fuzz_fabric_config.c - libFuzzer target for the fabric configuration
 * language (src/fabric/conf*.c) and for the switch model run with whatever
 * configuration it accepts.
 *
 * For arbitrary bytes (a configuration text):
 *   - srn_fabric_conf_parse must not crash or read outside the input, and
 *     must leave a NUL-terminated message on failure;
 *   - on success, every port it resolves (and the default) must pass
 *     srn_fabric_port_cfg_check and be accepted by srn_fabric_add_port;
 *   - a switch built from it must carry a short burst of packets between
 *     its ports with every packet accounted for (out + dropped = in + dups)
 *     and no slot leaked.
 * Any disagreement aborts.
 *
 * Seeds: tests/fuzz/corpus/fabric_config/ - the examples of docs/fabric.md.
 */
#include "fabric/srn_fabric.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

static uint16_t csum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i < n; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* an IPv4/UDP/BTH packet of len bytes from src to dst, ECT(0) */
static size_t mkpkt(uint8_t *b, uint32_t src, uint32_t dst, size_t len)
{
	memset(b, 0xab, len);
	b[0] = 0x45; b[1] = 2; b[2] = (uint8_t)(len >> 8); b[3] = (uint8_t)len;
	b[4] = b[5] = 0; b[6] = 0x40; b[7] = 0; b[8] = 64; b[9] = 17; b[10] = b[11] = 0;
	srn_put32(b + 12, src);
	srn_put32(b + 16, dst);
	srn_put16(b + 10, csum(b, 20));
	srn_put16(b + 20, 49152);
	srn_put16(b + 22, 4791);
	srn_put16(b + 24, (uint16_t)(len - 20));
	srn_put16(b + 26, 0);
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct srn_fabric_conf conf;
	char err[256];
	memset(err, 'x', sizeof(err));
	srn_fabric_conf_init(&conf);
	if (srn_fabric_conf_parse(&conf, (const char *)data, size, err, sizeof(err)) < 0) {
		FUZZ_CHECK(memchr(err, 0, sizeof(err)) != NULL);
		return 0;
	}
	struct srn_fabric_port_cfg pc;
	srn_fabric_conf_port_cfg(&conf, 0xffffffffu, &pc); /* an unlisted address: the default */
	FUZZ_CHECK(srn_fabric_port_cfg_check(&pc, NULL, 0) == 0);

	struct srn_fabric_cfg cfg;
	srn_fabric_cfg_default(&cfg);
	srn_fabric_conf_switch_cfg(&conf, &cfg);
	cfg.nslots = cfg.nslots > 256 ? 256 : cfg.nslots;       /* keep runs small */
	cfg.max_ports = cfg.max_ports > 64 ? 64 : cfg.max_ports;
	struct srn_fabric *f;
	FUZZ_CHECK(srn_fabric_new(&f, &cfg, NULL) == 0);
	uint32_t nports = 0;
	for (uint32_t i = 0; i < conf.nports; i++) {
		srn_fabric_conf_port_cfg(&conf, conf.port[i].ipv4, &pc);
		FUZZ_CHECK(srn_fabric_port_cfg_check(&pc, NULL, 0) == 0);
		int p = srn_fabric_add_port(f, conf.port[i].ipv4, &pc);
		FUZZ_CHECK(p >= 0 || (p == SRN_ENOMEM && nports == cfg.max_ports));
		nports += p >= 0;
	}
	if (nports < 2) {
		srn_fabric_conf_port_cfg(&conf, 0xfffffffeu, &pc);
		if (srn_fabric_add_port(f, 0xfffffffeu, &pc) >= 0)
			nports++;
		if (srn_fabric_add_port(f, 0xfffffffdu, &pc) >= 0)
			nports++;
	}
	static uint8_t pkt[9216], out[9216];
	uint64_t sent = 0;
	if (nports >= 2) {
		for (uint32_t i = 0; i < 64; i++) {
			uint32_t a = i % nports, b = (i / 2 + 1) % nports;
			size_t len = 60 + (i * 37) % 1400;
			if (len > cfg.slot_size)
				len = cfg.slot_size;
			mkpkt(pkt, srn_fabric_port_ipv4(f, a), srn_fabric_port_ipv4(f, b), len);
			srn_fabric_input(f, a, pkt, len, (srn_ts)i * 1000);
			sent++;
		}
		uint32_t port;
		for (int guard = 0; guard < 100000; guard++) {
			srn_ts t = srn_fabric_expiry(f);
			if (t == SRN_TS_NEVER)
				break;
			while (srn_fabric_poll(f, t, &port, out, sizeof(out)) > 0)
				FUZZ_CHECK(port < nports);
		}
		FUZZ_CHECK(srn_fabric_expiry(f) == SRN_TS_NEVER);
		FUZZ_CHECK(srn_fabric_slots_used(f) == 0);
		uint64_t in = 0;
		for (uint32_t p = 0; p < nports; p++) {
			for (int d = 0; d < 2; d++) {
				const uint64_t *c = srn_fabric_counters(f, p, (enum srn_fabric_dir)d);
				uint64_t drops = 0;
				for (int k = SRN_FABRIC_CTR_DROP_DOWN; k <= SRN_FABRIC_CTR_DROP_NOROUTE; k++)
					drops += c[k];
				FUZZ_CHECK(c[SRN_FABRIC_CTR_PKTS_IN] + c[SRN_FABRIC_CTR_DUPS] ==
					   c[SRN_FABRIC_CTR_PKTS_OUT] + drops);
				if (d == SRN_FABRIC_IN)
					in += c[SRN_FABRIC_CTR_PKTS_IN];
			}
		}
		FUZZ_CHECK(in == sent);
	}
	srn_fabric_del(f);
	return 0;
}
