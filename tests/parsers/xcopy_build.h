/* SPDX-License-Identifier: GPL-2.0 */
/*
 * EXTENDED COPY parameter lists for the tests, and a fake CSCD resolver:
 * an identification descriptor names fake LUN k by the last byte of its
 * NAA designator.
 */
#ifndef VAAI_TEST_XCOPY_BUILD_H
#define VAAI_TEST_XCOPY_BUILD_H

#include "vaai_parse.h"

#define XLIST_MAX	(VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN + 256)

struct fake_lun {
	u64 nr_blocks;
	u32 block_size;
	bool readonly;
	bool absent;		/* not reachable from this nexus */
};

struct fake_nexus {
	const struct fake_lun *lun;
	unsigned int nr_luns;
	unsigned int nr_resolved;
	struct vaai_cscd_info slot[VAAI_XCOPY_MAX_CSCDS];
};

struct vaai_cscd_info *fake_resolve(void *ctx, const u8 *desc,
				    unsigned int idx);

/* Header: LIST IDENTIFIER, LIST ID USAGE and the three lengths. */
void xlist_header(u8 *p, u8 list_id, u8 usage, u16 cscd_len, u32 seg_len,
		  u32 inline_len);
/* An identification CSCD descriptor naming fake LUN k; its length. */
u32 xlist_cscd(u8 *d, u8 k, u32 block_size);
/* A block-to-block segment descriptor; its length. */
u32 xlist_b2b(u8 *d, u16 src, u16 dst, u16 nblocks, u64 slba, u64 dlba,
	      bool dc);

#endif /* VAAI_TEST_XCOPY_BUILD_H */
