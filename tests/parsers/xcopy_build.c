// SPDX-License-Identifier: GPL-2.0
/* EXTENDED COPY parameter lists for the tests (SPC-4 6.4.3, 6.4.5, 6.4.6). */
#include "xcopy_build.h"

struct vaai_cscd_info *fake_resolve(void *ctx, const u8 *desc,
				    unsigned int idx)
{
	struct fake_nexus *nx = ctx;
	const struct fake_lun *l;
	u8 k = desc[8 + 15];

	nx->nr_resolved++;
	if (k >= nx->nr_luns || nx->lun[k].absent)
		return NULL;
	l = &nx->lun[k];
	nx->slot[idx] = (struct vaai_cscd_info){
		.nr_blocks = l->nr_blocks,
		.block_size = l->block_size,
		.readonly = l->readonly,
	};
	return &nx->slot[idx];
}

void xlist_header(u8 *p, u8 list_id, u8 usage, u16 cscd_len, u32 seg_len,
		  u32 inline_len)
{
	memset(p, 0, VAAI_XCOPY_HDR_LEN);
	p[0] = list_id;
	p[1] = usage << 3;
	put_unaligned_be16(cscd_len, &p[2]);
	put_unaligned_be32(seg_len, &p[8]);
	put_unaligned_be32(inline_len, &p[12]);
}

u32 xlist_cscd(u8 *d, u8 k, u32 block_size)
{
	memset(d, 0, VAAI_XCOPY_CSCD_LEN);
	d[0] = VAAI_CSCD_ID;
	d[4] = 0x01;		/* CODE SET binary */
	d[5] = 0x03;		/* ASSOCIATION logical unit, NAA */
	d[7] = 16;
	d[8] = 0x60;		/* NAA 6h */
	d[8 + 15] = k;
	d[29] = block_size >> 16;
	d[30] = block_size >> 8;
	d[31] = block_size;
	return VAAI_XCOPY_CSCD_LEN;
}

u32 xlist_b2b(u8 *d, u16 src, u16 dst, u16 nblocks, u64 slba, u64 dlba,
	      bool dc)
{
	memset(d, 0, VAAI_XCOPY_SEG_B2B_LEN);
	d[0] = VAAI_SEG_B2B;
	d[1] = dc ? 0x02 : 0;
	put_unaligned_be16(VAAI_XCOPY_SEG_B2B_LEN - 4, &d[2]);
	put_unaligned_be16(src, &d[4]);
	put_unaligned_be16(dst, &d[6]);
	put_unaligned_be16(nblocks, &d[10]);
	put_unaligned_be64(slba, &d[12]);
	put_unaligned_be64(dlba, &d[20]);
	return VAAI_XCOPY_SEG_B2B_LEN;
}
