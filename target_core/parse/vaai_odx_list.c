// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the token copy (ODX) parameter lists, SBC-4 5.9
 * (POPULATE TOKEN) and 5.51 (WRITE USING TOKEN), the ROD token header
 * (SPC-4 6.6), and how a token's bytes fall onto a destination's ranges.
 *
 * Both lists end in block device range descriptors (SBC-4 5.9.3): an LBA
 * and a count, 16 bytes each.  All of a list is checked before anything is
 * read or written; the first fault in list order is the answer.
 */
#include "vaai_parse.h"

#define VAAI_ODX_TOKEN_LEN_OFF	6	/* ROD TOKEN LENGTH, in the token */

static bool vaai_odx_overlap(const struct vaai_odx_list *l, u64 lba, u32 nolb)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++)
		if (lba < l->range[i].lba + l->range[i].nolb &&
		    l->range[i].lba < lba + nolb)
			return true;
	return false;
}

/*
 * The range descriptors at off, rdl bytes of them; rdl_field is where the
 * list gave their length.  A descriptor of no blocks asks for nothing and
 * is not an error (SBC-4 5.9.3).
 */
static struct vaai_fault vaai_odx_ranges(const u8 *p, u32 off, u32 rdl,
					 int rdl_field,
					 const struct vaai_odx_lun *lun,
					 struct vaai_odx_list *l)
{
	unsigned int i, n = rdl / VAAI_ODX_RANGE_LEN;

	if (!rdl || rdl % VAAI_ODX_RANGE_LEN)
		return vaai_fault_field(rdl_field, -1);
	if (n > VAAI_ODX_MAX_RANGES)
		return vaai_fault_param(VAAI_ASC_TOO_MANY_SEGMENT_DESCRIPTORS,
					rdl_field, -1);
	for (i = 0; i < n; i++) {
		const u8 *d = p + off + i * VAAI_ODX_RANGE_LEN;
		u64 lba = get_unaligned_be64(&d[0]);
		u32 nolb = get_unaligned_be32(&d[8]);
		int field = off + i * VAAI_ODX_RANGE_LEN;

		if (!nolb)
			continue;
		if (!vaai_lba_range_ok(lun->nr_blocks, lba, nolb))
			return vaai_fault_param(VAAI_ASC_LBA_OUT_OF_RANGE,
						field, -1);
		if (vaai_odx_overlap(l, lba, nolb))
			return vaai_fault_field(field, -1);
		l->range[l->nr].lba = lba;
		l->range[l->nr].nolb = nolb;
		l->nr++;
		l->blocks += nolb;
	}
	/* MAXIMUM TOKEN TRANSFER SIZE (SBC-4 6.6.6.2) */
	if (l->blocks > VAAI_ODX_MAX_TOKEN_BYTES / lun->block_size)
		return vaai_fault_field(rdl_field, -1);
	return VAAI_FAULT_NONE;
}

/*
 * The header both lists share: the DATA LENGTH in bytes 0-1 counts what
 * follows it and must hold the header and the range descriptors; the list
 * must hold what it says.  IMMED is bit 0 of byte 2 in both.
 */
static struct vaai_fault vaai_odx_head(const u8 *p, u32 len, u32 hdr,
				       u32 rdl_off, u32 *rdl,
				       struct vaai_odx_list *l)
{
	u32 dl;

	memset(l, 0, offsetof(struct vaai_odx_list, range));
	if (len < hdr)
		return vaai_fault_length();
	dl = get_unaligned_be16(&p[0]) + 2;
	*rdl = get_unaligned_be16(&p[rdl_off]);
	if (dl > len || (u64)hdr + *rdl > len)
		return vaai_fault_length();
	if (dl < hdr + *rdl)
		return vaai_fault_field(0, -1);
	l->immed = p[2] & 0x01;
	return VAAI_FAULT_NONE;
}

struct vaai_fault vaai_odx_pt_parse(const u8 *p, u32 len,
				    const struct vaai_odx_lun *lun,
				    struct vaai_odx_list *l)
{
	struct vaai_fault f;
	u32 rdl;

