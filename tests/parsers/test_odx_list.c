// SPDX-License-Identifier: GPL-2.0
/*
 * The token copy (ODX) lists (vaai_odx_list.c): every refusal of
 * docs/odx.md's table that the parser owns, with its field pointer, what an
 * accepted POPULATE TOKEN or WRITE USING TOKEN list yields, the ROD token
 * header check, and how vaai_odx_map() lays a token over destination ranges.
 */
#include "harness.h"

#define PT_HDR		VAAI_ODX_PT_HDR_LEN
#define WUT_HDR		VAAI_ODX_WUT_HDR_LEN
/* A POPULATE TOKEN field's offset in a WRITE USING TOKEN list: 14 -> 534. */
#define IN_WUT(byte)	((byte) + WUT_HDR - PT_HDR)
#define DESC(i)		(PT_HDR + (i) * VAAI_ODX_RANGE_LEN)
#define GIB		(1ULL << 30)

static const struct vaai_odx_lun lun = { .nr_blocks = 1000, .block_size = 512 };
static const struct vaai_odx_lun big512 = { .nr_blocks = 1ULL << 32,
					    .block_size = 512 };
static const struct vaai_odx_lun big4k = { .nr_blocks = 1ULL << 32,
					   .block_size = 4096 };

static u8 p[WUT_HDR + (VAAI_ODX_MAX_RANGES + 1) * VAAI_ODX_RANGE_LEN];
static struct vaai_odx_list l;

/*
 * A list with a header of hdr bytes (zeros but for the lengths) and the
 * ranges r[]; DATA LENGTH counts exactly those.  Its length.
 */
static u32 odx_list(u32 hdr, const struct vaai_odx_range *r, unsigned int nr)
{
	u32 rdl = nr * VAAI_ODX_RANGE_LEN;
	unsigned int i;

	memset(p, 0, sizeof(p));
	put_unaligned_be16(hdr - 2 + rdl, &p[0]);
	put_unaligned_be16(rdl, &p[hdr - 2]);
	for (i = 0; i < nr; i++) {
		put_unaligned_be64(r[i].lba, &p[hdr + i * VAAI_ODX_RANGE_LEN]);
		put_unaligned_be32(r[i].nolb, &p[hdr + i * VAAI_ODX_RANGE_LEN + 8]);
	}
	return hdr + rdl;
}

static struct vaai_fault pt(const struct vaai_odx_lun *on,
			    const struct vaai_odx_range *r, unsigned int nr)
{
	return vaai_odx_pt_parse(p, odx_list(PT_HDR, r, nr), on, &l);
}

static struct vaai_fault wut(const struct vaai_odx_lun *on,
			     const struct vaai_odx_range *r, unsigned int nr)
{
	return vaai_odx_wut_parse(p, odx_list(WUT_HDR, r, nr), on, &l);
}

/* Both lists of the ranges r[] refused alike, at byte of POPULATE TOKEN's. */
#define CHECK_BOTH(on, r, nr, asc, ascq, byte)				\
	do {								\
		CHECK_FAULT(pt(on, r, nr), ILLEGAL_REQUEST, asc, ascq,	\
			    byte, -1);					\
		CHECK_FAULT(wut(on, r, nr), ILLEGAL_REQUEST, asc, ascq,	\
			    IN_WUT(byte), -1);				\
	} while (0)

/* The i-th accepted range is (lba, nolb). */
#define CHECK_RANGE(i, b, n)						\
	do {								\
		CHECK_EQ(l.range[i].lba, b);				\
		CHECK_EQ(l.range[i].nolb, n);				\
	} while (0)

TEST(odx_pt_accepted)
{
	const struct vaai_odx_range r[] = { { 10, 8 }, { 0, 2 } };

	CHECK_OK(pt(&lun, r, 2));
	CHECK_EQ(l.nr, 2);
	CHECK_EQ(l.blocks, 10);
	CHECK_RANGE(0, 10, 8);
	CHECK_RANGE(1, 0, 2);
	CHECK_EQ(l.rod_type, 0);	/* ours to choose */
	CHECK(!l.immed && !l.rtv);
}

