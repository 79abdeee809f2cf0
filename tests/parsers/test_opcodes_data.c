// SPDX-License-Identifier: GPL-2.0
/* REPORT SUPPORTED OPERATION CODES (vaai_opcodes_data.c), SPC-4 6.35. */
#include "harness.h"

#define ALL_FEATURES	0x3f

static u8 data[4096];
static unsigned int nr_puts, puts_past_alloc;
static u32 alloc;

static void put(void *ctx, const void *buf, u32 len, u32 off)
{
	nr_puts++;
	if (off + len > alloc)
		puts_past_alloc++;
	else
		memcpy(&data[off], buf, len);
}

/* Report for cdb (options, opcode, service action) into data[]. */
static struct vaai_fault report(u8 b2, u8 op, u16 sa, u32 features, u32 al,
				u32 *len)
{
	const struct vaai_opcodes_out out = { al, put, NULL };
	u8 cdb[12] = { MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES, b2, op };

	put_unaligned_be16(sa, &cdb[4]);
	put_unaligned_be32(al, &cdb[6]);
	memset(data, 0, sizeof(data));
	nr_puts = puts_past_alloc = 0;
	alloc = al;
	*len = 0;
	return vaai_opcodes_report(cdb, features, &out, len);
}

/* The all_commands descriptor of opcode op (and sa), or NULL. */
static const u8 *find_desc(u32 total, u8 op, u16 sa, u32 step)
{
	u32 off;

	for (off = 4; off + step <= total; off += step)
		if (data[off] == op && get_unaligned_be16(&data[off + 2]) == sa)
			return &data[off];
	return NULL;
}

TEST(opcodes_all_commands_follow_features)
{
	u32 len, with;

	CHECK_OK(report(0, 0, 0, ALL_FEATURES, sizeof(data), &len));
	with = len;
	CHECK_EQ(get_unaligned_be32(data), len - 4);
	CHECK_EQ((len - 4) % 8, 0);
	CHECK(find_desc(len, COMPARE_AND_WRITE, 0, 8) != NULL);
	CHECK(find_desc(len, EXTENDED_COPY, 0, 8) != NULL);
	CHECK_OK(report(0, 0, 0, ALL_FEATURES & ~VAAI_OPC_CAW, sizeof(data), &len));
	CHECK_EQ(len, with - 8);
	CHECK(find_desc(len, COMPARE_AND_WRITE, 0, 8) == NULL);
	CHECK_EQ(puts_past_alloc, 0);
}

TEST(opcodes_rctd_adds_command_timeouts)
{
	const u8 *d;
	u32 plain, len;

	CHECK_OK(report(0, 0, 0, ALL_FEATURES, sizeof(data), &plain));
	CHECK_OK(report(0x80, 0, 0, ALL_FEATURES, sizeof(data), &len));
	CHECK_EQ((len - 4) / 20, (plain - 4) / 8);
	d = find_desc(len, MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES, 20);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ(d[5], 0x02 | 0x01);		/* CTDP, SERVACTV */
		CHECK_EQ(get_unaligned_be16(&d[8]), 10);
	}
}

TEST(opcodes_one_command_usage_data)
{
	u32 len;

	CHECK_OK(report(1, COMPARE_AND_WRITE, 0, VAAI_OPC_CAW, sizeof(data), &len));
	CHECK_EQ(len, 4 + 16);
	CHECK_EQ(data[1], 0x03);			/* supported */
	CHECK_EQ(get_unaligned_be16(&data[2]), 16);
	CHECK_EQ(data[4], COMPARE_AND_WRITE);
	CHECK_EQ(data[5], 0x00);			/* no DPO, no FUA */
}

/* DPO and FUA are usable exactly when MODE SENSE's DPOFUA bit is set. */
TEST(opcodes_one_command_dpofua_follows_the_feature)
{
	static const struct { u8 op; u8 without, with; } cases[] = {
		{ COMPARE_AND_WRITE, 0x00, 0x18 },
		{ READ_10, 0xe0, 0xf8 },
		{ WRITE_16, 0xe0, 0xf8 },
		{ VERIFY_16, 0x06, 0x16 },
	};
	u32 len;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK_OK(report(1, cases[i].op, 0, VAAI_OPC_CAW, sizeof(data), &len));
		CHECK_EQ(data[5], cases[i].without);
		CHECK_OK(report(1, cases[i].op, 0, VAAI_OPC_CAW | VAAI_OPC_DPOFUA,
				sizeof(data), &len));
		CHECK_EQ(data[5], cases[i].with);
	}
}

TEST(opcodes_one_command_turned_off_not_supported)
{
	u32 len;

	CHECK_OK(report(3, UNMAP, 0, 0, sizeof(data), &len));
	CHECK_EQ(len, 4);
	CHECK_EQ(data[1], 0x01);
	CHECK_OK(report(3, 0xff, 0, ALL_FEATURES, sizeof(data), &len));
	CHECK_EQ(data[1], 0x01);
}

TEST(opcodes_one_command_asked_the_wrong_way)
{
	u32 len;

	CHECK_FAULT(report(1, MAINTENANCE_IN, 0, ALL_FEATURES, sizeof(data), &len),
		    ILLEGAL_REQUEST, 0x24, 0x00, 3, 7);
	CHECK_FAULT(report(2, READ_10, 0, ALL_FEATURES, sizeof(data), &len),
		    ILLEGAL_REQUEST, 0x24, 0x00, 3, 7);
	CHECK_EQ(nr_puts, 0);
}

TEST(opcodes_service_actions)
{
	u32 len;

	CHECK_OK(report(2, SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, 0,
			sizeof(data), &len));
	CHECK_EQ(data[1], 0x03);
	CHECK_OK(report(2, SERVICE_ACTION_IN_16, 0x1f, 0, sizeof(data), &len));
	CHECK_EQ(data[1], 0x01);
	CHECK(vaai_opcodes_sa_listed(MAINTENANCE_IN, 0));
	CHECK(!vaai_opcodes_sa_listed(EXTENDED_COPY, 0));
	CHECK(vaai_opcodes_sa_listed(EXTENDED_COPY, VAAI_OPC_3PC));
	CHECK(!vaai_opcodes_sa_listed(READ_10, ALL_FEATURES));
}

TEST(opcodes_reserved_reporting_option)
{
	u32 len;

	CHECK_FAULT(report(4, 0, 0, ALL_FEATURES, sizeof(data), &len),
		    ILLEGAL_REQUEST, 0x24, 0x00, 2, 2);
	CHECK(report(4, 0, 0, 0, sizeof(data), &len).in_cdb);
	CHECK_EQ(nr_puts, 0);
}

TEST(opcodes_allocation_length_cuts_data)
{
	u32 len;

	CHECK_OK(report(0, 0, 0, ALL_FEATURES, 10, &len));
	CHECK_EQ(len, 10);
	CHECK_EQ(puts_past_alloc, 0);
	CHECK(get_unaligned_be32(data) > 10);	/* the full length still */
	CHECK_OK(report(0, 0, 0, ALL_FEATURES, 0, &len));
	CHECK_EQ(len, 0);
	CHECK_EQ(nr_puts, 0);
}
