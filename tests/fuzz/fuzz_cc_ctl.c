/*
 * fuzz_cc_ctl.c - libFuzzer target for the parsers of external input in the
 * runtime's congestion-control setup (src/runtime/cc_ctl.c):
 *   srn_cc_unhex       the key file (SOFTRNIC_CC_KEY) and the .sig file of
 *                      every algorithm `softrnic cc load` asks to load;
 *   parse_rate_kbps    SOFTRNIC_CC_RATE (static; reached through
 *                      srn_rt_cc_config with neither SOFTRNIC_CC nor
 *                      SOFTRNIC_CC_KEY set, where it returns before it
 *                      touches the device).
 * The control socket's request ("LOAD /abs/path.so") is matched inline in
 * its thread (a strncmp on a NUL-terminated buffer) and not reachable
 * without the socket; it is not fuzzed here.
 *
 * Input: first byte even -> srn_cc_unhex of the rest into first-byte / 2
 * % 65 bytes (32 = the key and MAC length); odd -> the rest, up to the first
 * NUL, as SOFTRNIC_CC_RATE.
 *
 * Invariants: unhex succeeds exactly when the text, less trailing '\n',
 * '\r' and ' ', is 2n hex digits, and then srn_cc_hex gives the text back
 * (lower case) and nothing beyond out[n) is written; the rate gives 0 or
 * -EINVAL. UBSan reports abort (a float-to-integer overflow is a finding).
 *
 * Seeds: tests/fuzz/corpus/cc_ctl/.
 */
#include "runtime/cc_ctl.h"
#include "runtime/rt_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

#define RATE_MAX 4096
static char rate_env[sizeof("SOFTRNIC_CC_RATE=") + RATE_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("SOFTRNIC_CC");
	unsetenv("SOFTRNIC_CC_KEY");
	/* putenv keeps the buffer: each input rewrites it, nothing accumulates */
	strcpy(rate_env, "SOFTRNIC_CC_RATE=");
	putenv(rate_env);
	return 0;
}

static bool want_unhex(const char *s, size_t len, size_t n)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (len != 2 * n)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 65536)
		return 0;
	const char *s = (const char *)data + 1;
	size_t len = size - 1;

	if ((data[0] & 1) == 0) {
		size_t n = (size_t)(data[0] / 2) % 65;
		char *copy = malloc(len ? len : 1);     /* exact size for ASan */
		FUZZ_CHECK(copy != NULL);
		memcpy(copy, s, len);
		uint8_t out[65 + 8];
		memset(out, 0xa5, sizeof(out));
		int r = srn_cc_unhex(copy, len, out, n);
		FUZZ_CHECK(r == 0 || r == -1);
		FUZZ_CHECK((r == 0) == want_unhex(copy, len, n));
		for (size_t i = n; i < sizeof(out); i++)
			FUZZ_CHECK(out[i] == 0xa5);
		if (r == 0) {
			char hex[2 * 65 + 1];
			srn_cc_hex(out, n, hex);
			for (size_t i = 0; i < 2 * n; i++)
				FUZZ_CHECK(hex[i] == tolower((unsigned char)copy[i]));
			FUZZ_CHECK(hex[2 * n] == 0);
		}
		free(copy);
		return 0;
	}

	size_t k = strnlen(s, len < RATE_MAX ? len : RATE_MAX - 1);
	char *v = rate_env + strlen("SOFTRNIC_CC_RATE=");
	memcpy(v, s, k);
	v[k] = 0;
	struct srn_rt_devcfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.name, "fuzz");
	struct srn_dev_cfg dc;
	memset(&dc, 0, sizeof(dc));
	int r = srn_rt_cc_config(NULL, &cfg, &dc);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK(dc.cc == NULL);
	return 0;
}