TEST(odx_pt_immed)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	p[2] = 0x01;
	CHECK_OK(vaai_odx_pt_parse(p, len, &lun, &l));
	CHECK(l.immed && !l.rtv);
}

TEST(odx_short_header_is_length_error)
{
	odx_list(PT_HDR, NULL, 0);
	CHECK_FAULT(vaai_odx_pt_parse(p, PT_HDR - 1, &lun, &l),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
	odx_list(WUT_HDR, NULL, 0);
	CHECK_FAULT(vaai_odx_wut_parse(p, WUT_HDR - 1, &lun, &l),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(odx_data_length_past_list)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	CHECK_FAULT(vaai_odx_pt_parse(p, len - 1, &lun, &l),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
	len = odx_list(WUT_HDR, r, 1);
	CHECK_FAULT(vaai_odx_wut_parse(p, len - 1, &lun, &l),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

/* DATA LENGTH inside the list, the ranges' length past it. */
TEST(odx_range_length_past_list)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	put_unaligned_be16(2 * VAAI_ODX_RANGE_LEN, &p[14]);
	CHECK_FAULT(vaai_odx_pt_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x1a, 0x00, -1, -1);
}

TEST(odx_data_length_short_for_ranges)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	put_unaligned_be16(get_unaligned_be16(&p[0]) - 1, &p[0]);
	CHECK_FAULT(vaai_odx_pt_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x26, 0x00, 0, -1);
	len = odx_list(WUT_HDR, r, 1);
	put_unaligned_be16(get_unaligned_be16(&p[0]) - 1, &p[0]);
	CHECK_FAULT(vaai_odx_wut_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x26, 0x00, 0, -1);
}

TEST(odx_no_range_descriptors)
{
	CHECK_BOTH(&lun, NULL, 0, 0x26, 0x00, 14);
}

TEST(odx_range_length_not_multiple_of_16)
{
	const struct vaai_odx_range r[] = { { 0, 1 }, { 5, 1 } };
	u32 len = odx_list(PT_HDR, r, 2);

	put_unaligned_be16(VAAI_ODX_RANGE_LEN + 1, &p[14]);
	CHECK_FAULT(vaai_odx_pt_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x26, 0x00, 14, -1);
	len = odx_list(WUT_HDR, r, 2);
	put_unaligned_be16(VAAI_ODX_RANGE_LEN + 1, &p[534]);
	CHECK_FAULT(vaai_odx_wut_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x26, 0x00, 534, -1);
}

TEST(odx_64_ranges_at_most)
{
	struct vaai_odx_range r[VAAI_ODX_MAX_RANGES + 1];
	unsigned int i;

	for (i = 0; i <= VAAI_ODX_MAX_RANGES; i++)
		r[i] = (struct vaai_odx_range){ i * 2, 1 };
	CHECK_OK(pt(&lun, r, VAAI_ODX_MAX_RANGES));
	CHECK_EQ(l.nr, VAAI_ODX_MAX_RANGES);
	CHECK_RANGE(VAAI_ODX_MAX_RANGES - 1, 126, 1);
	CHECK_OK(wut(&lun, r, VAAI_ODX_MAX_RANGES));
	CHECK_BOTH(&lun, r, VAAI_ODX_MAX_RANGES + 1, 0x26, 0x08, 14);
}

TEST(odx_lba_past_capacity)
{
	const struct vaai_odx_range r[] = { { 0, 1 }, { 1000, 1 } };

	CHECK_BOTH(&lun, r, 2, 0x21, 0x00, DESC(1));
}

TEST(odx_range_ending_past_capacity)
{
	const struct vaai_odx_range r[] = { { 990, 11 } };

	CHECK_BOTH(&lun, r, 1, 0x21, 0x00, DESC(0));
}

TEST(odx_last_lba)
{
	const struct vaai_odx_range r[] = { { 999, 1 }, { 0, 999 } };

	CHECK_OK(pt(&lun, r, 2));
	CHECK_EQ(l.blocks, 1000);
	CHECK_OK(wut(&lun, r, 2));
	CHECK_RANGE(0, 999, 1);
}

/* LBA + NUMBER OF LOGICAL BLOCKS past 2^64 must not wrap into range. */
TEST(odx_lba_plus_nolb_wraps_u64)
{
	const struct vaai_odx_lun huge = { .nr_blocks = U64_MAX,
					   .block_size = 4096 };
	const struct vaai_odx_range r[] = { { U64_MAX - 2, 8 } };

	CHECK_BOTH(&huge, r, 1, 0x21, 0x00, DESC(0));
}

TEST(odx_overlap_at_later_descriptor)
{
	const struct vaai_odx_range r[] = { { 10, 10 }, { 30, 5 }, { 19, 2 } };

	CHECK_BOTH(&lun, r, 3, 0x26, 0x00, DESC(2));
}

TEST(odx_adjacent_ranges_do_not_overlap)
{
	const struct vaai_odx_range r[] = { { 10, 10 }, { 0, 10 }, { 20, 1 } };

	CHECK_OK(pt(&lun, r, 3));
	CHECK_EQ(l.blocks, 21);
}

TEST(odx_zero_block_descriptors_left_out)
{
	/* past capacity, and inside another range: neither matters */
	const struct vaai_odx_range r[] = {
		{ U64_MAX, 0 }, { 10, 10 }, { 15, 0 }, { 40, 2 },
	};

	CHECK_OK(pt(&lun, r, 4));
	CHECK_EQ(l.nr, 2);
	CHECK_EQ(l.blocks, 12);
	CHECK_RANGE(0, 10, 10);
	CHECK_RANGE(1, 40, 2);
}

TEST(odx_only_zero_block_descriptors)
{
	const struct vaai_odx_range r[] = { { 5, 0 } };

	CHECK_OK(wut(&lun, r, 1));
	CHECK_EQ(l.nr, 0);
	CHECK_EQ(l.blocks, 0);
}

TEST(odx_one_gib_at_most_512)
{
	const struct vaai_odx_range ok[] = { { 7, GIB / 512 } };
	const struct vaai_odx_range over[] = { { 0, GIB / 1024 },
					       { 1ULL << 31, GIB / 1024 + 1 } };

	CHECK_OK(pt(&big512, ok, 1));
	CHECK_EQ(l.blocks, GIB / 512);
	CHECK_BOTH(&big512, over, 2, 0x26, 0x00, 14);
}

TEST(odx_one_gib_at_most_4096)
{
	const struct vaai_odx_range ok[] = { { 0, GIB / 4096 } };
	const struct vaai_odx_range over[] = { { 0, GIB / 4096 + 1 } };

	CHECK_OK(wut(&big4k, ok, 1));
	CHECK_EQ(l.blocks, GIB / 4096);
	CHECK_BOTH(&big4k, over, 1, 0x26, 0x00, 14);
}

/* A POPULATE TOKEN of one range with timeout and ROD TYPE set. */
static struct vaai_fault pt_with(u8 flags, u32 timeout, u32 rod_type)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	p[2] = flags;
	put_unaligned_be32(timeout, &p[4]);
	put_unaligned_be32(rod_type, &p[8]);
	return vaai_odx_pt_parse(p, len, &lun, &l);
}

#define RTV	0x02

TEST(odx_timeout_above_3600)
{
	CHECK_FAULT(pt_with(0, 3601, 0), ILLEGAL_REQUEST, 0x26, 0x00, 4, -1);
	CHECK_FAULT(pt_with(0, U32_MAX, 0), ILLEGAL_REQUEST, 0x26, 0x00, 4, -1);
	CHECK_OK(pt_with(0, 3600, 0));
	CHECK_EQ(l.timeout, 3600);
	CHECK_OK(pt_with(0, 1, 0));
	CHECK_EQ(l.timeout, 1);
}

TEST(odx_timeout_0_is_default)
{
	CHECK_OK(pt_with(0, 0, 0));
	CHECK_EQ(l.timeout, VAAI_ODX_DEFAULT_TIMEOUT);
	CHECK_EQ(l.timeout, 60);
}

TEST(odx_rtv_other_rod_type)
{
	CHECK_FAULT(pt_with(RTV, 0, VAAI_ROD_TYPE_ZERO),
		    ILLEGAL_REQUEST, 0x26, 0x00, 8, -1);
	CHECK_FAULT(pt_with(RTV, 0, 0x00800003),
		    ILLEGAL_REQUEST, 0x26, 0x00, 8, -1);
	CHECK_FAULT(pt_with(RTV, 0, 0x00010001),
		    ILLEGAL_REQUEST, 0x26, 0x00, 8, -1);
}

/* The types a POPULATE TOKEN may ask for are handed on as asked. */
TEST(odx_rtv_types_we_make_accepted)
{
	static const u32 types[] = {
		0, VAAI_ROD_TYPE_AUR, 0x00800000, 0x00800001, 0x00800002,
		0x0080ffff,
	};
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		CHECK_OK(pt_with(RTV, 0, types[i]));
		CHECK(l.rtv);
		CHECK_EQ(l.rod_type, types[i]);
	}
}

/* Without RTV the ROD TYPE field is not looked at. */
TEST(odx_rod_type_ignored_without_rtv)
{
	CHECK_OK(pt_with(0, 0, 0xdeadbeef));
	CHECK(!l.rtv);
	CHECK_EQ(l.rod_type, 0);
}

/* The first fault in list order: the timeout before the ranges. */
TEST(odx_first_fault_in_list_order)
{
	const struct vaai_odx_range r[] = { { 1000, 1 } };
	u32 len = odx_list(PT_HDR, r, 1);

	put_unaligned_be32(3601, &p[4]);
	CHECK_FAULT(vaai_odx_pt_parse(p, len, &lun, &l),
		    ILLEGAL_REQUEST, 0x26, 0x00, 4, -1);
}

TEST(odx_wut_fields)
{
	const struct vaai_odx_range r[] = { { 100, 4 }, { 7, 0 }, { 3, 2 } };
	u32 len = odx_list(WUT_HDR, r, 3);

	p[2] = 0x03;
	put_unaligned_be64(0x0102030405060708ULL, &p[8]);
	CHECK_OK(vaai_odx_wut_parse(p, len, &lun, &l));
	CHECK(l.immed && l.del_tkn);
	CHECK_EQ(l.offset, 0x0102030405060708ULL);
	CHECK(l.token == p + VAAI_ODX_TOKEN_OFF);
	CHECK(l.token == p + 16);
	CHECK_EQ(l.nr, 2);
	CHECK_EQ(l.blocks, 6);
	CHECK_RANGE(1, 3, 2);
}

TEST(odx_wut_flags_clear)
{
	const struct vaai_odx_range r[] = { { 0, 1 } };

	CHECK_OK(wut(&lun, r, 1));
	CHECK(!l.immed && !l.del_tkn);
	CHECK_EQ(l.offset, 0);
}

static u8 tok[VAAI_ODX_TOKEN_LEN];

/* A token header of this ROD TYPE and ROD TOKEN LENGTH. */
static struct vaai_fault token(u32 rod_type, u16 len, u32 *type)
{
	memset(tok, 0xa5, sizeof(tok));
	put_unaligned_be32(rod_type, &tok[0]);
	put_unaligned_be16(len, &tok[6]);
	return vaai_odx_token_check(tok, type);
}

TEST(odx_token_aur_and_zero_accepted)
{
	u32 type = 0;

	CHECK_OK(token(VAAI_ROD_TYPE_AUR, 0x1f8, &type));
	CHECK_EQ(type, VAAI_ROD_TYPE_AUR);
	CHECK_OK(token(VAAI_ROD_TYPE_ZERO, 0x1f8, &type));
	CHECK_EQ(type, 0xffff0001);
	CHECK_OK(token(0x00800001, 0x1f8, &type));
	CHECK_EQ(type, 0x00800001);
	CHECK_OK(token(0x00800002, 0x1f8, &type));
	CHECK_EQ(type, 0x00800002);
}

TEST(odx_token_other_type)
{
	u32 type;

	CHECK_FAULT(token(0, 0x1f8, &type), ILLEGAL_REQUEST, 0x23, 0x01, 16, -1);
	/* asked for in POPULATE TOKEN; no token is of these types */
	CHECK_FAULT(token(0x00800000, 0x1f8, &type),
		    ILLEGAL_REQUEST, 0x23, 0x01, 16, -1);
	CHECK_FAULT(token(0x0080ffff, 0x1f8, &type),
		    ILLEGAL_REQUEST, 0x23, 0x01, 16, -1);
	/* the type is looked at before the length */
	CHECK_FAULT(token(0xffff0000, 0, &type),
		    ILLEGAL_REQUEST, 0x23, 0x01, 16, -1);
}

TEST(odx_token_length_not_1f8)
{
	u32 type;

	CHECK_FAULT(token(VAAI_ROD_TYPE_AUR, 0x1f7, &type),
		    ILLEGAL_REQUEST, 0x23, 0x0a, 22, -1);
	CHECK_FAULT(token(VAAI_ROD_TYPE_ZERO, 0x200, &type),
		    ILLEGAL_REQUEST, 0x23, 0x0a, 22, -1);
}

/* vaai_odx_map(): the token src[] (blocks of sbs) from byte skip on dst[]. */
static struct vaai_xseg seg[8];
static u64 bytes;

static unsigned int map(const struct vaai_odx_range *src, unsigned int nr_src,
			u32 sbs, u64 skip, const struct vaai_odx_range *dst,
			unsigned int nr_dst, u32 dbs)
{
	memset(seg, 0xff, sizeof(seg));
	bytes = U64_MAX;
	return vaai_odx_map(src, nr_src, sbs, skip, dst, nr_dst, dbs, seg,
			    ARRAY_SIZE(seg), &bytes);
}

/* A segment moving len bytes from byte s of CSCD 0 to byte d of CSCD 1. */
#define SEG(s, d, len)	{ 0, 1, s, d, len }

/* map() returned n, made exactly the segments w[] and moved b bytes. */
#define CHECK_MAP(n, w, b)						\
	do {								\
		unsigned int _i, _n = (n);				\
									\
		CHECK_EQ(_n, ARRAY_SIZE(w));				\
		for (_i = 0; _i < _n && _i < ARRAY_SIZE(w); _i++) {	\
			CHECK_EQ(seg[_i].src, (w)[_i].src);		\
			CHECK_EQ(seg[_i].dst, (w)[_i].dst);		\
			CHECK_EQ(seg[_i].src_pos, (w)[_i].src_pos);	\
			CHECK_EQ(seg[_i].dst_pos, (w)[_i].dst_pos);	\
			CHECK_EQ(seg[_i].len, (w)[_i].len);		\
		}							\
		CHECK_EQ(bytes, b);					\
	} while (0)

/* map() made no segment and moved nothing. */
#define CHECK_MAP_NONE(n)						\
	do {								\
		CHECK_EQ(n, 0);						\
		CHECK_EQ(bytes, 0);					\
	} while (0)

TEST(odx_map_same_block_size)
{
	const struct vaai_odx_range s[] = { { 100, 8 } }, d[] = { { 200, 8 } };
	const struct vaai_xseg w[] = { SEG(100 * 512, 200 * 512, 8 * 512) };

	CHECK_MAP(map(s, 1, 512, 0, d, 1, 512), w, 8 * 512);
}

TEST(odx_map_skip_into_a_range)
{
	const struct vaai_odx_range s[] = { { 100, 8 } }, d[] = { { 200, 4 } };
	const struct vaai_xseg w[] = { SEG(103 * 512, 200 * 512, 4 * 512) };

	CHECK_MAP(map(s, 1, 512, 3 * 512, d, 1, 512), w, 4 * 512);
}

TEST(odx_map_skip_over_first_range)
{
	const struct vaai_odx_range s[] = { { 0, 4 }, { 50, 4 } };
	const struct vaai_odx_range d[] = { { 10, 2 } };
	const struct vaai_xseg in2nd[] = { SEG(52 * 512, 10 * 512, 2 * 512) };
	const struct vaai_xseg at2nd[] = { SEG(50 * 512, 10 * 512, 2 * 512) };

	CHECK_MAP(map(s, 2, 512, 6 * 512, d, 1, 512), in2nd, 2 * 512);
	/* skip exactly at the end of the first range */
	CHECK_MAP(map(s, 2, 512, 4 * 512, d, 1, 512), at2nd, 2 * 512);
}

TEST(odx_map_several_sources_one_destination)
{
	const struct vaai_odx_range s[] = { { 0, 2 }, { 10, 3 }, { 20, 1 } };
	const struct vaai_odx_range d[] = { { 100, 6 } };
	const struct vaai_xseg w[] = {
		SEG(0, 100 * 512, 2 * 512),
		SEG(10 * 512, 102 * 512, 3 * 512),
		SEG(20 * 512, 105 * 512, 512),
	};

	CHECK_MAP(map(s, 3, 512, 0, d, 1, 512), w, 6 * 512);
}

TEST(odx_map_one_source_several_destinations)
{
	const struct vaai_odx_range s[] = { { 0, 6 } };
	const struct vaai_odx_range d[] = { { 100, 1 }, { 200, 2 }, { 300, 3 } };
	const struct vaai_xseg w[] = {
		SEG(0, 100 * 512, 512),
		SEG(512, 200 * 512, 2 * 512),
		SEG(3 * 512, 300 * 512, 3 * 512),
	};

	CHECK_MAP(map(s, 1, 512, 0, d, 3, 512), w, 6 * 512);
}

/* A source boundary inside a destination block splits the segment there. */
TEST(odx_map_512_source_onto_4096_destination)
{
	const struct vaai_odx_range s[] = { { 0, 4 }, { 16, 12 } };
	const struct vaai_odx_range d[] = { { 5, 2 } };
	const struct vaai_xseg w[] = {
		SEG(0, 5 * 4096, 4 * 512),
		SEG(16 * 512, 5 * 4096 + 4 * 512, 12 * 512),
	};

	CHECK_MAP(map(s, 2, 512, 0, d, 1, 4096), w, 2 * 4096);
}

TEST(odx_map_token_shorter_than_destination)
{
	const struct vaai_odx_range s[] = { { 0, 9 } };
	const struct vaai_odx_range d4k[] = { { 0, 2 } }, d[] = { { 40, 5 } };
	const struct vaai_xseg one4k[] = { SEG(0, 0, 4096) };
	const struct vaai_xseg w[] = { SEG(6 * 512, 40 * 512, 3 * 512) };

	/* 4608 bytes onto 4096-byte blocks: one whole block, no more */
	CHECK_MAP(map(s, 1, 512, 0, d4k, 1, 4096), one4k, 4096);
	/* 512 bytes left after the skip: not a whole destination block */
	CHECK_MAP_NONE(map(s, 1, 512, 8 * 512, d4k, 1, 4096));
	CHECK_MAP(map(s, 1, 512, 6 * 512, d, 1, 512), w, 3 * 512);
}

TEST(odx_map_token_longer_than_destination)
{
	const struct vaai_odx_range s[] = { { 0, 100 }, { 200, 100 } };
	const struct vaai_odx_range d[] = { { 7, 4 } };
	const struct vaai_xseg w[] = { SEG(0, 7 * 512, 4 * 512) };

	CHECK_MAP(map(s, 2, 512, 0, d, 1, 512), w, 4 * 512);
}

TEST(odx_map_skip_at_or_past_end)
{
	const struct vaai_odx_range s[] = { { 0, 4 }, { 8, 4 } };
	const struct vaai_odx_range d[] = { { 0, 8 } };

	CHECK_MAP_NONE(map(s, 2, 512, 8 * 512, d, 1, 512));
	CHECK_MAP_NONE(map(s, 2, 512, 8 * 512 + 1, d, 1, 512));
	CHECK_MAP_NONE(map(s, 2, 512, U64_MAX, d, 1, 512));
}
