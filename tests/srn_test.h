/*
 * srn_test.h - the minimal test framework of softrnic's unit tests.
 *
 *   SRN_TEST(test_psn_12_out_of_sequence_nak_once) { ... CHECK(x == 1); }
 *   int main(void) { return srn_test_main(); }
 *
 * Each CHECK that fails prints file:line and the expression and marks the
 * test failed; the program prints "N passed, N failed" and exits non-zero
 * on any failure.
 */
#ifndef SRN_TEST_H
#define SRN_TEST_H
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <inttypes.h>

typedef void (*srn_test_fn)(void);
struct srn_test_case { const char *name; srn_test_fn fn; };
void srn_test_register(const char *name, srn_test_fn fn);
int srn_test_main(void);
extern int srn_test_failed_checks;

#define SRN_TEST(name) \
	static void name(void); \
	__attribute__((constructor)) static void name##_reg(void) { srn_test_register(#name, name); } \
	static void name(void)

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	srn_test_failed_checks++; } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); if (_a != _b) { \
	fprintf(stderr, "  %s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, _a, _b); \
	srn_test_failed_checks++; } } while (0)
#define REQUIRE(cond) do { if (!(cond)) { \
	fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
	srn_test_failed_checks++; return; } } while (0)
#endif
