// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the token copy (ODX) lists (vaai_odx_list.c), then
 * vaai_odx_map() of an accepted list's ranges onto themselves.
 *
 * Input: capacity in blocks (be64, 0 read as 1); a block size byte (bit 0:
 * the LUN's blocks are 4096 bytes, else 512; bit 1: the map's destination
 * has the other size); a list byte (bit 0: WRITE USING TOKEN, else POPULATE
 * TOKEN; bits 7:1, for a POPULATE TOKEN, the map's skip in destination
 * blocks, where a WRITE USING TOKEN has its OFFSET INTO ROD); then the list
 * (at most 2 + 65535 bytes: DATA LENGTH is 16 bits).
 */
#include "fuzz.h"

#define MAX_LIST	(2 + 0xffff)

static struct vaai_odx_list l;
static struct vaai_xseg seg[2 * VAAI_ODX_MAX_RANGES];

static u32 other_bs(u32 bs)
{
	return bs == 512 ? 4096 : 512;
}

static void check_ranges(const struct vaai_odx_lun *lun, const u8 *list,
			 u32 len, u32 hdr)
{
	u32 rdl = get_unaligned_be16(&list[hdr - 2]);
	u64 sum = 0;
	unsigned int i, j;

	FUZZ_ASSERT(hdr + rdl <= len && rdl && rdl % VAAI_ODX_RANGE_LEN == 0);
	FUZZ_ASSERT(get_unaligned_be16(&list[0]) + 2u >= hdr + rdl);
	FUZZ_ASSERT(l.nr <= VAAI_ODX_MAX_RANGES);
	FUZZ_ASSERT(l.nr <= rdl / VAAI_ODX_RANGE_LEN);
	for (i = 0; i < l.nr; i++) {
		const struct vaai_odx_range *r = &l.range[i];

		FUZZ_ASSERT(r->nolb && r->lba < lun->nr_blocks);
		FUZZ_ASSERT(r->nolb <= lun->nr_blocks - r->lba);
		for (j = 0; j < i; j++)
			FUZZ_ASSERT(r->lba + r->nolb <= l.range[j].lba ||
				    l.range[j].lba + l.range[j].nolb <= r->lba);
		sum += r->nolb;
	}
	FUZZ_ASSERT(sum == l.blocks);
	FUZZ_ASSERT(sum <= VAAI_ODX_MAX_TOKEN_BYTES / lun->block_size);
}

static void check_pt(const u8 *list)
{
	FUZZ_ASSERT(l.timeout >= 1 && l.timeout <= VAAI_ODX_MAX_TIMEOUT);
	/* a type we make, or 0 (ours to choose), and 0 without RTV */
	FUZZ_ASSERT(l.rod_type == 0 || l.rod_type == VAAI_ROD_TYPE_AUR ||
		    (l.rod_type >= VAAI_ROD_TYPE_PIT_DEFAULT &&
		     l.rod_type <= VAAI_ROD_TYPE_PIT_PERSISTENT) ||
		    l.rod_type == VAAI_ROD_TYPE_PIT_ANY);
	FUZZ_ASSERT(l.rtv || !l.rod_type);
	FUZZ_ASSERT(l.immed == (list[2] & 1) && l.rtv == !!(list[2] & 2));
}

static void check_wut(const u8 *list, u32 len)
{
	struct vaai_fault f;
	u32 type;

	FUZZ_ASSERT(l.token == list + VAAI_ODX_TOKEN_OFF);
	FUZZ_ASSERT(VAAI_ODX_TOKEN_OFF + VAAI_ODX_TOKEN_LEN <= len);
	FUZZ_ASSERT(l.immed == (list[2] & 1) && l.del_tkn == !!(list[2] & 2));
	FUZZ_ASSERT(l.offset == get_unaligned_be64(&list[8]));

	f = vaai_odx_token_check(l.token, &type);
	if (f.key) {
		fuzz_check_list_fault(&f, len);
		FUZZ_ASSERT(f.asc == 0x23);	/* INVALID TOKEN OPERATION */
		FUZZ_ASSERT(f.byte == VAAI_ODX_TOKEN_OFF ||
			    f.byte == VAAI_ODX_TOKEN_OFF + 6);
	} else {
		FUZZ_ASSERT(type == VAAI_ROD_TYPE_AUR ||
			    type == VAAI_ROD_TYPE_PIT_VULNERABLE ||
			    type == VAAI_ROD_TYPE_PIT_PERSISTENT ||
			    type == VAAI_ROD_TYPE_ZERO);
		FUZZ_ASSERT(get_unaligned_be16(&l.token[6]) ==
			    VAAI_ODX_TOKEN_BODY);
	}
}

