// SPDX-License-Identifier: GPL-2.0
/* The first differing byte (vaai_miscompare.c), MISCOMPARE's INFORMATION. */
#include "harness.h"

TEST(diff_equal_is_length)
{
	const u8 a[5] = { 1, 2, 3, 4, 5 };

	CHECK_EQ(vaai_diff_bytes(a, a, sizeof(a)), 5);
	CHECK_EQ(vaai_diff_bytes(a, a, 0), 0);
}

TEST(diff_first_byte_that_differs)
{
	const u8 a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 2, 3, 9, 5, 0 };

	CHECK_EQ(vaai_diff_bytes(a, b, sizeof(a)), 3);
	CHECK_EQ(vaai_diff_bytes(a, b, 3), 3);
}

TEST(diff_pattern_with_phase)
{
	const u8 block[4] = { 0xa, 0xb, 0xc, 0xd };
	u8 data[10] = { 0xc, 0xd, 0xa, 0xb, 0xc, 0xd, 0xa, 0xb, 0xc, 0xd };

	CHECK_EQ(vaai_diff_pattern(block, 4, 2, data, sizeof(data)), 10);
	data[7] = 0;
	CHECK_EQ(vaai_diff_pattern(block, 4, 2, data, sizeof(data)), 7);
	CHECK_EQ(vaai_diff_pattern(block, 4, 0, data, sizeof(data)), 0);
}