	f = vaai_odx_head(p, len, VAAI_ODX_PT_HDR_LEN, 14, &rdl, l);
	if (f.key)
		return f;
	l->rtv = p[2] & 0x02;
	l->timeout = get_unaligned_be32(&p[4]);
	if (l->timeout > VAAI_ODX_MAX_TIMEOUT)
		return vaai_fault_field(4, -1);
	if (!l->timeout)
		l->timeout = VAAI_ODX_DEFAULT_TIMEOUT;
	/*
	 * The types we create; 0 leaves the choice to us.  Whether this LUN
	 * can make a persistent one is the command's to find out.
	 */
	l->rod_type = l->rtv ? get_unaligned_be32(&p[8]) : 0;
	switch (l->rod_type) {
	case 0:
	case VAAI_ROD_TYPE_AUR:
	case VAAI_ROD_TYPE_PIT_DEFAULT:
	case VAAI_ROD_TYPE_PIT_VULNERABLE:
	case VAAI_ROD_TYPE_PIT_PERSISTENT:
	case VAAI_ROD_TYPE_PIT_ANY:
		break;
	default:
		return vaai_fault_field(8, -1);
	}
	return vaai_odx_ranges(p, VAAI_ODX_PT_HDR_LEN, rdl, 14, lun, l);
}

struct vaai_fault vaai_odx_wut_parse(const u8 *p, u32 len,
				     const struct vaai_odx_lun *lun,
				     struct vaai_odx_list *l)
{
	struct vaai_fault f;
	u32 rdl;

	f = vaai_odx_head(p, len, VAAI_ODX_WUT_HDR_LEN, 534, &rdl, l);
	if (f.key)
		return f;
	l->del_tkn = p[2] & 0x02;
	l->offset = get_unaligned_be64(&p[8]);
	l->token = &p[VAAI_ODX_TOKEN_OFF];
	return vaai_odx_ranges(p, VAAI_ODX_WUT_HDR_LEN, rdl, 534, lun, l);
}

/* Field pointers name the token's bytes where a WRITE USING TOKEN holds it. */
struct vaai_fault vaai_odx_token_check(const u8 *tok, u32 *rod_type)
{
	*rod_type = get_unaligned_be32(&tok[0]);
	switch (*rod_type) {
	case VAAI_ROD_TYPE_AUR:
	case VAAI_ROD_TYPE_PIT_VULNERABLE:
	case VAAI_ROD_TYPE_PIT_PERSISTENT:
	case VAAI_ROD_TYPE_ZERO:
		break;
	default:		/* PIT_DEFAULT and PIT_ANY are asked for, not made */
		return vaai_fault_param(VAAI_ASC_TOKEN_UNSUPPORTED_TYPE,
					VAAI_ODX_TOKEN_OFF, -1);
	}
	if (get_unaligned_be16(&tok[VAAI_ODX_TOKEN_LEN_OFF]) != VAAI_ODX_TOKEN_BODY)
		return vaai_fault_param(VAAI_ASC_TOKEN_INVALID_LENGTH,
					VAAI_ODX_TOKEN_OFF + VAAI_ODX_TOKEN_LEN_OFF,
					-1);
	return VAAI_FAULT_NONE;
}

static u64 vaai_odx_bytes(const struct vaai_odx_range *r, unsigned int nr,
			  u32 bs)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		sum += (u64)r[i].nolb * bs;
	return sum;
}

unsigned int vaai_odx_map(const struct vaai_odx_range *src, unsigned int nr_src,
			  u32 src_bs, u64 skip,
			  const struct vaai_odx_range *dst, unsigned int nr_dst,
			  u32 dst_bs, struct vaai_xseg *seg, unsigned int max,
			  u64 *bytes)
{
	u64 have = vaai_odx_bytes(src, nr_src, src_bs);
	u64 todo = vaai_odx_bytes(dst, nr_dst, dst_bs);
	u64 s_off, d_off = 0;
	unsigned int i = 0, j = 0, n = 0;

	have = have > skip ? have - skip : 0;
	if (todo > have)
		todo = have - have % dst_bs;
	while (i < nr_src && skip >= (u64)src[i].nolb * src_bs)
		skip -= (u64)src[i++].nolb * src_bs;
	s_off = skip;
	*bytes = 0;
	while (todo && n < max) {
		u64 s_left = (u64)src[i].nolb * src_bs - s_off;
		u64 d_left = (u64)dst[j].nolb * dst_bs - d_off;
		u64 k = min3(s_left, d_left, todo);

		seg[n].src = 0;
		seg[n].dst = 1;
		seg[n].src_pos = src[i].lba * src_bs + s_off;
		seg[n].dst_pos = dst[j].lba * dst_bs + d_off;
		seg[n].len = k;
		n++;
		s_off += k;
		d_off += k;
		todo -= k;
		*bytes += k;
		if (s_off == (u64)src[i].nolb * src_bs) {
			i++;
			s_off = 0;
		}
		if (d_off == (u64)dst[j].nolb * dst_bs) {
			j++;
			d_off = 0;
		}
	}
	return n;
}
