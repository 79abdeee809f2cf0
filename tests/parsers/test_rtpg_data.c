// SPDX-License-Identifier: GPL-2.0
/* REPORT TARGET PORT GROUPS parameter data (vaai_rtpg_data.c), SPC-4 6.36. */
#include "harness.h"

static const struct vaai_rtpg_group node1 = {
	.id = 1, .state = 0x0, .supported = 0x85, .pref = true,
};
static const struct vaai_rtpg_group node2 = {
	.id = 2, .state = 0x2, .supported = 0x85, .status = 0x02,
};

/* node 1's group with port 0xa001, an empty group, node 2's with 0xa002. */
static u32 two_groups(u8 *buf, u32 cap, bool ext)
{
	const struct vaai_rtpg_group empty = { .id = 3 };
	struct vaai_rtpg_out o;

	memset(buf, 0, cap);
	vaai_rtpg_begin(&o, buf, cap, ext, 7);
	vaai_rtpg_group(&o, &node1);
	vaai_rtpg_port(&o, 0xa001);
	vaai_rtpg_group_end(&o);
	vaai_rtpg_group(&o, &empty);
	vaai_rtpg_group_end(&o);
	vaai_rtpg_group(&o, &node2);
	vaai_rtpg_port(&o, 0xa002);
	vaai_rtpg_group_end(&o);
	return vaai_rtpg_end(&o);
}

TEST(rtpg_length_only_header)
{
	static const u8 want[] = {
		0, 0, 0, 24,
		0x80, 0x85, 0, 1, 0, 0, 0, 1,  0, 0, 0xa0, 0x01,
		0x02, 0x85, 0, 2, 0, 2, 0, 1,  0, 0, 0xa0, 0x02,
	};
	u8 buf[64];

	CHECK_EQ(two_groups(buf, sizeof(buf), false), sizeof(want));
	CHECK(!memcmp(buf, want, sizeof(want)));
}

TEST(rtpg_extended_header_counts_its_bytes)
{
	u8 buf[64];

	CHECK_EQ(two_groups(buf, sizeof(buf), true), 8 + 24);
	/* n - 3: bytes 4-7 of the extended header are in the length */
	CHECK_EQ(get_unaligned_be32(buf), 28);
	CHECK_EQ(buf[4], 0x10);
	CHECK_EQ(buf[5], 7);
	CHECK_EQ(buf[8], 0x80);
	CHECK_EQ(get_unaligned_be16(&buf[8 + 12 + 2]), 2);
}

TEST(rtpg_short_buffer_still_counts_everything)
{
	u8 full[64], cut[64];
	u32 cap;

	two_groups(full, sizeof(full), false);
	for (cap = 0; cap < 28; cap++) {
		memset(cut, 0xee, sizeof(cut));
		CHECK_EQ(two_groups(cut, cap, false), 28);
		CHECK(!memcmp(cut, full, cap));
		/* nothing written past the buffer */
		CHECK_EQ(cut[cap], 0xee);
	}
}

TEST(rtpg_port_count_stops_at_255)
{
	static u8 buf[8 + 8 + 256 * 4];
	struct vaai_rtpg_out o;
	u32 i, len;

	memset(buf, 0, sizeof(buf));
	vaai_rtpg_begin(&o, buf, sizeof(buf), false, 0);
	vaai_rtpg_group(&o, &node1);
	for (i = 1; i <= 300; i++)
		vaai_rtpg_port(&o, i);
	vaai_rtpg_group_end(&o);
	len = vaai_rtpg_end(&o);
	CHECK_EQ(len, 4 + 8 + 255 * 4);
	CHECK_EQ(buf[4 + 7], 255);
	CHECK_EQ(get_unaligned_be16(&buf[len - 2]), 255);
}

TEST(rtpg_no_group_is_a_bare_header)
{
	struct vaai_rtpg_out o;
	u8 buf[8];

	memset(buf, 0, sizeof(buf));
	vaai_rtpg_begin(&o, buf, sizeof(buf), false, 0);
	vaai_rtpg_group(&o, &node1);
	vaai_rtpg_group_end(&o);
	CHECK_EQ(vaai_rtpg_end(&o), 4);
	CHECK_EQ(get_unaligned_be32(buf), 0);
}

TEST(rtpg_cdb_formats)
{
	u8 cdb[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0 };
	struct vaai_cdb_args a;

	CHECK_EQ(vaai_rtpg_cdb_check(cdb, NULL, &a), VAAI_CDB_OK);
	CHECK_EQ(a.size, 256);
	cdb[1] = 0x2a;
	CHECK_EQ(vaai_rtpg_cdb_check(cdb, NULL, &a), VAAI_CDB_OK);
	CHECK_EQ(VAAI_RTPG_FORMAT(cdb), VAAI_RTPG_FMT_EXTENDED);
	for (u8 fmt = 2; fmt < 8; fmt++) {
		cdb[1] = fmt << 5 | 0x0a;
		CHECK_EQ(vaai_rtpg_cdb_check(cdb, NULL, &a),
			 VAAI_CDB_INVALID_FIELD);
	}
}
