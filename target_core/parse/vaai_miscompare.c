// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: where two pieces of data first differ.  COMPARE AND
 * WRITE (SBC-4 5.3) and VERIFY with BYTCHK (SBC-4 5.33) report that offset
 * in the INFORMATION field of MISCOMPARE.
 */
#include "vaai_parse.h"

/* Offset of the first byte where a and b (n bytes each) differ; n if none. */
size_t vaai_diff_bytes(const u8 *a, const u8 *b, size_t n)
{
	size_t k;

	if (!memcmp(a, b, n))
		return n;
	for (k = 0; a[k] == b[k]; k++)
		;
	return k;
}

/*
 * The same for data against one block of bs bytes repeated, data starting
 * phase bytes into the repetition.
 */
size_t vaai_diff_pattern(const u8 *block, u32 bs, size_t phase,
			 const u8 *data, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (data[k] != block[(phase + k) % bs])
			break;
	return k;
}
