// SPDX-License-Identifier: GPL-2.0
/* CDB fields (vaai_cdb_fields.c): each refusal, and the lengths passed on. */
#include "harness.h"

static const struct vaai_cdb_lun lun = {
	.nr_blocks = 1000, .block_size = 512, .max_write_same_len = 100,
	.hw_max_sectors = 64, .tpws = true,
};
/* The same LUN with the write cache on: MODE SENSE's DPOFUA bit set. */
static const struct vaai_cdb_lun lun_dpofua = {
	.nr_blocks = 1000, .block_size = 512, .max_write_same_len = 100,
	.hw_max_sectors = 64, .tpws = true, .dpofua = true,
};

static struct vaai_cdb_args a;

static void caw(u8 *cdb, u8 b1, u64 lba, u8 nolb)
{
	memset(cdb, 0, 16);
	cdb[0] = COMPARE_AND_WRITE;
	cdb[1] = b1;
	put_unaligned_be64(lba, &cdb[2]);
	cdb[13] = nolb;
}

/* A 16-byte CDB with a 64-bit LBA at byte 2 and 32-bit length at 10. */
static void cdb16(u8 *cdb, u8 op, u8 b1, u64 lba, u32 nolb)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = b1;
	put_unaligned_be64(lba, &cdb[2]);
	put_unaligned_be32(nolb, &cdb[10]);
}

#define ws16(cdb, b1, lba, nolb)	cdb16(cdb, WRITE_SAME_16, b1, lba, nolb)
#define verify16(cdb, b1, lba, nolb)	cdb16(cdb, VERIFY_16, b1, lba, nolb)

static void ws10(u8 *cdb, u8 b1, u32 lba, u16 nolb)
{
	memset(cdb, 0, 16);
	cdb[0] = WRITE_SAME;
	cdb[1] = b1;
	put_unaligned_be32(lba, &cdb[2]);
	put_unaligned_be16(nolb, &cdb[7]);
}

TEST(caw_fields_and_data_out)
{
	u8 cdb[16];

	caw(cdb, 0, 999, 1);
	CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 999);
	CHECK_EQ(a.size, 2 * 512);		/* verify and write data */
}

TEST(caw_wrprotect_refused)
{
	u8 cdb[16];

	caw(cdb, 0x20, 0, 1);
	CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
}

/* DPO and FUA: accepted where DPOFUA is set, an invalid field where not. */
TEST(dpo_fua_follow_dpofua)
{
	u8 cdb[16];
	u8 b1;

	for (b1 = 0x08; b1 <= 0x18; b1 += 0x08) {
		caw(cdb, b1, 0, 1);
		CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
		CHECK_EQ(vaai_caw_cdb_check(cdb, &lun_dpofua, &a), VAAI_CDB_OK);
	}
	verify16(cdb, 0x10, 0, 1);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun_dpofua, &a), VAAI_CDB_OK);
}

TEST(caw_zero_blocks_still_needs_the_lba)
{
	u8 cdb[16];

	caw(cdb, 0, 999, 0);
	CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0);
	caw(cdb, 0, 1000, 0);
	CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(caw_range_past_end)
{
	u8 cdb[16];

	caw(cdb, 0, 990, 11);
	CHECK_EQ(vaai_caw_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(ws16_pattern_and_ndob)
{
	u8 cdb[16];

	ws16(cdb, 0x08, 900, 100);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 512);
	ws16(cdb, 0x01, 0, 1);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0);			/* NDOB: no data-out */
}

TEST(ws10_ndob_refused)
{
	u8 cdb[16];

	ws10(cdb, 0x01, 0, 1);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	ws10(cdb, 0, 0xffffffff, 1);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(ws_anchor_and_obsolete_bits_refused)
{
	const u8 bits[] = { 0x10, 0x04, 0x02 };
	unsigned int i;
	u8 cdb[16];

	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		ws16(cdb, bits[i], 0, 1);
		CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	}
}

TEST(ws_wrprotect_refused)
{
	u8 cdb[16];
	u8 wrprotect;

	for (wrprotect = 1; wrprotect <= 7; wrprotect++) {
		ws16(cdb, wrprotect << 5, 0, 1);
		CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
		ws10(cdb, wrprotect << 5, 0, 1);
		CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	}
}

