/*
 * test_fabric_conf.c - the fabric configuration language (src/fabric/conf*.c):
 * the documented examples parse to the right numbers, defaults and
 * direction prefixes resolve as documented, and bad tokens are rejected
 * with a message naming the line and the token.
 */
#include "fabric/srn_fabric.h"
#include "srn_test.h"

#define US 1000ull
#define MS 1000000ull
#define S  1000000000ull

static const char example[] =
	"# the example of docs/fabric.md\n"
	"seed 42\n"
	"port 127.0.0.1 rate=10g buffer=256k kmin=20k kmax=200k pmax=0.2 loss=0.01 "
	"ge=0.01,0.3,0,0.5 dup=0.01 corrupt=0.005 delay=10us jitter=5us reorder=0.02,50us "
	"paths=4:0us,20us,40us,80us down=2s+500ms\n";

static int parse(struct srn_fabric_conf *c, const char *text, char *err, size_t errlen)
{
	srn_fabric_conf_init(c);
	err[0] = 0;
	return srn_fabric_conf_parse(c, text, strlen(text), err, errlen);
}

SRN_TEST(test_fabric_conf_example)
{
	static struct srn_fabric_conf c;
	char err[256];
	REQUIRE(parse(&c, example, err, sizeof(err)) == 0);
	CHECK(c.seed_set);
	CHECK_EQ(c.seed, 42);
	CHECK_EQ(c.nports, 1);
	struct srn_fabric_port_cfg p;
	srn_fabric_conf_port_cfg(&c, 0x7f000001, &p);
	const struct srn_fabric_link_cfg *o = &p.link[SRN_FABRIC_OUT], *i = &p.link[SRN_FABRIC_IN];
	CHECK_EQ(o->rate_bps, 10000000000ull);
	CHECK_EQ(o->buffer, 262144);
	CHECK_EQ(o->kmin, 20480);
	CHECK_EQ(o->kmax, 204800);
	CHECK(o->pmax == 0.2);
	CHECK(o->loss == 0.01);
	CHECK(o->ge.p_gb == 0.01 && o->ge.p_bg == 0.3 && o->ge.loss_good == 0 && o->ge.loss_bad == 0.5);
	CHECK_EQ(o->ge.idle_step, SRN_FABRIC_GE_IDLE_STEP);    /* the default */
	CHECK(o->dup == 0.01);
	CHECK(o->corrupt == 0.005);
	CHECK_EQ(o->delay, 10 * US);
	CHECK_EQ(o->jitter, 5 * US);
	CHECK(o->reorder.p == 0.02);
	CHECK_EQ(o->reorder.delay, 50 * US);
	CHECK_EQ(o->paths.n, 4);
	CHECK_EQ(o->paths.delay[0], 0);
	CHECK_EQ(o->paths.delay[1], 20 * US);
	CHECK_EQ(o->paths.delay[2], 40 * US);
	CHECK_EQ(o->paths.delay[3], 80 * US);
	CHECK_EQ(o->down.start, 2 * S);
	CHECK_EQ(o->down.len, 500 * MS);
	CHECK_EQ(o->down.period, 0);
	/* no prefix: OUT only, except down which is both */
	CHECK_EQ(i->rate_bps, 0);
	CHECK(i->loss == 0);
	CHECK_EQ(i->down.start, 2 * S);
	CHECK_EQ(i->down.len, 500 * MS);
	CHECK_EQ(srn_fabric_port_cfg_check(&p, err, sizeof(err)), 0);
	/* the resolved configuration builds a switch port */
	struct srn_fabric_cfg fc;
	srn_fabric_cfg_default(&fc);
	srn_fabric_conf_switch_cfg(&c, &fc);
	CHECK_EQ(fc.seed, 42);
	struct srn_fabric *f;
	REQUIRE(srn_fabric_new(&f, &fc, NULL) == 0);
	CHECK_EQ(srn_fabric_add_port(f, 0x7f000001, &p), 0);
	srn_fabric_del(f);
}

