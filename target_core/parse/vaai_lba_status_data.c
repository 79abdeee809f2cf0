// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: GET LBA STATUS parameter data (SBC-4 5.8.2), one LBA
 * status descriptor per extent from the starting LBA on, as far as the
 * allocation length reaches, from the store's view of its extents.
 */
#include "vaai_parse.h"

/* SBC-4 table 43: PROVISIONING STATUS */
#define VAAI_LBAS_MAPPED	0x0	/* mapped or unknown */
#define VAAI_LBAS_DEALLOCATED	0x1

/*
 * Next extent from block lba: its state and end (exclusive), in blocks.  A
 * block that is partly backed counts as mapped.
 */
static int vaai_lbas_extent(const struct vaai_lbas_req *req, u64 lba,
			    vaai_lbas_map_t map, void *ctx, bool *mapped,
			    u64 *end)
{
	u32 bs = req->block_size;
	loff_t pos = (loff_t)lba * bs;
	loff_t len;

	len = map(ctx, pos, (loff_t)(req->nr_blocks - lba) * bs, mapped);
	if (len < 0)
		return len;
	if (*mapped) {
		*end = DIV_ROUND_UP_ULL(pos + len, bs);
	} else {
		*end = div_u64(pos + len, bs);
		if (*end == lba) {
			*mapped = true;
			*end = lba + 1;
		}
	}
	*end = min(*end, req->nr_blocks);
	return 0;
}

/*
 * The reply in buf (zeroed, at least min(max(alloc_len, VAAI_LBAS_HDR_LEN),
 * VAAI_LBAS_MAX_LEN) bytes), and in *len the bytes of it to return; 0, or
 * the store's negative errno.
 */
int vaai_lbas_reply_build(const struct vaai_lbas_req *req, u8 *buf,
			  vaai_lbas_map_t map, void *ctx, u32 *len)
{
	u32 alloc = req->alloc_len;
	unsigned int n = 0, max;
	u64 lba = req->lba;

	max = alloc > VAAI_LBAS_HDR_LEN ?
	      (alloc - VAAI_LBAS_HDR_LEN) / VAAI_LBAS_DESC_LEN : 0;
	max = min_t(unsigned int, max, VAAI_LBAS_MAX_DESCS);

	while (n < max && lba < req->nr_blocks) {
		u8 *d = buf + VAAI_LBAS_HDR_LEN + n * VAAI_LBAS_DESC_LEN;
		bool mapped;
		u64 end;
		int ret;

		ret = vaai_lbas_extent(req, lba, map, ctx, &mapped, &end);
		if (ret)
			return ret;
		/* NUMBER OF LOGICAL BLOCKS is 32 bits wide. */
		end = min_t(u64, end, lba + U32_MAX);
		put_unaligned_be64(lba, &d[0]);
		put_unaligned_be32(end - lba, &d[8]);
		d[12] = mapped ? VAAI_LBAS_MAPPED : VAAI_LBAS_DEALLOCATED;
		lba = end;
		n++;
	}
	/*
	 * PARAMETER DATA LENGTH: the bytes that follow it.  The starting LBA
	 * always has a descriptor: one too short an allocation length left
	 * out is still counted, so the host learns to ask for more.
	 */
	put_unaligned_be32(VAAI_LBAS_HDR_LEN - 4 +
			   max(n, 1U) * VAAI_LBAS_DESC_LEN, buf);
	*len = min_t(u32, alloc, VAAI_LBAS_HDR_LEN + n * VAAI_LBAS_DESC_LEN);
	return 0;
}
