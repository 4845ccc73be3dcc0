/*
 * test_mr.c - unit tests of the protection table (src/core/mr.c, V-03):
 * keys, PD, bounds, access rights, stale keys after deregistration, the
 * table limit and registration errors.
 */
#include "srn_test.h"
#include "core/core_int.h"

#include <stdlib.h>

static void *t_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void t_free(void *p, void *u) { (void)u; free(p); }

static struct srn_dev *new_dev(uint32_t max_mr)
{
	struct srn_dev_cfg c;
	srn_dev_cfg_default(&c);
	c.max_mr = max_mr;
	c.max_qp = 4;
	c.mem.calloc = t_calloc;
	c.mem.free = t_free;
	struct srn_dev *d = NULL;
	return srn_dev_new(&d, &c) == SRN_OK ? d : NULL;
}

#define RW (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ)

SRN_TEST(test_v03_mr_translate_bounds_pd_access)
{
	struct srn_dev *d = new_dev(16);
	REQUIRE(d);
	static uint8_t buf[4096];
	uint32_t pd = srn_pd_alloc(d), pd2 = srn_pd_alloc(d);
	struct srn_mr *mr;
	REQUIRE(srn_mr_reg(d, pd, buf, 0x10000, sizeof(buf), RW, &mr) == SRN_OK);
	struct srn_mr_info mi;
	srn_mr_info(mr, &mi);
	CHECK_EQ(mi.lkey, mi.rkey);
	CHECK(mi.lkey != 0);
	CHECK(srn_mr_lookup(d, mi.rkey) == mr);
	CHECK(srn_mr_lookup(d, 0) == NULL);               /* key 0 is never valid */
	/* bounds: the whole region, the last byte, one past, before */
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10000, 4096, SRN_ACCESS_REMOTE_READ) == buf);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10fff, 1, SRN_ACCESS_REMOTE_READ) == buf + 4095);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10fff, 2, SRN_ACCESS_REMOTE_READ) == NULL);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0xffff, 1, SRN_ACCESS_REMOTE_READ) == NULL);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x11000, 0, SRN_ACCESS_REMOTE_READ) == buf + 4096);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, UINT64_MAX, 2, SRN_ACCESS_REMOTE_READ) == NULL);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10000, UINT64_MAX, SRN_ACCESS_REMOTE_READ) == NULL);
	/* another PD, a right not granted */
	CHECK(srn_mr_xlate(d, mi.rkey, pd2, 0x10000, 1, SRN_ACCESS_REMOTE_READ) == NULL);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10000, 8, SRN_ACCESS_REMOTE_ATOMIC) == NULL);
	/* a stale key after deregistration, and a new MR in the slot has another key */
	CHECK_EQ(srn_mr_dereg(d, mr), SRN_OK);
	CHECK(srn_mr_lookup(d, mi.rkey) == NULL);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10000, 1, SRN_ACCESS_REMOTE_READ) == NULL);
	struct srn_mr *mr2;
	REQUIRE(srn_mr_reg(d, pd, buf, 0x10000, sizeof(buf), RW, &mr2) == SRN_OK);
	struct srn_mr_info mi2;
	srn_mr_info(mr2, &mi2);
	CHECK(mi2.rkey != mi.rkey);
	CHECK(srn_mr_xlate(d, mi.rkey, pd, 0x10000, 1, SRN_ACCESS_REMOTE_READ) == NULL);
	srn_dev_del(d);
}

SRN_TEST(test_v03_mr_registration_errors_and_table_limit)
{
	struct srn_dev *d = new_dev(4);
	REQUIRE(d);
	static uint8_t buf[64];
	uint32_t pd = srn_pd_alloc(d);
	struct srn_mr *mr = NULL, *m[4];
	CHECK_EQ(srn_mr_reg(d, 0, buf, 0, 64, 0, &mr), SRN_EINVAL);          /* no PD */
	CHECK_EQ(srn_mr_reg(d, pd, NULL, 0, 64, 0, &mr), SRN_EINVAL);        /* no memory */
	CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, 1u << 9, &mr), SRN_EINVAL);   /* unknown access bit */
	CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, SRN_ACCESS_REMOTE_WRITE, &mr), SRN_EINVAL);
	CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, SRN_ACCESS_REMOTE_ATOMIC, &mr), SRN_EINVAL);
	CHECK_EQ(srn_mr_reg(d, pd, buf, UINT64_MAX - 10, 64, 0, &mr), SRN_ERANGE);
	CHECK(mr == NULL);
	/* index 0 is never used: max_mr 4 holds 3 */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, 0, &m[i]), SRN_OK);
	CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, 0, &m[3]), SRN_ENOMEM);
	CHECK_EQ(srn_mr_dereg(d, m[1]), SRN_OK);
	CHECK_EQ(srn_mr_reg(d, pd, buf, 0, 64, 0, &m[3]), SRN_OK);
	/* deregistering something that is not a live MR of this device */
	struct srn_mr fake = *m[0];
	fake.idx = 999;
	CHECK_EQ(srn_mr_dereg(d, &fake), SRN_EINVAL);
	CHECK_EQ(srn_mr_dereg(d, NULL), SRN_EINVAL);
	srn_dev_del(d);
}

int main(void) { return srn_test_main(); }
