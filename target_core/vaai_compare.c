// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: comparing what a host sent with what the medium holds,
 * for COMPARE AND WRITE and VERIFY with BYTCHK.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "vaai.h"

/*
 * Offset of the first byte where the len bytes of the scatterlist after
 * skip differ from the len bytes in bv; len if they are equal.
 */
size_t vaai_compare_sg(struct scatterlist *sgl, unsigned int nents,
		       size_t skip, struct bio_vec *bv, size_t len)
{
	struct sg_mapping_iter miter;
	size_t off = 0, diff = len;
	unsigned int i = 0, in_page = 0;

	sg_miter_start(&miter, sgl, nents, SG_MITER_FROM_SG);
	if (skip && !sg_miter_skip(&miter, skip)) {
		sg_miter_stop(&miter);
		return 0;
	}
	while (off < len && diff == len && sg_miter_next(&miter)) {
		size_t done = 0;

		while (done < miter.length && off < len) {
			size_t n = min3(miter.length - done, len - off,
					(size_t)bv[i].bv_len - in_page);
			u8 *medium = kmap_local_page(bv[i].bv_page);
			const u8 *verify = (const u8 *)miter.addr + done;
			size_t k = vaai_diff_bytes(verify, medium + in_page, n);

			if (k < n)
				diff = off + k;
			kunmap_local(medium);
			if (diff != len)
				break;
			done += n;
			off += n;
			in_page += n;
			if (in_page == bv[i].bv_len) {
				i++;
				in_page = 0;
			}
		}
	}
	sg_miter_stop(&miter);
	return diff;
}

/* The same against one block of bs bytes repeated over the len bytes. */
size_t vaai_compare_pattern(const u8 *block, u32 bs, struct bio_vec *bv,
			    size_t len)
{
	size_t off = 0;
	unsigned int i;

	for (i = 0; off < len; i++) {
		u8 *medium = kmap_local_page(bv[i].bv_page);
		size_t n = min_t(size_t, bv[i].bv_len, len - off);
		size_t k = vaai_diff_pattern(block, bs, off, medium, n);

		kunmap_local(medium);
		if (k < n)
			return off + k;
		off += n;
	}
	return len;
}
