// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the UNMAP parameter list (vaai_unmap_list.c).
 *
 * Input: capacity in blocks (be64, 0 read as 1), MAXIMUM UNMAP BLOCK
 * DESCRIPTOR COUNT (be16), MAXIMUM UNMAP LBA COUNT (be32), then the list
 * (at most 65535 bytes: PARAMETER LIST LENGTH is 16 bits).
 */
#include "fuzz.h"

#define LIMITS_LEN	14
#define MAX_LIST	0xffff

static struct vaai_unmap_range range[MAX_LIST / VAAI_UNMAP_DESC_LEN];

static void check_accepted(const struct vaai_unmap_limits *lim, unsigned int nr,
			   u32 len, const struct vaai_unmap_span *span)
{
	u64 sum = 0;
	unsigned int i;

	FUZZ_ASSERT(VAAI_UNMAP_HDR_LEN + (u64)nr * VAAI_UNMAP_DESC_LEN <= len);
	FUZZ_ASSERT(nr <= lim->max_descs && span->nr <= nr);
	for (i = 0; i < span->nr; i++) {
		const struct vaai_unmap_range *r = &range[i];

		FUZZ_ASSERT(r->nolb && r->lba < lim->nr_blocks);
		FUZZ_ASSERT(r->nolb <= lim->nr_blocks - r->lba);
		FUZZ_ASSERT(span->first <= r->lba && r->lba + r->nolb <= span->end);
		sum += r->nolb;
	}
	FUZZ_ASSERT(sum == span->blocks && sum <= lim->max_lbas);
	FUZZ_ASSERT(span->nr || (!span->blocks && !span->end));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct vaai_unmap_limits lim;
	struct vaai_unmap_span span;
	struct vaai_fault f;
	unsigned int nr = 0;
	u8 *list;
	u32 len;

	lim.nr_blocks = fuzz_take(&in, 8) ?: 1;
	lim.max_descs = fuzz_take(&in, 2);
	lim.max_lbas = fuzz_take(&in, 4);
	len = min_t(size_t, in.n, MAX_LIST);
	list = malloc(len ?: 1);	/* exact size: ASan sees overreads */
	memcpy(list, in.p, len);

	f = vaai_unmap_list_check(list, len, &lim, &nr);
	if (!f.key)
		f = vaai_unmap_list_collect(list, nr, &lim, &span, range);
	if (f.key)
		fuzz_check_list_fault(&f, len);
	else
		check_accepted(&lim, nr, len, &span);
	free(list);
	return 0;
}
