// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the EXTENDED COPY (LID1) parameter list, SPC-4 6.4.
 *
 * A 16-byte header, CSCD descriptors (32-byte identification descriptors,
 * 0xE4), segment descriptors (block to block, 0x02) and no inline data.
 * All of it is checked, and every CSCD resolved through the caller's
 * resolver, before the copy starts, so a list that is refused has written
 * nothing.  Checks run in list order; the first fault is the answer.
 */
#include "vaai_parse.h"

/* COPY ABORTED: a copy target that cannot be reached, or not there. */
static struct vaai_fault vaai_xerr_copy(enum vaai_asc code)
{
	return vaai_fault_sense(COPY_ABORTED, code, -1, -1);
}

/* Header, SPC-4 6.4.3.2: list identifier, usage, and the three lengths. */
static struct vaai_fault vaai_xcopy_header(struct vaai_xcopy_list *xl,
					   const u8 *p, u32 len, u32 *cscd_len,
					   u32 *seg_len)
{
	u8 usage = (p[1] >> 3) & 0x3;
	u64 inline_len = get_unaligned_be32(&p[12]);

	*cscd_len = get_unaligned_be16(&p[2]);
	*seg_len = get_unaligned_be32(&p[8]);
	if (VAAI_XCOPY_HDR_LEN + (u64)*cscd_len + *seg_len + inline_len > len)
		return vaai_fault_length();
	if (inline_len)		/* MAXIMUM INLINE DATA LENGTH is 0 */
		return vaai_fault_param(VAAI_ASC_INLINE_DATA_LENGTH_EXCEEDED, 12, -1);
	if (usage != VAAI_LID_HOLD && usage != VAAI_LID_NO_HOLD &&
	    usage != VAAI_LID_NONE)
		return vaai_fault_field(1, 4);
	if (usage == VAAI_LID_NONE && p[0])
		return vaai_fault_field(0, -1);
	xl->list_id = p[0];
	xl->hold = usage == VAAI_LID_HOLD;
	xl->listed = usage != VAAI_LID_NONE;
	return VAAI_FAULT_NONE;
}

/*
 * The fields of an identification descriptor we take (SPC-4 6.4.5.2).
 * LU ID TYPE says how to read LU IDENTIFIER, which an identification
 * descriptor does not use (its designator names the LUN): both ignored,
 * as SPC-4 has them for this descriptor.
 */
static struct vaai_fault vaai_xcopy_cscd_fields(const u8 *d, u32 off)
{
	/* NUL set: a null device, which we do not emulate */
	if (d[1] & 0x20)
		return vaai_fault_field(off + 1, 5);
	/* only block devices (PERIPHERAL DEVICE TYPE 0) */
	if (d[1] & 0x1f)
		return vaai_fault_field(off + 1, 4);
	return VAAI_FAULT_NONE;
}

/* CSCD descriptors, SPC-4 6.4.5: each resolved to a LUN of this nexus. */
static struct vaai_fault vaai_xcopy_cscds(struct vaai_xcopy_list *xl,
					  const u8 *p, u32 off, u32 len,
					  vaai_cscd_resolve_t resolve, void *ctx)
{
	u32 end = off + len;

	for (; off < end; off += VAAI_XCOPY_CSCD_LEN) {
		const u8 *d = p + off;
		struct vaai_cscd_info *c;
		struct vaai_fault f;

		if (d[0] != VAAI_CSCD_ID)
			return vaai_fault_param(VAAI_ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE,
						off, -1);
		if (end - off < VAAI_XCOPY_CSCD_LEN)
			return vaai_fault_length();
		if (xl->nr_cscds == VAAI_XCOPY_MAX_CSCDS)
			return vaai_fault_param(VAAI_ASC_TOO_MANY_TARGET_DESCRIPTORS,
						2, -1);
		f = vaai_xcopy_cscd_fields(d, off);
		if (f.key)
			return f;
		c = resolve(ctx, d, xl->nr_cscds);
		if (!c)
			return vaai_xerr_copy(VAAI_ASC_COPY_TARGET_NOT_REACHABLE);
		xl->cscd[xl->nr_cscds++] = c;
		/* DISK BLOCK LENGTH, bytes 29-31, is the LUN's block size */
		if (get_unaligned_be24(&d[29]) != c->block_size)
			return vaai_fault_field(off + 29, -1);
	}
	return VAAI_FAULT_NONE;
}

/*
 * LBA range of one side of a segment, inside that LUN, in bytes.  Blocks
 * past a copy target's capacity cannot be reached on it: COPY ABORTED, as
 * LIO and FreeBSD CTL answer it too.
 */
static struct vaai_fault vaai_xcopy_side(const struct vaai_cscd_info *c,
					 u64 lba, u64 bytes, loff_t *pos)
{
	if (!vaai_lba_range_ok(c->nr_blocks, lba, bytes / c->block_size))
		return vaai_xerr_copy(VAAI_ASC_COPY_TARGET_NOT_REACHABLE);
	*pos = lba * c->block_size;
	return VAAI_FAULT_NONE;
}

