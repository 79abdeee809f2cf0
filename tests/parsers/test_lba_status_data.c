// SPDX-License-Identifier: GPL-2.0
/* GET LBA STATUS parameter data (vaai_lba_status_data.c), SBC-4 5.8.2. */
#include <stdlib.h>

#include "harness.h"

/* A fake store: mapped in [0, 4096), a hole to 10000, mapped after. */
static loff_t map_calls;

static loff_t fake_map(void *ctx, loff_t pos, loff_t len, bool *mapped)
{
	const loff_t hole = 4096, data = 10000;
	loff_t to;

	map_calls++;
	*mapped = pos < hole || pos >= data;
	to = pos < hole ? hole : pos < data ? data : pos + len;
	return min(to - pos, len);
}

static loff_t failing_map(void *ctx, loff_t pos, loff_t len, bool *mapped)
{
	return -EIO;
}

static u8 buf[VAAI_LBAS_HDR_LEN + 4 * VAAI_LBAS_DESC_LEN];

static void desc_is(unsigned int i, u64 lba, u32 nolb, u8 status)
{
	const u8 *d = &buf[VAAI_LBAS_HDR_LEN + i * VAAI_LBAS_DESC_LEN];

	CHECK_EQ(get_unaligned_be64(&d[0]), lba);
	CHECK_EQ(get_unaligned_be32(&d[8]), nolb);
	CHECK_EQ(d[12], status);
}

TEST(lbas_extents_from_start_lba)
{
	const struct vaai_lbas_req req = {
		.lba = 0, .nr_blocks = 100, .block_size = 512,
		.alloc_len = sizeof(buf),
	};
	u32 len;

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(vaai_lbas_reply_build(&req, buf, fake_map, NULL, &len), 0);
	CHECK_EQ(len, 8 + 4 * 16);
	CHECK_EQ(get_unaligned_be32(buf), 4 + 4 * 16);
	desc_is(0, 0, 8, 0);
	desc_is(1, 8, 11, 1);
	/* block 19 holds bytes 9728-10239: partly backed counts as mapped */
	desc_is(2, 19, 1, 0);
	desc_is(3, 20, 80, 0);
}

TEST(lbas_allocation_length_cuts_descriptors)
{
	const struct vaai_lbas_req req = {
		.lba = 0, .nr_blocks = 100, .block_size = 512,
		.alloc_len = 8 + 16 + 15,
	};
	u32 len;

	memset(buf, 0, sizeof(buf));
	map_calls = 0;
	CHECK_EQ(vaai_lbas_reply_build(&req, buf, fake_map, NULL, &len), 0);
	CHECK_EQ(map_calls, 1);			/* only what fits is asked */
	CHECK_EQ(len, 8 + 16);
	CHECK_EQ(get_unaligned_be32(buf), 4 + 16);
}

/* Too short for one descriptor: the header says one exists. */
TEST(lbas_short_allocation_length_gets_header_only)
{
	u32 alloc, len;

	for (alloc = 4; alloc < 8 + 16; alloc++) {
		const struct vaai_lbas_req req = {
			.lba = 5, .nr_blocks = 100, .block_size = 512,
			.alloc_len = alloc,
		};

		memset(buf, 0, sizeof(buf));
		map_calls = 0;
		CHECK_EQ(vaai_lbas_reply_build(&req, buf, fake_map, NULL, &len), 0);
		CHECK_EQ(map_calls, 0);
		CHECK_EQ(len, min(alloc, 8U));
		CHECK_EQ(get_unaligned_be32(buf), 4 + 16);
	}
}

TEST(lbas_store_error_is_returned)
{
	const struct vaai_lbas_req req = {
		.lba = 0, .nr_blocks = 100, .block_size = 512,
		.alloc_len = sizeof(buf),
	};
	u32 len;

	CHECK_EQ(vaai_lbas_reply_build(&req, buf, failing_map, NULL, &len), -EIO);
}

/* Every block its own extent, mapped and not in turn. */
static loff_t striped_map(void *ctx, loff_t pos, loff_t len, bool *mapped)
{
	*mapped = (pos / 512) & 1;
	return min_t(loff_t, 512 - pos % 512, len);
}

TEST(lbas_huge_allocation_length_fits_the_longest_reply)
{
	const struct vaai_lbas_req req = {
		.lba = 0, .nr_blocks = 1 << 20, .block_size = 512,
		.alloc_len = 8 << 20,
	};
	/* what the kernel allocates for it; ASan checks nothing goes past */
	u8 *big = calloc(1, VAAI_LBAS_MAX_LEN);
	u32 len;

	CHECK(big != NULL);
	CHECK_EQ(vaai_lbas_reply_build(&req, big, striped_map, NULL, &len), 0);
	CHECK_EQ(len, VAAI_LBAS_MAX_LEN);
	CHECK_EQ(get_unaligned_be32(big), VAAI_LBAS_MAX_LEN - 4);
	free(big);
}
