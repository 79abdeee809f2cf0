// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: sequences of range locks taken and dropped
 * (vaai_range_queue.c), against a model of who holds a grant.
 *
 * Input: a list of operations on 16 slots.  A byte with bit 7 set drops
 * the lock in slot (bits 3:0), if it is queued; otherwise it queues one
 * there (if free): bit 6 exclusive, then a byte of start and a byte of
 * length - 1, in 512-byte units.
 */
#include "fuzz.h"

#define NR_SLOTS	16

static struct vaai_range_queue q;
static struct vaai_range r[NR_SLOTS];
static bool queued[NR_SLOTS], granted[NR_SLOTS];

/*
 * Grants are kept once given; only the request just queued (when its add
 * said so) or, after a drop that asked for a wake-up, a waiter may get one.
 */
static void check_grants(int added, bool added_ok, bool woken)
{
	unsigned int i, j, nr_excl = 0;

	for (i = 0; i < NR_SLOTS; i++) {
		bool g;

		if (!queued[i])
			continue;
		nr_excl += r[i].excl;
		g = vaai_range_grantable(&q, &r[i]);
		FUZZ_ASSERT(g || !granted[i]);
		if ((int)i == added)
			FUZZ_ASSERT(g == added_ok);
		else if (g && !granted[i])
			FUZZ_ASSERT(woken);
		granted[i] = g;
	}
	FUZZ_ASSERT(nr_excl == q.nr_excl);
	for (i = 0; i < NR_SLOTS; i++)
		for (j = i + 1; j < NR_SLOTS; j++)
			FUZZ_ASSERT(!(granted[i] && granted[j] && queued[i] &&
				      queued[j] &&
				      vaai_range_conflicts(&r[i], &r[j])));
}

static void drop(unsigned int s)
{
	bool wake = vaai_range_queue_del(&q, &r[s]);

	queued[s] = granted[s] = false;
	check_grants(-1, false, wake);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned int s;

	vaai_range_queue_init(&q);
	memset(queued, 0, sizeof(queued));
	memset(granted, 0, sizeof(granted));
	while (in.n) {
		u8 op = fuzz_take(&in, 1);
		loff_t start, len;
		bool ok;

		s = op % NR_SLOTS;
		if (op & 0x80) {
			if (queued[s])
				drop(s);
			continue;
		}
		start = fuzz_take(&in, 1) * 512;
		len = (fuzz_take(&in, 1) + 1) * 512;
		if (queued[s])
			continue;
		ok = vaai_range_queue_add(&q, &r[s], start, start + len, op & 0x40);
		queued[s] = true;
		check_grants(s, ok, false);
	}
	for (s = 0; s < NR_SLOTS; s++)
		if (queued[s])
			drop(s);
	FUZZ_ASSERT(list_empty(&q.list) && !q.nr_excl);
	return 0;
}
