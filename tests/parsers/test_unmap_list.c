// SPDX-License-Identifier: GPL-2.0
/* The UNMAP parameter list (vaai_unmap_list.c), SBC-4 5.32.2. */
#include "harness.h"

#define MAX_DESCS	4095

static const struct vaai_unmap_limits lim = {
	.nr_blocks = 1000, .max_descs = 8, .max_lbas = 600,
};

static u8 buf[VAAI_UNMAP_HDR_LEN + MAX_DESCS * VAAI_UNMAP_DESC_LEN];

/* A list of nr descriptors (lba[i], nolb[i]); its length. */
static u32 unmap_list(unsigned int nr, const u64 *lba, const u32 *nolb)
{
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	put_unaligned_be16(6 + nr * VAAI_UNMAP_DESC_LEN, &buf[0]);
	put_unaligned_be16(nr * VAAI_UNMAP_DESC_LEN, &buf[2]);
	for (i = 0; i < nr; i++) {
		put_unaligned_be64(lba[i], &buf[8 + i * 16]);
		put_unaligned_be32(nolb[i], &buf[8 + i * 16 + 8]);
	}
	return VAAI_UNMAP_HDR_LEN + nr * VAAI_UNMAP_DESC_LEN;
}

/* Check and collect buf's list against l. */
static struct vaai_fault unmap_parse(u32 len, const struct vaai_unmap_limits *l,
				     struct vaai_unmap_span *span,
				     struct vaai_unmap_range *range)
{
	struct vaai_fault f;
	unsigned int nr = 0;

	f = vaai_unmap_list_check(buf, len, l, &nr);
	if (!f.key)
		f = vaai_unmap_list_collect(buf, nr, l, span, range);
	return f;
}

TEST(unmap_header_only_unmaps_nothing)
{
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[1];

	CHECK_OK(unmap_parse(unmap_list(0, NULL, NULL), &lim, &span, r));
	CHECK_EQ(span.nr, 0);
	CHECK_EQ(span.blocks, 0);
}

