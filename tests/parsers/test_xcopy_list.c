// SPDX-License-Identifier: GPL-2.0
/*
 * The EXTENDED COPY parameter list (vaai_xcopy_list.c): every refusal of
 * docs/xcopy.md's error table that needs no real LUN, with its field
 * pointer, and what an accepted list yields.
 */
#include "harness.h"
#include "xcopy_build.h"

enum { L512, L4K, LRO, LGONE, NR_LUNS };

static const struct fake_lun luns[NR_LUNS] = {
	[L512] = { .nr_blocks = 1000, .block_size = 512 },
	[L4K] = { .nr_blocks = 100, .block_size = 4096 },
	[LRO] = { .nr_blocks = 1000, .block_size = 512, .readonly = true },
	[LGONE] = { .nr_blocks = 1000, .block_size = 512, .absent = true },
};

struct seg {
	u16 src, dst, nblocks;
	u64 slba, dlba;
	bool dc;
};

static u8 p[XLIST_MAX];
static struct vaai_xcopy_list xl;
static struct fake_nexus nx;

/* A list (no list identifier) of CSCDs naming lun[] and segments seg[]. */
static u32 xlist(unsigned int nc, const u8 *lun, unsigned int ns,
		 const struct seg *s)
{
	u32 off = VAAI_XCOPY_HDR_LEN, cscd_len;
	unsigned int i;

	for (i = 0; i < nc; i++)
		off += xlist_cscd(&p[off], lun[i], luns[lun[i]].block_size);
	cscd_len = off - VAAI_XCOPY_HDR_LEN;
	for (i = 0; i < ns; i++)
		off += xlist_b2b(&p[off], s[i].src, s[i].dst, s[i].nblocks,
				 s[i].slba, s[i].dlba, s[i].dc);
	xlist_header(p, 0, VAAI_LID_NONE, cscd_len,
		     off - VAAI_XCOPY_HDR_LEN - cscd_len, 0);
	return off;
}

static struct vaai_fault parse(u32 len)
{
	nx = (struct fake_nexus){ .lun = luns, .nr_luns = NR_LUNS };
	return vaai_xcopy_list_parse(p, len, &xl, fake_resolve, &nx);
}

/* Offsets in the list of a two-CSCD, one-segment copy. */
#define CSCD1	(VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_CSCD_LEN)
#define SEG0	(VAAI_XCOPY_HDR_LEN + 2 * VAAI_XCOPY_CSCD_LEN)

static const u8 two[] = { L512, L4K };

TEST(xcopy_accepted_copy_in_bytes)
{
	const struct seg s[] = { { 0, 1, 16, 8, 3 } };

	CHECK_OK(parse(xlist(2, two, 1, s)));
	CHECK_EQ(xl.nr_cscds, 2);
	CHECK_EQ(xl.nr_segs, 1);
	CHECK_EQ(xl.seg[0].src_pos, 8 * 512);
	CHECK_EQ(xl.seg[0].dst_pos, 3 * 4096);
	CHECK_EQ(xl.seg[0].len, 16 * 512);
	CHECK(xl.cscd[0]->src && !xl.cscd[0]->dst);
	CHECK(xl.cscd[1]->dst && !xl.cscd[1]->src);
	CHECK(!xl.listed);
}

TEST(xcopy_list_identifier_usage)
{
	const struct seg s[] = { { 0, 0, 1, 0, 1 } };
	u32 len = xlist(1, two, 1, s);

	p[0] = 7;
	p[1] = VAAI_LID_HOLD << 3;
	CHECK_OK(parse(len));
	CHECK(xl.listed && xl.hold);
	CHECK_EQ(xl.list_id, 7);
	p[1] = VAAI_LID_NO_HOLD << 3;
	CHECK_OK(parse(len));
	CHECK(xl.listed && !xl.hold);
}

TEST(xcopy_header_only_copies_nothing)
{
	CHECK_OK(parse(xlist(0, NULL, 0, NULL)));
	CHECK_EQ(xl.nr_segs, 0);
	CHECK_EQ(nx.nr_resolved, 0);
}

