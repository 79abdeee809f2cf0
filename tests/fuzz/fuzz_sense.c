// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: sense data (vaai_sense_data.c) and the MISCOMPARE
 * offset (vaai_miscompare.c).
 *
 * Input: key, ASC, ASCQ, flags (bit 0: descriptor format; bit 1: C/D;
 * bit 2: a field pointer; bit 3: a bit pointer; bit 4: COMMAND-SPECIFIC
 * INFORMATION too), field byte (be16), bit, buffer size, INFORMATION
 * (be64), COMMAND-SPECIFIC INFORMATION (be64), then two equal halves of
 * data to compare.  Sense is built into a buffer of exactly that size.
 */
#include "fuzz.h"

static void check_header(const u8 *buf, u32 len, bool desc, u8 key, u8 asc,
			 u8 ascq)
{
	if (!desc) {
		FUZZ_ASSERT(len == VAAI_SENSE_FIXED_LEN);
		FUZZ_ASSERT((buf[0] & 0x7f) == 0x70 && buf[7] == 10);
		FUZZ_ASSERT(buf[2] == key && buf[12] == asc && buf[13] == ascq);
		return;
	}
	FUZZ_ASSERT(len == 8u + buf[7]);
	FUZZ_ASSERT(buf[0] == 0x72 && buf[1] == key && buf[2] == asc &&
		    buf[3] == ascq);
}

/* INFORMATION, once set, reads back: 32 bits fixed, 64 descriptor. */
static void check_info(u8 *buf, u32 size, u32 len, bool desc, u64 info)
{
	u32 n = vaai_sense_set_info(buf, size, info);

	if (!n) {
		FUZZ_ASSERT(desc ? size < len + 12 : size < 18);
		return;
	}
	FUZZ_ASSERT(n <= size);
	if (!desc) {
		FUZZ_ASSERT(get_unaligned_be32(&buf[3]) == (u32)info);
		FUZZ_ASSERT(!!(buf[0] & 0x80) == (info <= U32_MAX));
		return;
	}
	FUZZ_ASSERT(n == len + 12 && n == 8u + buf[7]);
	FUZZ_ASSERT(buf[len] == 0 && buf[len + 1] == 10 && buf[len + 2] == 0x80);
	FUZZ_ASSERT(get_unaligned_be64(&buf[len + 4]) == info);
}

/* COMMAND-SPECIFIC INFORMATION after it: fixed bytes 8-11, or a descriptor. */
static void check_csi(u8 *buf, u32 size, bool desc, u64 csi)
{
	u32 len = desc ? 8u + buf[7] : VAAI_SENSE_FIXED_LEN;
	u32 n = vaai_sense_set_csi(buf, size, csi);

	if (!n) {
		FUZZ_ASSERT(desc && (size < len + 12 || buf[7] > 255 - 12));
		FUZZ_ASSERT(len == 8u + buf[7]);	/* unchanged */
		return;
	}
	FUZZ_ASSERT(n <= size);
	if (!desc) {
		FUZZ_ASSERT(n == len && get_unaligned_be32(&buf[8]) == (u32)csi);
		return;
	}
	FUZZ_ASSERT(n == len + 12 && n == 8u + buf[7]);
	FUZZ_ASSERT(buf[len] == 1 && buf[len + 1] == 10 && buf[len + 2] == 0);
	FUZZ_ASSERT(get_unaligned_be64(&buf[len + 4]) == csi);
}

static void check_diff(const u8 *a, const u8 *b, size_t n)
{
	size_t k = vaai_diff_bytes(a, b, n);

	FUZZ_ASSERT(k <= n && !memcmp(a, b, k));
	FUZZ_ASSERT(k == n || a[k] != b[k]);
	if (n)
		FUZZ_ASSERT(vaai_diff_pattern(a, n, 0, b, n) == k);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct vaai_fault f = { fuzz_take(&in, 1), fuzz_take(&in, 1),
				fuzz_take(&in, 1) };
	u8 flags = fuzz_take(&in, 1);
	bool desc = flags & 1;
	u32 bufsize, len;
	u8 *buf;

	f.in_cdb = flags & 2;
	f.byte = flags & 4 ? (int)fuzz_take(&in, 2) : -1;
	f.bit = flags & 8 ? (int)(fuzz_take(&in, 1) & 7) : -1;
	bufsize = fuzz_take(&in, 1);
	buf = malloc(bufsize ?: 1);	/* exact size: ASan sees overruns */

	len = vaai_sense_build_fault(buf, bufsize, desc, &f);
	FUZZ_ASSERT(len <= bufsize);
	if (len) {
		check_header(buf, len, desc, f.key, f.asc, f.ascq);
		if (f.byte >= 0 && desc)
			FUZZ_ASSERT(len == 16 && buf[8] == 2 && buf[9] == 6);
		check_info(buf, bufsize, len, desc, fuzz_take(&in, 8));
		if (flags & 0x10)
			check_csi(buf, bufsize, desc, fuzz_take(&in, 8));
	} else {
		FUZZ_ASSERT(bufsize < (desc ? (f.byte >= 0 ? 16u : 8u) : 18u));
	}
	free(buf);
	check_diff(in.p, in.p + in.n / 2, in.n / 2);
	return 0;
}
