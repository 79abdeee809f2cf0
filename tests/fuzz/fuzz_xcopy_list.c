// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the EXTENDED COPY parameter list (vaai_xcopy_list.c),
 * CSCDs resolved among four fake LUNs by the last byte of the designator
 * (tests/parsers/xcopy_build.c; 4 and up name none).
 *
 * Input: one byte per fake LUN (bit 0: 4096-byte blocks, else 512; bit 1:
 * read-only to this nexus; bit 2: not reachable; bits 5:3: capacity, from
 * caps[]), then the list (at most what the CDB check lets through).
 */
#include "fuzz.h"
#include "xcopy_build.h"

#define NR_FAKES	4
#define MAX_LIST	(VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN)

static const u64 caps[8] = { 1, 2, 8, 1000, 65535, 2097152, 1ULL << 32,
			     1ULL << 40 };

static void fakes_setup(struct fuzz_in *in, struct fake_lun *lun)
{
	unsigned int i;

	for (i = 0; i < NR_FAKES; i++) {
		u8 b = fuzz_take(in, 1);

		lun[i] = (struct fake_lun){
			.block_size = b & 1 ? 4096 : 512,
			.readonly = b & 2,
			.absent = b & 4,
			.nr_blocks = caps[(b >> 3) & 7],
		};
	}
}

static void check_side(const struct vaai_cscd_info *c, loff_t pos, loff_t len)
{
	FUZZ_ASSERT(pos % c->block_size == 0 && len % c->block_size == 0);
	FUZZ_ASSERT((u64)pos / c->block_size < c->nr_blocks);
	FUZZ_ASSERT((u64)len / c->block_size <=
		    c->nr_blocks - (u64)pos / c->block_size);
}

static void check_header(const struct vaai_xcopy_list *xl, const u8 *list)
{
	u8 usage = (list[1] >> 3) & 3;

	FUZZ_ASSERT(usage != 1 && !get_unaligned_be32(&list[12]));
	FUZZ_ASSERT(xl->listed == (usage != VAAI_LID_NONE));
	FUZZ_ASSERT(xl->hold == (usage == VAAI_LID_HOLD));
	FUZZ_ASSERT(xl->listed || !list[0]);
}

static void check_accepted(const struct vaai_xcopy_list *xl,
			   const struct fake_nexus *nx, const u8 *list, u32 len)
{
	unsigned int i;

	check_header(xl, list);
	FUZZ_ASSERT(xl->nr_cscds <= VAAI_XCOPY_MAX_CSCDS);
	FUZZ_ASSERT(xl->nr_segs <= VAAI_XCOPY_MAX_SEGS);
	FUZZ_ASSERT(VAAI_XCOPY_HDR_LEN + xl->nr_cscds * VAAI_XCOPY_CSCD_LEN +
		    xl->nr_segs * VAAI_XCOPY_SEG_B2B_LEN <= len);
	for (i = 0; i < xl->nr_cscds; i++)
		FUZZ_ASSERT(xl->cscd[i] == &nx->slot[i]);
	for (i = 0; i < xl->nr_segs; i++) {
		const struct vaai_xseg *s = &xl->seg[i];

		FUZZ_ASSERT(s->src < xl->nr_cscds && s->dst < xl->nr_cscds);
		FUZZ_ASSERT(xl->cscd[s->src]->src && xl->cscd[s->dst]->dst);
		FUZZ_ASSERT(!xl->cscd[s->dst]->readonly);
		FUZZ_ASSERT(s->len <= VAAI_XCOPY_MAX_SEG_BYTES);
		check_side(xl->cscd[s->src], s->src_pos, s->len);
		check_side(xl->cscd[s->dst], s->dst_pos, s->len);
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct vaai_xcopy_list xl;
	static struct fake_nexus nx;
	struct fake_lun lun[NR_FAKES];
	struct fuzz_in in = { data, size };
	struct vaai_fault f;
	u8 *list;
	u32 len;

	fakes_setup(&in, lun);
	nx = (struct fake_nexus){ .lun = lun, .nr_luns = NR_FAKES };
	len = min_t(size_t, in.n, MAX_LIST);
	list = malloc(len ?: 1);	/* exact size: ASan sees overreads */
	memcpy(list, in.p, len);

	f = vaai_xcopy_list_parse(list, len, &xl, fake_resolve, &nx);
	FUZZ_ASSERT(xl.nr_cscds <= VAAI_XCOPY_MAX_CSCDS);
	FUZZ_ASSERT(nx.nr_resolved == xl.nr_cscds ||
		    (f.key && nx.nr_resolved == xl.nr_cscds + 1));
	if (f.key)
		fuzz_check_list_fault(&f, len);
	else
		check_accepted(&xl, &nx, list, len);
	free(list);
	return 0;
}