SRN_TEST(test_fabric_conf_default_and_prefixes)
{
	static struct srn_fabric_conf c;
	char err[256];
	/* the default comes after the port on purpose: order does not matter */
	const char *text =
		"port 10.0.0.2 loss=0.5 in.delay=1ms both.dup=2%   # a comment\n"
		"\n"
		"   \t\n"
		"default loss=0.01 delay=5us in.jitter=1us rate=1g out.buffer=64k\n"
		"seed=0x10\n"
		"switch ports=8 slots=1024 slotsize=4608\n"
		"port 10.0.0.2 down=1s+10ms/100ms\n";
	REQUIRE(parse(&c, text, err, sizeof(err)) == 0);
	CHECK_EQ(c.seed, 16);
	CHECK_EQ(c.max_ports, 8);
	CHECK_EQ(c.nslots, 1024);
	CHECK_EQ(c.slot_size, 4608);
	CHECK_EQ(c.nports, 1);
	struct srn_fabric_port_cfg p;
	srn_fabric_conf_port_cfg(&c, 0x0a000002, &p);
	const struct srn_fabric_link_cfg *o = &p.link[SRN_FABRIC_OUT], *i = &p.link[SRN_FABRIC_IN];
	CHECK(o->loss == 0.5);            /* the port's own */
	CHECK_EQ(o->delay, 5 * US);       /* from the default */
	CHECK_EQ(o->rate_bps, 1000000000);
	CHECK_EQ(o->buffer, 65536);
	CHECK(o->dup == 0.02 && i->dup == 0.02);
	CHECK_EQ(i->delay, 1 * MS);
	CHECK_EQ(i->jitter, 1 * US);
	CHECK(i->loss == 0);
	CHECK_EQ(o->down.start, 1 * S);
	CHECK_EQ(o->down.len, 10 * MS);
	CHECK_EQ(o->down.period, 100 * MS);
	CHECK_EQ(i->down.period, 100 * MS);
	/* an unlisted address gets the default */
	srn_fabric_conf_port_cfg(&c, 0x0a000009, &p);
	CHECK(p.link[SRN_FABRIC_OUT].loss == 0.01);
	CHECK(p.link[SRN_FABRIC_OUT].dup == 0);
	CHECK_EQ(p.link[SRN_FABRIC_IN].jitter, 1 * US);
	struct srn_fabric_cfg fc;
	srn_fabric_cfg_default(&fc);
	srn_fabric_conf_switch_cfg(&c, &fc);
	CHECK_EQ(fc.max_ports, 8);
	CHECK_EQ(fc.nslots, 1024);
	CHECK_EQ(fc.slot_size, 4608);
}

SRN_TEST(test_fabric_conf_values)
{
	static struct srn_fabric_conf c;
	char err[256];
	const char *text =
		"port 1.2.3.4 rate=2.5g delay=1.5ms jitter=250ns loss=0.1% kmax=1.5m kmin=100 "
		"pmax=1 ge=0.1,0.2 paths=1:7us reorder=1,0\n"
		"port 1.2.3.5 rate=100M delay=2s loss=1 down=0+1us\n"
		"port 1.2.3.6 ge=0.1,0.2,0,1,250us\n"
		"port 1.2.3.7 ge=0.1,0.2,0.01,0.9,0\n";
	REQUIRE(parse(&c, text, err, sizeof(err)) == 0);
	struct srn_fabric_port_cfg p;
	srn_fabric_conf_port_cfg(&c, 0x01020304, &p);
	const struct srn_fabric_link_cfg *o = &p.link[SRN_FABRIC_OUT];
	CHECK_EQ(o->rate_bps, 2500000000ull);
	CHECK_EQ(o->delay, 1500 * US);
	CHECK_EQ(o->jitter, 250);
	CHECK(o->loss > 0.000999 && o->loss < 0.001001);
	CHECK_EQ(o->kmax, 1572864);
	CHECK_EQ(o->kmin, 100);
	CHECK(o->pmax == 1);
	CHECK(o->ge.p_gb == 0.1 && o->ge.p_bg == 0.2 && o->ge.loss_good == 0 && o->ge.loss_bad == 1);
	CHECK_EQ(o->ge.idle_step, SRN_FABRIC_GE_IDLE_STEP);
	CHECK_EQ(o->paths.n, 1);
	CHECK_EQ(o->paths.delay[0], 7 * US);
	CHECK(o->reorder.p == 1);
	CHECK_EQ(o->reorder.delay, 0);
	srn_fabric_conf_port_cfg(&c, 0x01020306, &p);
	CHECK_EQ(p.link[SRN_FABRIC_OUT].ge.idle_step, 250 * US);
	srn_fabric_conf_port_cfg(&c, 0x01020307, &p);
	CHECK(p.link[SRN_FABRIC_OUT].ge.loss_good == 0.01 && p.link[SRN_FABRIC_OUT].ge.loss_bad == 0.9);
	CHECK_EQ(p.link[SRN_FABRIC_OUT].ge.idle_step, 0);   /* packets only */
	srn_fabric_conf_port_cfg(&c, 0x01020305, &p);
	CHECK_EQ(p.link[SRN_FABRIC_OUT].rate_bps, 100000000ull);
	CHECK_EQ(p.link[SRN_FABRIC_OUT].delay, 2 * S);
	CHECK_EQ(p.link[SRN_FABRIC_OUT].down.len, 1 * US);
	CHECK_EQ(c.nports, 4);
}

