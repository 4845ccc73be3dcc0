/* srn_test.c - runner for SRN_TEST cases (see srn_test.h). */
#include "srn_test.h"
#include <stdlib.h>

#define SRN_TEST_MAX 1024
static struct srn_test_case cases[SRN_TEST_MAX];
static int ncases;
int srn_test_failed_checks;

void srn_test_register(const char *name, srn_test_fn fn)
{
	if (ncases < SRN_TEST_MAX)
		cases[ncases++] = (struct srn_test_case){ name, fn };
}

int srn_test_main(void)
{
	int passed = 0, failed = 0;
	const char *only = getenv("SRN_TEST_ONLY");
	for (int i = 0; i < ncases; i++) {
		if (only && !strstr(cases[i].name, only))
			continue;
		int before = srn_test_failed_checks;
		cases[i].fn();
		if (srn_test_failed_checks == before) {
			passed++;
			printf("ok   %s\n", cases[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", cases[i].name);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
