// SPDX-License-Identifier: GPL-2.0
/* Sense data (vaai_sense_data.c): the bytes a host decodes, SPC-4 4.5. */
#include "harness.h"

#define SENSE_BUF	96	/* TRANSPORT_SENSE_BUFFER */

static bool bytes_eq(const u8 *a, const u8 *b, unsigned int n)
{
	return !memcmp(a, b, n);
}

TEST(sense_fixed_header)
{
	static const u8 want[18] = {
		0x70, 0, ILLEGAL_REQUEST, 0, 0, 0, 0, 10,
		0, 0, 0, 0, 0x24, 0x00, 0, 0, 0, 0,
	};
	u8 buf[SENSE_BUF];

	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(vaai_sense_build(buf, sizeof(buf), false, ILLEGAL_REQUEST,
				  0x24, 0x00), 18);
	CHECK(bytes_eq(buf, want, sizeof(want)));
}

TEST(sense_descriptor_header)
{
	static const u8 want[8] = { 0x72, DATA_PROTECT, 0x27, 0x07, 0, 0, 0, 0 };
	u8 buf[SENSE_BUF];

	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(vaai_sense_build(buf, sizeof(buf), true, DATA_PROTECT,
				  0x27, 0x07), 8);
	CHECK(bytes_eq(buf, want, sizeof(want)));
}

TEST(sense_header_too_big_for_buffer)
{
	u8 buf[SENSE_BUF];

	CHECK_EQ(vaai_sense_build(buf, 17, false, ILLEGAL_REQUEST, 0x24, 0), 0);
	CHECK_EQ(vaai_sense_build(buf, 7, true, ILLEGAL_REQUEST, 0x24, 0), 0);
}

TEST(sense_fixed_field_pointer_in_cdb_with_bit)
{
	const struct vaai_fault f = vaai_fault_cdb(3, 7);
	u8 buf[SENSE_BUF] = {};

	CHECK_EQ(vaai_sense_build_fault(buf, sizeof(buf), false, &f), 18);
	CHECK_EQ(buf[15], 0x80 | 0x40 | 0x08 | 7);	/* SKSV C/D BPV bit 7 */
	CHECK_EQ(buf[16], 0);
	CHECK_EQ(buf[17], 3);
	CHECK_EQ(buf[12], 0x24);
}

TEST(sense_fixed_field_pointer_in_list_no_bit)
{
	const struct vaai_fault f = vaai_fault_field(0x1234, -1);
	u8 buf[SENSE_BUF] = {};

	CHECK_EQ(vaai_sense_build_fault(buf, sizeof(buf), false, &f), 18);
	CHECK_EQ(buf[15], 0x80);			/* SKSV only */
	CHECK_EQ(buf[16], 0x12);
	CHECK_EQ(buf[17], 0x34);
}

TEST(sense_descriptor_field_pointer)
{
	static const u8 want[16] = {
		0x72, ILLEGAL_REQUEST, 0x26, 0x00, 0, 0, 0, 8,
		0x02, 0x06, 0, 0, 0x80 | 0x08 | 4, 0x00, 0x11, 0,
	};
	const struct vaai_fault f = vaai_fault_field(17, 4);
	u8 buf[SENSE_BUF];

	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(vaai_sense_build_fault(buf, sizeof(buf), true, &f), 16);
	CHECK(bytes_eq(buf, want, sizeof(want)));
}

TEST(sense_descriptor_field_pointer_needs_room)
{
	const struct vaai_fault f = vaai_fault_cdb(2, -1);
	u8 buf[SENSE_BUF];

	CHECK_EQ(vaai_sense_build_fault(buf, 15, true, &f), 0);
	CHECK_EQ(vaai_sense_build_fault(buf, 16, true, &f), 16);
}

TEST(sense_fault_without_field_has_no_pointer)
{
	const struct vaai_fault f = { COPY_ABORTED, 0x0d, 0x02, false, -1, -1 };
	u8 buf[SENSE_BUF];

	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(vaai_sense_build_fault(buf, sizeof(buf), false, &f), 18);
	CHECK_EQ(buf[15] | buf[16] | buf[17], 0);
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(vaai_sense_build_fault(buf, sizeof(buf), true, &f), 8);
	CHECK_EQ(buf[7], 0);
}

TEST(sense_fixed_information_fits_32_bits)
{
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), false, MISCOMPARE, 0x1d, 0);
	CHECK_EQ(vaai_sense_set_info(buf, sizeof(buf), 0x01020304), 18);
	CHECK_EQ(buf[0], 0xf0);				/* VALID */
	CHECK_EQ(get_unaligned_be32(&buf[3]), 0x01020304);
}

TEST(sense_fixed_information_beyond_32_bits_not_valid)
{
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), false, MISCOMPARE, 0x1d, 0);
	vaai_sense_set_info(buf, sizeof(buf), 4);
	CHECK_EQ(buf[0], 0xf0);
	vaai_sense_set_info(buf, sizeof(buf), 0x100000005ULL);
	CHECK_EQ(buf[0], 0x70);
	CHECK_EQ(get_unaligned_be32(&buf[3]), 5);
}

TEST(sense_descriptor_information)
{
	static const u8 want[20] = {
		0x72, MISCOMPARE, 0x1d, 0x00, 0, 0, 0, 12,
		0x00, 0x0a, 0x80, 0, 0, 0, 0, 1, 0, 0, 0x02, 0x00,
	};
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), true, MISCOMPARE, 0x1d, 0);
	CHECK_EQ(vaai_sense_set_info(buf, sizeof(buf), 0x100000200ULL), 20);
	CHECK(bytes_eq(buf, want, sizeof(want)));
}

TEST(sense_descriptor_information_needs_room)
{
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), true, MISCOMPARE, 0x1d, 0);
	CHECK_EQ(vaai_sense_set_info(buf, 19, 7), 0);
	CHECK_EQ(buf[7], 0);
	CHECK_EQ(vaai_sense_set_info(buf, 20, 7), 20);
}

TEST(sense_fixed_command_specific_information)
{
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), false, COPY_ABORTED, 0x0d, 0x02);
	CHECK_EQ(vaai_sense_set_csi(buf, sizeof(buf), 3), 18);
	CHECK_EQ(get_unaligned_be32(&buf[8]), 3);
	CHECK_EQ(buf[0], 0x70);			/* INFORMATION not made valid */
	CHECK_EQ(buf[7], 10);
	CHECK_EQ(buf[12], 0x0d);
	CHECK_EQ(buf[13], 0x02);
}

TEST(sense_descriptor_info_then_command_specific_information)
{
	static const u8 want[32] = {
		0x72, COPY_ABORTED, 0x0d, 0x04, 0, 0, 0, 24,
		0x00, 0x0a, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0x40,
		0x01, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	};
	u8 buf[SENSE_BUF] = {};

	vaai_sense_build(buf, sizeof(buf), true, COPY_ABORTED, 0x0d, 0x04);
	CHECK_EQ(vaai_sense_set_info(buf, sizeof(buf), 0x40), 20);
	CHECK_EQ(vaai_sense_set_csi(buf, sizeof(buf), 2), 32);
	CHECK(bytes_eq(buf, want, sizeof(want)));
	CHECK_EQ(vaai_sense_set_csi(buf, 43, 2), 0);	/* no room for a third */
	CHECK_EQ(buf[7], 24);
}
