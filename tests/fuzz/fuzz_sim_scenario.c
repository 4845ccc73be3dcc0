/*
 * fuzz_sim_scenario.c - libFuzzer target for the simulator's scenario
 * language (src/sim/scen.c and its value parsers in units.c), the text
 * `softrnic sim` reads from a scenario file and its -D overrides.
 *
 * For arbitrary bytes (a scenario text, not NUL-terminated):
 *   - srn_sim_scen_parse must not crash or read outside the text; it
 *     returns 0, SRN_EINVAL (with a NUL-terminated message) or SRN_ENOMEM;
 *   - on success every value is in the range docs/sim.md gives: 2..1024
 *     hosts, 1..4096 flows between two different existing hosts starting
 *     before the end, message 1..1g, depth 1..1024, MTU a power of two in
 *     256..4096, 0 < sample <= duration, QP timeout <= 31 and retry <= 7,
 *     a known CC; every resolved link has a rate in 1k..10t, probabilities
 *     in [0, 1], kmin <= kmax when marking, room for one packet, a delay of
 *     at most 1 s; the metrics window is non-empty and inside the run;
 *   - a text that parsed parses again, appended to a fresh scenario, to
 *     the same result (the parser is deterministic and keeps no state
 *     outside the scenario);
 *   - srn_sim_scen_free releases everything (LeakSanitizer checks).
 * Any disagreement aborts.
 *
 * Seeds: tests/fuzz/corpus/sim_scenario/ - the scenarios of sim/scenarios
 * and small ones exercising every statement, plus edge cases.
 */
#include "sim/srn_sim.h"
#include "core/srn_core.h"

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

static void check_ok(const struct srn_sim_scen *sc)
{
	FUZZ_CHECK(sc->nhosts >= 2 && sc->nhosts <= SRN_SIM_MAX_HOSTS && sc->host != NULL);
	FUZZ_CHECK(sc->nflows >= 1 && sc->nflows <= SRN_SIM_MAX_FLOWS && sc->nflows <= sc->flow_cap);
	FUZZ_CHECK(sc->mtu >= 256 && sc->mtu <= 4096 && (sc->mtu & (sc->mtu - 1)) == 0);
	FUZZ_CHECK(sc->sample > 0 && sc->sample <= sc->duration);
	FUZZ_CHECK(sc->qp_timeout <= 31 && sc->qp_retry <= 7);
	FUZZ_CHECK(sc->inflight <= (1u << 23) && sc->ack_coalesce <= 65536);
	FUZZ_CHECK((unsigned)sc->cc < SRN_SIM_CC_N);
	for (uint32_t i = 0; i < sc->nflows; i++) {
		const struct srn_sim_flow_cfg *f = &sc->flow[i];
		FUZZ_CHECK(f->src < sc->nhosts && f->dst < sc->nhosts && f->src != f->dst);
		FUZZ_CHECK(f->start < sc->duration);
		FUZZ_CHECK(f->msg >= 1 && f->msg <= (1u << 30));
		FUZZ_CHECK(f->depth >= 1 && f->depth <= 1024);
		FUZZ_CHECK(f->line >= 1);
	}
	for (uint32_t h = 0; h < sc->nhosts; h++) {
		for (int d = 0; d < 2; d++) {
			struct srn_sim_link_cfg l;
			srn_sim_scen_link(sc, h, (enum srn_sim_dir)d, &l);
			FUZZ_CHECK(l.rate_bps >= 1000 && l.rate_bps <= 10000000000000ull);
			FUZZ_CHECK(l.delay <= 1000000000ull);
			FUZZ_CHECK(l.loss >= 0 && l.loss <= 1 && l.pmax >= 0 && l.pmax <= 1);
			FUZZ_CHECK(!l.kmax || l.kmin <= l.kmax);
			FUZZ_CHECK(!l.buffer || l.buffer >= sc->mtu + 128);
		}
	}
	srn_ts t0, t1;
	srn_sim_scen_window(sc, &t0, &t1);
	FUZZ_CHECK(t0 < t1 && t1 <= sc->duration);
}

static bool same(const struct srn_sim_scen *a, const struct srn_sim_scen *b)
{
	if (a->nhosts != b->nhosts || a->nflows != b->nflows || a->cc != b->cc ||
	    a->mtu != b->mtu || a->duration != b->duration || a->sample != b->sample ||
	    a->win_start != b->win_start || a->win_end != b->win_end || a->seed != b->seed ||
	    a->qp_timeout != b->qp_timeout || a->qp_retry != b->qp_retry ||
	    a->inflight != b->inflight || a->ack_coalesce != b->ack_coalesce)
		return false;
	if (memcmp(&a->dflt, &b->dflt, sizeof(a->dflt)) != 0)
		return false;
	if (memcmp(a->host, b->host, a->nhosts * sizeof(*a->host)) != 0)
		return false;
	for (uint32_t i = 0; i < a->nflows; i++) {       /* field by field: padding */
		const struct srn_sim_flow_cfg *f = &a->flow[i], *g = &b->flow[i];
		if (f->src != g->src || f->dst != g->dst || f->start != g->start ||
		    f->size != g->size || f->msg != g->msg || f->depth != g->depth ||
		    f->line != g->line)
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	/* an exactly sized copy, not NUL-terminated: ASan sees any overread */
	char *text = malloc(size ? size : 1);
	FUZZ_CHECK(text != NULL);
	if (size)
		memcpy(text, data, size);

	struct srn_sim_scen sc;
	char err[256];
	memset(err, 'x', sizeof(err));
	srn_sim_scen_init(&sc);
	int rc = srn_sim_scen_parse(&sc, text, size, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == SRN_EINVAL || rc == SRN_ENOMEM);
	if (rc == SRN_EINVAL)
		FUZZ_CHECK(memchr(err, 0, sizeof(err)) != NULL && err[0] != 0);
	if (rc == 0) {
		check_ok(&sc);
		struct srn_sim_scen again;
		srn_sim_scen_init(&again);
		FUZZ_CHECK(srn_sim_scen_parse(&again, text, size, err, sizeof(err)) == 0);
		FUZZ_CHECK(same(&sc, &again));
		srn_sim_scen_free(&again);
	}
	srn_sim_scen_free(&sc);
	FUZZ_CHECK(sc.host == NULL && sc.flow == NULL && sc.nflows == 0);
	free(text);
	return 0;
}