TEST(xcopy_list_shorter_than_header)
{
	xlist(0, NULL, 0, NULL);
	CHECK_FAULT(parse(15), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(xcopy_lengths_run_past_list)
{
	const struct seg s[] = { { 0, 1, 1, 0, 0 } };
	u32 len = xlist(2, two, 1, s);

	CHECK_FAULT(parse(len - 1), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

/* The three lengths add up past 2^32: no u32 wrap into a short sum. */
TEST(xcopy_lengths_wrap_u32)
{
	u32 len = xlist(2, two, 0, NULL);

	put_unaligned_be32(0xffffffff - 15, &p[8]);
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
	put_unaligned_be32(0, &p[8]);
	put_unaligned_be32(0xffffffff - 31, &p[12]);
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(xcopy_cscd_cut_short)
{
	u32 len = xlist(2, two, 0, NULL);

	put_unaligned_be16(2 * VAAI_XCOPY_CSCD_LEN - 1, &p[2]);
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(xcopy_segment_cut_short)
{
	const struct seg s[] = { { 0, 1, 1, 0, 0 } };
	u32 len = xlist(2, two, 1, s);

	put_unaligned_be32(VAAI_XCOPY_SEG_B2B_LEN - 1, &p[8]);
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(xcopy_inline_data)
{
	u32 len = xlist(0, NULL, 0, NULL);

	p[len] = 0xaa;
	put_unaligned_be32(1, &p[12]);
	CHECK_FAULT(parse(len + 1), ILLEGAL_REQUEST, 0x26, 0x0b, 12, -1);
}

TEST(xcopy_list_id_usage_01b)
{
	u32 len = xlist(0, NULL, 0, NULL);

	p[1] = 1 << 3;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, 1, 4);
}

TEST(xcopy_list_identifier_without_usage)
{
	u32 len = xlist(0, NULL, 0, NULL);

	p[0] = 1;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, 0, -1);
}

TEST(xcopy_cscd_type_not_identification)
{
	u32 len = xlist(2, two, 0, NULL);

	p[CSCD1] = 0xe9;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x07, CSCD1, -1);
}

/* An identification descriptor names its LUN by designator alone. */
TEST(xcopy_cscd_lu_id_type_ignored)
{
	u8 type;

	for (type = 0x40; type; type += 0x40) {
		u32 len = xlist(2, two, 0, NULL);

		p[CSCD1 + 1] = type;
		CHECK_OK(parse(len));
		CHECK_EQ(xl.nr_cscds, 2);
	}
}

TEST(xcopy_cscd_null_device)
{
	u32 len = xlist(2, two, 0, NULL);

	p[CSCD1 + 1] = 0x20;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, CSCD1 + 1, 5);
}

TEST(xcopy_cscd_device_type_not_block)
{
	u32 len = xlist(2, two, 0, NULL);

	p[CSCD1 + 1] = 0x01;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, CSCD1 + 1, 4);
}

TEST(xcopy_cscd_disk_block_length_not_the_luns)
{
	u32 len = xlist(2, two, 0, NULL);

	p[CSCD1 + 30] = 0x02;		/* 4096 -> 512 */
	p[CSCD1 + 29] = 0;
	p[CSCD1 + 31] = 0;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, CSCD1 + 29, -1);
	CHECK_EQ(xl.nr_cscds, 2);	/* resolved: the caller releases it */
}

TEST(xcopy_cscd_not_reachable)
{
	const u8 lun[] = { L512, LGONE };

	CHECK_FAULT(parse(xlist(2, lun, 0, NULL)), COPY_ABORTED, 0x0d, 0x02,
		    -1, -1);
	CHECK_EQ(xl.nr_cscds, 1);
}

TEST(xcopy_cscd_limit)
{
	u8 lun[VAAI_XCOPY_MAX_CSCDS + 1] = {};

	CHECK_OK(parse(xlist(VAAI_XCOPY_MAX_CSCDS, lun, 0, NULL)));
	CHECK_FAULT(parse(xlist(VAAI_XCOPY_MAX_CSCDS + 1, lun, 0, NULL)),
		    ILLEGAL_REQUEST, 0x26, 0x06, 2, -1);
	CHECK_EQ(xl.nr_cscds, VAAI_XCOPY_MAX_CSCDS);
}

TEST(xcopy_segment_limit)
{
	static struct seg s[VAAI_XCOPY_MAX_SEGS + 1];
	unsigned int i;

	for (i = 0; i <= VAAI_XCOPY_MAX_SEGS; i++)
		s[i] = (struct seg){ 0, 0, 1, i, i + 1 };
	CHECK_OK(parse(xlist(1, two, VAAI_XCOPY_MAX_SEGS, s)));
	CHECK_EQ(xl.nr_segs, VAAI_XCOPY_MAX_SEGS);
	CHECK_FAULT(parse(xlist(1, two, VAAI_XCOPY_MAX_SEGS + 1, s)),
		    ILLEGAL_REQUEST, 0x26, 0x08, 8, -1);
}

TEST(xcopy_segment_type_not_block_to_block)
{
	const struct seg s[] = { { 0, 1, 1, 0, 0 } };
	u32 len = xlist(2, two, 1, s);

	p[SEG0] = 0x0a;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x09, SEG0, -1);
}

