// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the UNMAP parameter list (SBC-4 5.32.2), checked whole
 * before anything is deallocated.  Descriptors may overlap and come in any
 * order; a descriptor of zero blocks is no error.
 */
#include "vaai_parse.h"

/*
 * The header of a list of len bytes (the PARAMETER LIST LENGTH, at least
 * the header: the execute path answers an empty or shorter list itself):
 * the lengths must agree with each other and with what arrived.  *nr: the
 * whole block descriptors to walk.
 */
struct vaai_fault vaai_unmap_list_check(const u8 *buf, u32 len,
					const struct vaai_unmap_limits *lim,
					unsigned int *nr)
{
	u32 data_len, bd_len;

	if (len < VAAI_UNMAP_HDR_LEN)
		return vaai_fault_length();
	data_len = get_unaligned_be16(&buf[0]);
	bd_len = get_unaligned_be16(&buf[2]);
	if (data_len + 2 > len || data_len < bd_len + VAAI_UNMAP_HDR_LEN - 2)
		return vaai_fault_field(0, -1);
	/* An incomplete last descriptor is ignored (SBC-4 5.32.2). */
	*nr = bd_len / VAAI_UNMAP_DESC_LEN;
	if (*nr > lim->max_descs)
		return vaai_fault_field(2, -1);
	return VAAI_FAULT_NONE;
}

/*
 * The nr descriptors of a list that passed vaai_unmap_list_check(): each
 * inside the capacity, all together at most MAXIMUM UNMAP LBA COUNT blocks.
 * range[] has room for nr ranges.
 */
struct vaai_fault vaai_unmap_list_collect(const u8 *buf, unsigned int nr,
					  const struct vaai_unmap_limits *lim,
					  struct vaai_unmap_span *span,
					  struct vaai_unmap_range *range)
{
	unsigned int i;

	*span = (struct vaai_unmap_span){ .first = U64_MAX };
	for (i = 0; i < nr; i++) {
		u32 at = VAAI_UNMAP_HDR_LEN + i * VAAI_UNMAP_DESC_LEN;
		u64 lba = get_unaligned_be64(&buf[at]);
		u32 nolb = get_unaligned_be32(&buf[at + 8]);

		if (!nolb)
			continue;
		if (lba >= lim->nr_blocks || nolb > lim->nr_blocks - lba)
			return vaai_fault_param(VAAI_ASC_LBA_OUT_OF_RANGE, at, -1);
		span->blocks += nolb;
		if (span->blocks > lim->max_lbas)
			return vaai_fault_field(at + 8, -1);
		span->first = min(span->first, lba);
		span->end = max(span->end, lba + nolb);
		range[span->nr].lba = lba;
		range[span->nr].nolb = nolb;
		span->nr++;
	}
	return VAAI_FAULT_NONE;
}
