// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: what a host sent, beside what the medium holds: compared
 * for COMPARE AND WRITE and VERIFY with BYTCHK, OR-ed in for ORWRITE.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "vaai.h"

/*
 * Walk the len bytes of the scatterlist after skip beside the len bytes in
 * bv, handing fn each stretch that lies in one page of both; fn returns
 * how many of its n bytes to go on past (fewer: stop there).  The offset
 * where the walk stopped: len when fn went through everything.
 */
static size_t vaai_sg_bvec_walk(struct scatterlist *sgl, unsigned int nents,
				size_t skip, struct bio_vec *bv, size_t len,
				size_t (*fn)(const u8 *data, u8 *medium, size_t n))
{
	struct sg_mapping_iter miter;
	size_t off = 0, stop = len;
	unsigned int i = 0, in_page = 0;

	sg_miter_start(&miter, sgl, nents, SG_MITER_FROM_SG);
	if (skip && !sg_miter_skip(&miter, skip)) {
		sg_miter_stop(&miter);
		return 0;
	}
	while (off < len && stop == len && sg_miter_next(&miter)) {
		size_t done = 0;

		while (done < miter.length && off < len) {
			size_t n = min3(miter.length - done, len - off,
					(size_t)bv[i].bv_len - in_page);
			u8 *medium = kmap_local_page(bv[i].bv_page);
			size_t k = fn((const u8 *)miter.addr + done,
				      medium + bv[i].bv_offset + in_page, n);

			kunmap_local(medium);
			if (k < n) {
				stop = off + k;
				break;
			}
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
	return stop;
}

static size_t vaai_compare_step(const u8 *data, u8 *medium, size_t n)
{
	return vaai_diff_bytes(data, medium, n);
}

/*
 * Offset of the first byte where the len bytes of the scatterlist after
 * skip differ from the len bytes in bv; len if they are equal.
 */
size_t vaai_compare_sg(struct scatterlist *sgl, unsigned int nents,
		       size_t skip, struct bio_vec *bv, size_t len)
{
	return vaai_sg_bvec_walk(sgl, nents, skip, bv, len, vaai_compare_step);
}

static size_t vaai_or_step(const u8 *data, u8 *medium, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		medium[k] |= data[k];
	return n;
}

/* OR the len bytes of the scatterlist after skip into the len bytes in bv. */
void vaai_or_sg(struct scatterlist *sgl, unsigned int nents, size_t skip,
		struct bio_vec *bv, size_t len)
{
	vaai_sg_bvec_walk(sgl, nents, skip, bv, len, vaai_or_step);
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
		size_t k = vaai_diff_pattern(block, bs, off,
					     medium + bv[i].bv_offset, n);

		kunmap_local(medium);
		if (k < n)
			return off + k;
		off += n;
	}
	return len;
}