/*
 * Where [pos, pos + len) lies in the byte stream of the ranges r[] (blocks
 * of bs, one after another): its offset there, U64_MAX if it is not inside
 * one range.
 */
static u64 stream_off(const struct vaai_odx_range *r, unsigned int nr, u32 bs,
		      loff_t pos, loff_t len)
{
	u64 off = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u64 start = r[i].lba * bs, n = (u64)r[i].nolb * bs;

		if ((u64)pos >= start && (u64)pos - start < n)
			return (u64)len <= n - ((u64)pos - start) ?
			       off + ((u64)pos - start) : U64_MAX;
		off += n;
	}
	return U64_MAX;
}

/* The token of l's ranges from byte skip on, over l's ranges in dbs blocks. */
static void check_map(u32 sbs, u32 dbs, u64 skip)
{
	u64 have = l.blocks * sbs, todo = l.blocks * dbs, bytes, done = 0;
	unsigned int i, n, max = 2 * l.nr;

	have = have > skip ? have - skip : 0;
	n = vaai_odx_map(l.range, l.nr, sbs, skip, l.range, l.nr, dbs, seg,
			 max, &bytes);
	FUZZ_ASSERT(n <= max);
	for (i = 0; i < n; i++) {
		const struct vaai_xseg *s = &seg[i];

		FUZZ_ASSERT(s->src == 0 && s->dst == 1 && s->len > 0);
		FUZZ_ASSERT(stream_off(l.range, l.nr, sbs, s->src_pos, s->len) ==
			    skip + done);
		FUZZ_ASSERT(stream_off(l.range, l.nr, dbs, s->dst_pos, s->len) ==
			    done);
		done += s->len;
	}
	FUZZ_ASSERT(done == bytes && bytes <= todo && bytes % dbs == 0);
	/* all of the destination, or all the whole blocks the token has */
	FUZZ_ASSERT(bytes == min(todo, have - have % dbs));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct vaai_odx_lun lun;
	struct vaai_fault f;
	u8 bs_sel, which;
	u32 len, dbs, hdr;
	u64 skip;
	u8 *list;

	lun.nr_blocks = fuzz_take(&in, 8) ?: 1;
	bs_sel = fuzz_take(&in, 1);
	which = fuzz_take(&in, 1);
	lun.block_size = bs_sel & 1 ? 4096 : 512;
	dbs = bs_sel & 2 ? other_bs(lun.block_size) : lun.block_size;
	hdr = which & 1 ? VAAI_ODX_WUT_HDR_LEN : VAAI_ODX_PT_HDR_LEN;
	len = min_t(size_t, in.n, MAX_LIST);
	list = malloc(len ?: 1);	/* exact size: ASan sees overreads */
	memcpy(list, in.p, len);

	if (which & 1)
		f = vaai_odx_wut_parse(list, len, &lun, &l);
	else
		f = vaai_odx_pt_parse(list, len, &lun, &l);
	if (f.key) {
		fuzz_check_list_fault(&f, len);
		goto out;
	}
	check_ranges(&lun, list, len, hdr);
	if (which & 1) {
		check_wut(list, len);
		skip = l.offset > U64_MAX / dbs ? U64_MAX : l.offset * dbs;
	} else {
		check_pt(list);
		skip = (u64)(which >> 1) * dbs;
	}
	/* byte positions are loff_t: a LUN's bytes fit in one */
	if (lun.nr_blocks <= S64_MAX / 4096)
		check_map(lun.block_size, dbs, skip);
out:
	free(list);
	return 0;
}