TEST(xcopy_segment_descriptor_length)
{
	const struct seg s[] = { { 0, 1, 1, 0, 0 } };
	u32 len = xlist(2, two, 1, s);

	p[SEG0 + 3] = 0x19;
	CHECK_FAULT(parse(len), ILLEGAL_REQUEST, 0x26, 0x00, SEG0 + 2, -1);
}

TEST(xcopy_segment_cscd_index_past_list)
{
	const struct seg src[] = { { 2, 1, 1, 0, 0 } };
	const struct seg dst[] = { { 0, 0xffff, 1, 0, 0 } };

	/* UNREACHABLE COPY TARGET */
	CHECK_FAULT(parse(xlist(2, two, 1, src)), COPY_ABORTED, 0x08, 0x04,
		    -1, -1);
	CHECK_FAULT(parse(xlist(2, two, 1, dst)), COPY_ABORTED, 0x08, 0x04,
		    -1, -1);
}

TEST(xcopy_readonly_destination_not_reachable)
{
	const u8 lun[] = { L512, LRO };
	const struct seg to_ro[] = { { 0, 1, 1, 0, 0 } };
	const struct seg from_ro[] = { { 1, 0, 1, 0, 0 } };

	CHECK_FAULT(parse(xlist(2, lun, 1, to_ro)), COPY_ABORTED, 0x0d, 0x02,
		    -1, -1);
	CHECK_OK(parse(xlist(2, lun, 1, from_ro)));
}

TEST(xcopy_inexact_segment)
{
	/* one 512-byte source block is not a whole 4096-byte block */
	const struct seg s[] = { { 0, 1, 1, 0, 0 } };

	CHECK_FAULT(parse(xlist(2, two, 1, s)), ILLEGAL_REQUEST, 0x26, 0x0a,
		    SEG0 + 10, -1);
}

TEST(xcopy_dc_counts_destination_blocks)
{
	const struct seg s[] = { { 0, 1, 2, 0, 0, true } };

	CHECK_OK(parse(xlist(2, two, 1, s)));
	CHECK_EQ(xl.seg[0].len, 2 * 4096);
}

TEST(xcopy_source_range_past_capacity)
{
	const struct seg past[] = { { 0, 1, 8, 993, 0 } };
	const struct seg last[] = { { 0, 1, 8, 992, 0 } };

	/* COPY TARGET DEVICE NOT REACHABLE */
	CHECK_FAULT(parse(xlist(2, two, 1, past)), COPY_ABORTED, 0x0d, 0x02,
		    -1, -1);
	CHECK_OK(parse(xlist(2, two, 1, last)));
}

TEST(xcopy_destination_range_past_capacity)
{
	const struct seg s[] = { { 0, 1, 8, 0, 100 } };

	CHECK_FAULT(parse(xlist(2, two, 1, s)), COPY_ABORTED, 0x0d, 0x02,
		    -1, -1);
}

TEST(xcopy_lba_near_u64_max)
{
	const struct seg s[] = { { 0, 1, 8, U64_MAX, 0 } };

	CHECK_FAULT(parse(xlist(2, two, 1, s)), COPY_ABORTED, 0x0d, 0x02,
		    -1, -1);
}

TEST(xcopy_zero_block_segment)
{
	const struct seg s[] = { { 0, 1, 0, 999, 99 } };

	CHECK_OK(parse(xlist(2, two, 1, s)));
	CHECK_EQ(xl.seg[0].len, 0);
}

TEST(xcopy_first_fault_wins)
{
	/* a bad second segment is not looked at after a bad first one */
	const struct seg s[] = { { 0, 5, 1, 0, 0 }, { 0, 1, 1, 5000, 0 } };

	CHECK_FAULT(parse(xlist(2, two, 2, s)), COPY_ABORTED, 0x08, 0x04,
		    -1, -1);
}