static void reject(const char *text, const char *want1, const char *want2)
{
	static struct srn_fabric_conf c;
	char err[256];
	int rc = parse(&c, text, err, sizeof(err));
	CHECK_EQ(rc, SRN_EINVAL);
	bool ok = strstr(err, want1) != NULL && (!want2 || strstr(err, want2) != NULL);
	if (!ok)
		fprintf(stderr, "  for \"%s\": message \"%s\" lacks \"%s\"/\"%s\"\n", text, err, want1,
			want2 ? want2 : "");
	CHECK(ok);
}

SRN_TEST(test_fabric_conf_rejects_bad_tokens)
{
	reject("default loss=0.1\nport 127.0.0.1 lss=0.1\n", "line 2:", "'lss=0.1': unknown knob 'lss'");
	reject("port 127.0.0.1 loss=1.5", "line 1:", "'loss=1.5': value out of range");
	reject("port 127.0.0.1 loss=abc", "'loss=abc': bad value", "probability");
	reject("port 127.0.0.1 loss=-0.1", "'loss=-0.1'", NULL);
	reject("port 127.0.0.1 loss=", "'loss=': empty value", NULL);
	reject("port 127.0.0.1 loss", "'loss': expected KNOB=VALUE", NULL);
	reject("port 127.0.0.1 =1", "'=1': expected KNOB=VALUE", NULL);
	reject("port 127.0.0.1 delay=10", "'delay=10': bad value", "time");
	reject("port 127.0.0.1 delay=10parsecs", "'delay=10parsecs'", NULL);
	reject("port 127.0.0.1 delay=1e3us", "'delay=1e3us'", NULL);
	reject("port 127.0.0.1 delay=99999999s", "'delay=99999999s': value out of range", NULL);
	reject("port 127.0.0.1 rate=10x", "'rate=10x'", "rate in bit/s");
	reject("port 127.0.0.1 buffer=5q", "'buffer=5q'", "bytes");
	reject("port 127.0.0.1 buffer=8g", "'buffer=8g': value out of range", NULL);
	reject("port 127.0.0.1 paths=4:0us,20us", "'paths=4:0us,20us'", "2 delays for 4 paths");
	reject("port 127.0.0.1 paths=2:0us,1us,2us", "more delays than the 2 paths", NULL);
	reject("port 127.0.0.1 paths=0:", "number of paths", NULL);
	reject("port 127.0.0.1 paths=17:0", "number of paths", NULL);
	reject("port 127.0.0.1 paths=20us", "missing ':'", NULL);
	reject("port 127.0.0.1 ge=0.1", "'ge=0.1'", "1 values, expected 2, 4 or 5");
	reject("port 127.0.0.1 ge=0.1,0.2,0.3", "3 values", NULL);
	reject("port 127.0.0.1 ge=0.1,0.2,0.3,0.4,0.5", "'ge=0.1,0.2,0.3,0.4,0.5'", NULL);
	reject("port 127.0.0.1 ge=0.1,0.2,0,1,5us,1", "more than 5 values", NULL);
	reject("port 127.0.0.1 reorder=0.1", "missing the hold-back delay", NULL);
	reject("port 127.0.0.1 down=2s", "missing '+'", NULL);
	reject("port 127.0.0.1 down=1s+2s/1s", "port 127.0.0.1: in.down: period shorter", NULL);
	reject("port 127.0.0.1 side.loss=0.1", "unknown direction 'side'", NULL);
	reject("port 127.0.0.1 in.=0.1", "unknown knob ''", NULL);
	reject("port 127.0.0.256 loss=0.1", "'127.0.0.256': not an IPv4 address", NULL);
	reject("port 127.0.0 loss=0.1", "'127.0.0': not an IPv4", NULL);
	reject("port", "missing the port's IPv4 address", NULL);
	reject("prot 127.0.0.1", "'prot': unknown statement", NULL);
	reject("seed", "missing the seed value", NULL);
	reject("seed x1", "'x1': seed must be an integer", NULL);
	reject("seed 1 2", "'2': unexpected after the seed", NULL);
	reject("seed=99999999999999999999", "seed must be an integer", NULL);
	reject("switch slots=0", "'slots=0'", NULL);
	reject("switch color=red", "unknown switch setting", NULL);
	reject("switch slotsize=10", "slot size", NULL);
	/* checks of the resolved ports name the port and knob */
	reject("port 10.0.0.1 rate=1g kmin=20k kmax=10k", "port 10.0.0.1: out.kmin: 20480 is above kmax", NULL);
	reject("default buffer=64k\n", "default: out.buffer: a queue needs a rate", NULL);
	reject("port 10.0.0.1 in.kmax=10k", "port 10.0.0.1: in.kmax: ECN marking needs a queue", NULL);
	reject("default rate=1g\nport 10.0.0.1 pmax=0.1", "port 10.0.0.1: out.kmin/pmax: ECN marking needs kmax", NULL);
	reject("port 10.0.0.1 rate=10", "out.rate", NULL);
	/* a NUL inside the text */
	static struct srn_fabric_conf c;
	char err[128];
	srn_fabric_conf_init(&c);
	CHECK_EQ(srn_fabric_conf_parse(&c, "port 1.2.3.4\0 x", 15, err, sizeof(err)), SRN_EINVAL);
	CHECK(strstr(err, "NUL") != NULL);
}