/* The segment's CSCD indexes: inside the list, a destination writable. */
static struct vaai_fault vaai_xcopy_b2b_cscds(struct vaai_xcopy_list *xl,
					      const u8 *d, struct vaai_xseg *s)
{
	s->src = get_unaligned_be16(&d[4]);
	s->dst = get_unaligned_be16(&d[6]);
	/* an index past the list names no copy target at all */
	if (s->src >= xl->nr_cscds || s->dst >= xl->nr_cscds)
		return vaai_xerr_copy(VAAI_ASC_UNREACHABLE_COPY_TARGET);
	if (xl->cscd[s->dst]->readonly)
		return vaai_xerr_copy(VAAI_ASC_COPY_TARGET_NOT_REACHABLE);
	xl->cscd[s->src]->src = true;
	xl->cscd[s->dst]->dst = true;
	return VAAI_FAULT_NONE;
}

/* Block device to block device segment, SPC-4 6.4.6.5. */
static struct vaai_fault vaai_xcopy_b2b(struct vaai_xcopy_list *xl,
					const u8 *d, u32 off, struct vaai_xseg *s)
{
	const struct vaai_cscd_info *src, *dst;
	struct vaai_fault f;
	u32 sbs, dbs, nblocks;
	u64 bytes;

	if (get_unaligned_be16(&d[2]) != VAAI_XCOPY_SEG_B2B_LEN - 4)
		return vaai_fault_field(off + 2, -1);
	f = vaai_xcopy_b2b_cscds(xl, d, s);
	if (f.key)
		return f;
	src = xl->cscd[s->src];
	dst = xl->cscd[s->dst];

	/* DC: NUMBER OF BLOCKS counts destination blocks, else source ones */
	sbs = src->block_size;
	dbs = dst->block_size;
	nblocks = get_unaligned_be16(&d[10]);
	bytes = (u64)nblocks * (d[1] & 0x02 ? dbs : sbs);
	if (bytes % sbs || bytes % dbs)
		return vaai_fault_param(VAAI_ASC_UNEXPECTED_INEXACT_SEGMENT,
					off + 10, -1);
	/* cannot trigger with 16-bit counts of 4 KiB blocks; keeps it true */
	if (bytes > VAAI_XCOPY_MAX_SEG_BYTES)
		return vaai_fault_field(off + 10, -1);

	f = vaai_xcopy_side(src, get_unaligned_be64(&d[12]), bytes, &s->src_pos);
	if (f.key)
		return f;
	f = vaai_xcopy_side(dst, get_unaligned_be64(&d[20]), bytes, &s->dst_pos);
	s->len = bytes;
	return f;
}

static struct vaai_fault vaai_xcopy_segs(struct vaai_xcopy_list *xl,
					 const u8 *p, u32 off, u32 len)
{
	u32 end = off + len;

	while (off < end) {
		const u8 *d = p + off;
		struct vaai_fault f;

		if (d[0] != VAAI_SEG_B2B)
			return vaai_fault_param(VAAI_ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE,
						off, -1);
		if (end - off < VAAI_XCOPY_SEG_B2B_LEN)
			return vaai_fault_length();
		if (xl->nr_segs == VAAI_XCOPY_MAX_SEGS)
			return vaai_fault_param(VAAI_ASC_TOO_MANY_SEGMENT_DESCRIPTORS,
						8, -1);
		f = vaai_xcopy_b2b(xl, d, off, &xl->seg[xl->nr_segs]);
		if (f.key)
			return f;
		xl->nr_segs++;
		off += VAAI_XCOPY_SEG_B2B_LEN;
	}
	return VAAI_FAULT_NONE;
}

/*
 * Parse the list p of len bytes into *xl.  Whatever the outcome,
 * xl->cscd[] holds the xl->nr_cscds LUNs the resolver returned, for the
 * caller to release.
 */
struct vaai_fault vaai_xcopy_list_parse(const u8 *p, u32 len,
					struct vaai_xcopy_list *xl,
					vaai_cscd_resolve_t resolve, void *ctx)
{
	u32 cscd_len, seg_len;
	struct vaai_fault f;

	xl->nr_cscds = 0;
	xl->nr_segs = 0;
	if (len < VAAI_XCOPY_HDR_LEN)
		return vaai_fault_length();
	f = vaai_xcopy_header(xl, p, len, &cscd_len, &seg_len);
	if (!f.key)
		f = vaai_xcopy_cscds(xl, p, VAAI_XCOPY_HDR_LEN, cscd_len, resolve,
				     ctx);
	if (!f.key)
		f = vaai_xcopy_segs(xl, p, VAAI_XCOPY_HDR_LEN + cscd_len, seg_len);
	return f;
}
