/*
 * fuzz_rt_config.c - libFuzzer target for the runtime's device
 * configuration parsers (src/runtime/config.c), the ones
 * srn_rt_config_load applies to user input:
 *   srn_rt_config_parse_list    SOFTRNIC_DEVICES="name=ip[,name=ip...]"
 *   srn_rt_config_parse_text    a SOFTRNIC_CONFIG file ("device NAME IP")
 *   srn_rt_config_parse_fabric  SOFTRNIC_FABRIC="A.B.C.D:PORT"
 *
 * Input: the first byte picks the parser ('0' list, '1' text, '2' fabric;
 * any byte modulo 3), the rest is the string (NUL-terminated here, as the
 * environment and load_file - which rejects embedded NULs - deliver it).
 *
 * Invariants:
 *   - list/text return -1 or a count in 1..max; every device then has a
 *     valid NUL-terminated name (1..63 of [A-Za-z0-9_.-]), a unicast
 *     address (not 0.0.0.0, multicast or broadcast), port 4791, the GUID
 *     srn_rt_guid_derive gives, no capture path, no fabric; names and
 *     addresses are unique; nothing beyond the count is written;
 *   - fabric returns 0 with AF_INET and a port in 1..65535, or -1 with the
 *     address all zero.
 * Any disagreement aborts. Rejected inputs print one line on stderr (the
 * parsers' diagnostics).
 *
 * Seeds: tests/fuzz/corpus/rt_config/ - the forms of docs/runtime.md and
 * tests/unit/test_runtime.c, plus edge cases.
 */
#include "runtime/rt_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAXDEV 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/* UBSan reports are findings: stop at the first (the libraries are built
 * with recoverable UBSan, which otherwise only prints) */
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

static void check_devs(const struct srn_rt_devcfg *c, int n, int max)
{
	FUZZ_CHECK(n == -1 || (n >= 1 && n <= max));
	for (int i = 0; i < n; i++) {
		const struct srn_rt_devcfg *d = &c[i];
		size_t len = strnlen(d->name, sizeof(d->name));
		FUZZ_CHECK(len >= 1 && len < sizeof(d->name));
		for (size_t k = 0; k < len; k++) {
			unsigned char ch = (unsigned char)d->name[k];
			FUZZ_CHECK(isalnum(ch) || ch == '_' || ch == '-' || ch == '.');
		}
		uint32_t a = ntohl(d->ip.s_addr);
		FUZZ_CHECK(a != INADDR_ANY && a != INADDR_BROADCAST && !IN_MULTICAST(a));
		FUZZ_CHECK(d->port == SRN_ROCEV2_UDP_PORT);
		FUZZ_CHECK(d->guid == srn_rt_guid_derive(d->name, d->ip) && d->guid != 0);
		FUZZ_CHECK(d->pcap_path[0] == 0 && d->fabric.sin_port == 0);
		for (int j = 0; j < i; j++) {
			FUZZ_CHECK(strcmp(c[j].name, d->name) != 0);
			FUZZ_CHECK(c[j].ip.s_addr != d->ip.s_addr);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 65536)
		return 0;
	int mode = data[0] % 3;
	char *s = malloc(size);        /* size - 1 bytes + NUL: exact for ASan */
	FUZZ_CHECK(s != NULL);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;

	if (mode == 2) {
		struct sockaddr_in sa;
		memset(&sa, 0x5a, sizeof(sa));
		int r = srn_rt_config_parse_fabric(s, "fuzz", &sa);
		static const struct sockaddr_in zero;
		if (r == 0)
			FUZZ_CHECK(sa.sin_family == AF_INET && sa.sin_port != 0);
		else
			FUZZ_CHECK(r == -1 && memcmp(&sa, &zero, sizeof(sa)) == 0);
		free(s);
		return 0;
	}

	/* one slot more than max, filled with a pattern: must stay untouched */
	struct srn_rt_devcfg c[MAXDEV + 1], guard;
	memset(c, 0xa5, sizeof(c));
	memset(&guard, 0xa5, sizeof(guard));
	int n = mode == 0 ? srn_rt_config_parse_list(s, "fuzz", c, MAXDEV)
			  : srn_rt_config_parse_text(s, "fuzz", c, MAXDEV);
	check_devs(c, n, MAXDEV);
	FUZZ_CHECK(memcmp(&c[MAXDEV], &guard, sizeof(guard)) == 0);
	free(s);
	return 0;
}