TEST(unmap_short_header_is_length_error)
{
	unsigned int nr;

	unmap_list(0, NULL, NULL);
	CHECK_FAULT(vaai_unmap_list_check(buf, 7, &lim, &nr),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(unmap_data_length_past_list)
{
	const u64 lba[] = { 0 };
	const u32 nolb[] = { 1 };
	unsigned int nr;
	u32 len = unmap_list(1, lba, nolb);

	CHECK_FAULT(vaai_unmap_list_check(buf, len - 1, &lim, &nr),
		    ILLEGAL_REQUEST, 0x26, 0x00, 0, -1);
}

TEST(unmap_block_descriptor_length_past_data_length)
{
	const u64 lba[] = { 0 };
	const u32 nolb[] = { 1 };
	unsigned int nr;
	u32 len = unmap_list(1, lba, nolb);

	put_unaligned_be16(6 + 16 + 1, &buf[2]);
	CHECK_FAULT(vaai_unmap_list_check(buf, len, &lim, &nr),
		    ILLEGAL_REQUEST, 0x26, 0x00, 0, -1);
}

TEST(unmap_incomplete_trailing_descriptor_ignored)
{
	const u64 lba[] = { 10, 999 };
	const u32 nolb[] = { 5, 9999 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[2];
	u32 len = unmap_list(2, lba, nolb);

	/* the second descriptor is 15 of its 16 bytes: not walked */
	put_unaligned_be16(6 + 31, &buf[0]);
	put_unaligned_be16(31, &buf[2]);
	CHECK_OK(unmap_parse(len - 1, &lim, &span, r));
	CHECK_EQ(span.nr, 1);
	CHECK_EQ(r[0].lba, 10);
	CHECK_EQ(r[0].nolb, 5);
}

TEST(unmap_descriptor_count_limit)
{
	u64 lba[9] = {};
	u32 nolb[9] = {};
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[9];

	CHECK_OK(unmap_parse(unmap_list(8, lba, nolb), &lim, &span, r));
	CHECK_FAULT(unmap_parse(unmap_list(9, lba, nolb), &lim, &span, r),
		    ILLEGAL_REQUEST, 0x26, 0x00, 2, -1);
}

TEST(unmap_lba_past_capacity)
{
	const u64 lba[] = { 0, 1000 };
	const u32 nolb[] = { 1, 1 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[2];

	CHECK_FAULT(unmap_parse(unmap_list(2, lba, nolb), &lim, &span, r),
		    ILLEGAL_REQUEST, 0x21, 0x00, 24, -1);
}

TEST(unmap_range_ending_past_capacity)
{
	const u64 lba[] = { 990 };
	const u32 nolb[] = { 11 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[1];

	CHECK_FAULT(unmap_parse(unmap_list(1, lba, nolb), &lim, &span, r),
		    ILLEGAL_REQUEST, 0x21, 0x00, 8, -1);
}

TEST(unmap_last_block)
{
	const u64 lba[] = { 999 };
	const u32 nolb[] = { 1 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[1];

	CHECK_OK(unmap_parse(unmap_list(1, lba, nolb), &lim, &span, r));
	CHECK_EQ(span.first, 999);
	CHECK_EQ(span.end, 1000);
}

/* LBA + NUMBER OF LOGICAL BLOCKS past 2^64 must not wrap into range. */
TEST(unmap_lba_plus_nolb_wraps_u64)
{
	const struct vaai_unmap_limits huge = {
		.nr_blocks = U64_MAX, .max_descs = 8, .max_lbas = U32_MAX,
	};
	const u64 lba[] = { U64_MAX - 2 };
	const u32 nolb[] = { 8 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[1];

	CHECK_FAULT(unmap_parse(unmap_list(1, lba, nolb), &huge, &span, r),
		    ILLEGAL_REQUEST, 0x21, 0x00, 8, -1);
}

TEST(unmap_sum_over_max_lba_count)
{
	const u64 lba[] = { 0, 0, 0 };
	const u32 nolb[] = { 300, 300, 1 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[3];

	CHECK_OK(unmap_parse(unmap_list(2, lba, nolb), &lim, &span, r));
	CHECK_EQ(span.blocks, 600);
	/* the third descriptor's NUMBER OF LOGICAL BLOCKS, byte 8 + 32 + 8 */
	CHECK_FAULT(unmap_parse(unmap_list(3, lba, nolb), &lim, &span, r),
		    ILLEGAL_REQUEST, 0x26, 0x00, 48, -1);
}

TEST(unmap_zero_block_descriptor_is_no_error)
{
	const u64 lba[] = { U64_MAX, 7 };
	const u32 nolb[] = { 0, 2 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[2];

	CHECK_OK(unmap_parse(unmap_list(2, lba, nolb), &lim, &span, r));
	CHECK_EQ(span.nr, 1);
	CHECK_EQ(r[0].lba, 7);
}

TEST(unmap_overlapping_ranges_span)
{
	const u64 lba[] = { 50, 10, 40 };
	const u32 nolb[] = { 10, 5, 30 };
	struct vaai_unmap_span span;
	struct vaai_unmap_range r[3];

	CHECK_OK(unmap_parse(unmap_list(3, lba, nolb), &lim, &span, r));
	CHECK_EQ(span.nr, 3);
	CHECK_EQ(span.blocks, 45);
	CHECK_EQ(span.first, 10);
	CHECK_EQ(span.end, 70);
}

TEST(unmap_most_descriptors_a_list_can_hold)
{
	static u64 lba[MAX_DESCS];
	static u32 nolb[MAX_DESCS];
	static struct vaai_unmap_range r[MAX_DESCS];
	const struct vaai_unmap_limits l = {
		.nr_blocks = 1 << 20, .max_descs = MAX_DESCS, .max_lbas = 1 << 20,
	};
	struct vaai_unmap_span span;
	unsigned int i;

	for (i = 0; i < MAX_DESCS; i++) {
		lba[i] = i * 2;
		nolb[i] = 1;
	}
	CHECK_OK(unmap_parse(unmap_list(MAX_DESCS, lba, nolb), &l, &span, r));
	CHECK_EQ(span.nr, MAX_DESCS);
	CHECK_EQ(r[MAX_DESCS - 1].lba, 2 * (MAX_DESCS - 1));
}