TEST(ws_unmap_bit_needs_tpws)
{
	struct vaai_cdb_lun thick = lun;
	u8 cdb[16];

	thick.tpws = false;
	ws16(cdb, 0x08, 0, 1);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &thick, &a), VAAI_CDB_INVALID_FIELD);
}

TEST(ws_number_of_blocks_zero_or_over_limit)
{
	u8 cdb[16];

	ws16(cdb, 0, 0, 0);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	ws16(cdb, 0, 0, 101);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
}

TEST(ws16_lba_plus_blocks_wraps_u64)
{
	u8 cdb[16];

	ws16(cdb, 0, U64_MAX - 1, 4);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	ws16(cdb, 0, 901, 100);
	CHECK_EQ(vaai_ws_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(verify_bytchk_sizes)
{
	u8 cdb[16];

	verify16(cdb, VAAI_BYTCHK_ALL << 1, 0, 8);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 8 * 512);
	verify16(cdb, VAAI_BYTCHK_ONE_BLOCK << 1, 0, 8);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 512);
	verify16(cdb, VAAI_BYTCHK_ONE_BLOCK << 1, 0, 0);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0);
}

TEST(verify_refusals)
{
	u8 cdb[16];

	verify16(cdb, 0x2 << 1, 0, 1);		/* BYTCHK 10b reserved */
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	verify16(cdb, 0x20 | 0x02, 0, 1);	/* VRPROTECT */
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	verify16(cdb, 0x02, 0, 65);		/* past hw_max_sectors */
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	verify16(cdb, 0, 0, 1000);		/* no comparison: no bound */
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	verify16(cdb, 0, 1000, 0);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(verify12_fields)
{
	u8 cdb[12] = { VERIFY_12, 0x02 };

	put_unaligned_be32(7, &cdb[2]);
	put_unaligned_be32(3, &cdb[6]);
	CHECK_EQ(vaai_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 7);
	CHECK_EQ(a.nolb, 3);
	CHECK_EQ(a.size, 3 * 512);
}

TEST(write_verify_fields)
{
	u8 cdb[16];

	cdb16(cdb, WRITE_VERIFY_16, 0x02, 936, 64);	/* BYTCHK 01b */
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 64 * 512);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = WRITE_VERIFY_12;
	put_unaligned_be32(990, &cdb[2]);
	put_unaligned_be32(10, &cdb[6]);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 990);
	CHECK_EQ(a.nolb, 10);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = WRITE_VERIFY;
	put_unaligned_be32(990, &cdb[2]);
	put_unaligned_be16(11, &cdb[7]);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	put_unaligned_be16(10, &cdb[7]);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.nolb, 10);
}

TEST(write_verify_refusals)
{
	static const u8 bad[] = { 0x04, 0x06, 0x08, 0x20, 0xe0 };
	u8 cdb[16];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cdb16(cdb, WRITE_VERIFY_16, bad[i], 0, 1);
		CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun_dpofua, &a),
			 VAAI_CDB_INVALID_FIELD);
	}
	cdb16(cdb, WRITE_VERIFY_16, 0x10, 0, 1);	/* DPO */
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun_dpofua, &a), VAAI_CDB_OK);
	cdb16(cdb, WRITE_VERIFY_16, 0, 0, 65);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_VERIFY_16, 0, 1000, 0);
	CHECK_EQ(vaai_write_verify_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(orwrite_fields)
{
	u8 cdb[16];

	cdb16(cdb, ORWRITE_16, 0x02, 936, 64);		/* FUA_NV ignored */
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 64 * 512);
	cdb16(cdb, ORWRITE_16, 0, 0, 65);		/* past hw_max_sectors */
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, ORWRITE_16, 0x20, 0, 1);		/* ORPROTECT */
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, ORWRITE_16, 0x08, 0, 1);		/* FUA */
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun_dpofua, &a), VAAI_CDB_OK);
	cdb16(cdb, ORWRITE_16, 0, 999, 0);		/* no blocks: the LBA still */
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0);
	cdb16(cdb, ORWRITE_16, 0, 1000, 0);
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, ORWRITE_16, 0, ~0ULL, 2);
	CHECK_EQ(vaai_orwrite_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(write_atomic_fields)
{
	struct vaai_cdb_lun at = lun;
	u8 cdb[16];

	at.atomic_max = 16;
	at.atomic_align = 2;
	at.atomic_gran = 2;
	cdb16(cdb, WRITE_ATOMIC_16, 0, 10, 16);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 10);
	CHECK_EQ(a.nolb, 16);
	CHECK_EQ(a.size, 16 * 512);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 10, 18);		/* past the maximum */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 11, 2);		/* misaligned */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 10, 3);		/* not of the granularity */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 10, 2 | 4 << 16);	/* ATOMIC BOUNDARY */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0x20, 10, 2);	/* WRPROTECT */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0x18, 10, 2);	/* DPO, FUA */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	at.dpofua = true;
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_OK);
	/* the LBAs before the atomic limits, as for any write */
	cdb16(cdb, WRITE_ATOMIC_16, 0, 990, 32);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, WRITE_ATOMIC_16, 0, ~0ULL - 1, 2);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 1000, 0);	/* no blocks: the LBA still */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 999, 0);		/* misaligned, but nothing */
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0);
	/* a store whose untorn writes stay inside 8-block boundaries */
	at.atomic_boundary = 8;
	cdb16(cdb, WRITE_ATOMIC_16, 0, 6, 4);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_INVALID_FIELD);
	cdb16(cdb, WRITE_ATOMIC_16, 0, 8, 8);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &at, &a), VAAI_CDB_OK);
}