SRN_TEST(test_fabric_conf_port_limit_and_small_err)
{
	static struct srn_fabric_conf c;
	srn_fabric_conf_init(&c);
	char line[64], err[8];
	for (unsigned i = 0; i < SRN_FABRIC_CONF_MAX_PORTS; i++) {
		snprintf(line, sizeof(line), "port 10.0.%u.%u loss=0.1", i / 256, i % 256);
		CHECK_EQ(srn_fabric_conf_parse_line(&c, line, strlen(line), err, sizeof(err)), 0);
	}
	snprintf(line, sizeof(line), "port 10.1.0.0 loss=0.1");
	CHECK_EQ(srn_fabric_conf_parse_line(&c, line, strlen(line), err, sizeof(err)), SRN_EINVAL);
	CHECK_EQ(strlen(err), sizeof(err) - 1); /* truncated, terminated */
	/* the same port twice merges */
	snprintf(line, sizeof(line), "port 10.0.0.1 dup=0.5");
	CHECK_EQ(srn_fabric_conf_parse_line(&c, line, strlen(line), NULL, 0), 0);
	struct srn_fabric_port_cfg p;
	srn_fabric_conf_port_cfg(&c, 0x0a000001, &p);
	CHECK(p.link[SRN_FABRIC_OUT].loss == 0.1 && p.link[SRN_FABRIC_OUT].dup == 0.5);
	CHECK_EQ(c.nports, SRN_FABRIC_CONF_MAX_PORTS);
}

SRN_TEST(test_fabric_conf_ipv4_helpers)
{
	uint32_t ip;
	CHECK_EQ(srn_fabric_parse_ipv4("192.168.1.20", 12, &ip), 0);
	CHECK_EQ(ip, 0xc0a80114u);
	char s[16];
	srn_fabric_fmt_ipv4(s, ip);
	CHECK(strcmp(s, "192.168.1.20") == 0);
	CHECK_EQ(srn_fabric_parse_ipv4("01.2.3.4", 8, &ip), SRN_EINVAL);
	CHECK_EQ(srn_fabric_parse_ipv4("1.2.3.4.", 8, &ip), SRN_EINVAL);
	CHECK_EQ(srn_fabric_parse_ipv4("1..3.4", 6, &ip), SRN_EINVAL);
	CHECK_EQ(srn_fabric_parse_ipv4("1.2.3.1000", 10, &ip), SRN_EINVAL);
}

int main(void) { return srn_test_main(); }