TEST(write_atomic_on_a_lun_without_atomic_writes_accepts_nothing)
{
	u8 cdb[16];

	cdb16(cdb, WRITE_ATOMIC_16, 0, 0, 1);
	CHECK_EQ(vaai_write_atomic_cdb_check(cdb, &lun, &a), VAAI_CDB_INVALID_FIELD);
}

TEST(prefetch_ranges)
{
	u8 cdb[16];

	cdb16(cdb, PRE_FETCH_16, 0x02, 990, 10);	/* IMMED */
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 990);
	CHECK_EQ(a.nolb, 10);
	CHECK_EQ(a.size, 0);
	cdb16(cdb, PRE_FETCH_16, 0, 990, 11);
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, PRE_FETCH_16, 0, ~0ULL, 1);		/* LBA + 1 wraps */
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	cdb16(cdb, PRE_FETCH_16, 0, 1ULL << 63, 1);
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(prefetch_length_zero_is_to_the_end)
{
	u8 cdb[16];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = PRE_FETCH;
	put_unaligned_be32(400, &cdb[2]);
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.lba, 400);
	CHECK_EQ(a.nolb, 600);
	put_unaligned_be32(1000, &cdb[2]);
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
	put_unaligned_be32(999, &cdb[2]);
	put_unaligned_be16(2, &cdb[7]);
	CHECK_EQ(vaai_prefetch_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(get_lba_status_fields)
{
	u8 cdb[16] = { SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS };

	put_unaligned_be64(999, &cdb[2]);
	put_unaligned_be32(0x12345, &cdb[10]);
	CHECK_EQ(vaai_lbas_cdb_check(cdb, &lun, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 0x12345);		/* ALLOCATION LENGTH */
	put_unaligned_be64(1000, &cdb[2]);
	CHECK_EQ(vaai_lbas_cdb_check(cdb, &lun, &a), VAAI_CDB_LBA_OUT_OF_RANGE);
}

TEST(unmap_cdb_anchor_and_length)
{
	u8 cdb[10] = { UNMAP };

	put_unaligned_be16(24, &cdb[7]);
	CHECK_EQ(vaai_unmap_cdb_check(cdb, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 24);
	cdb[1] = 0x01;
	CHECK_EQ(vaai_unmap_cdb_check(cdb, &a), VAAI_CDB_INVALID_FIELD);
}

TEST(xcopy_cdb_service_action_and_length)
{
	u8 cdb[16] = { EXTENDED_COPY };

	put_unaligned_be32(VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN, &cdb[10]);
	CHECK_EQ(vaai_xcopy_cdb_check(cdb, &a), VAAI_CDB_OK);
	put_unaligned_be32(VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN + 1,
			   &cdb[10]);
	CHECK_EQ(vaai_xcopy_cdb_check(cdb, &a), VAAI_CDB_LIST_LENGTH);
	put_unaligned_be32(16, &cdb[10]);
	cdb[1] = 0x01;				/* LID4 */
	CHECK_EQ(vaai_xcopy_cdb_check(cdb, &a), VAAI_CDB_INVALID_FIELD);
}
