// SPDX-License-Identifier: GPL-2.0
/* LBA range locks (vaai_range_queue.c): who shares, who waits, who is woken. */
#include "harness.h"

static struct vaai_range_queue q;
static struct vaai_range r[4];

TEST(range_overlap_is_half_open)
{
	const struct vaai_range a = { .start = 0, .end = 512, .excl = true };
	const struct vaai_range touching = { .start = 512, .end = 1024 };
	const struct vaai_range inside = { .start = 100, .end = 101 };

	CHECK(!vaai_range_conflicts(&a, &touching));
	CHECK(vaai_range_conflicts(&a, &inside));
	CHECK(vaai_range_conflicts(&inside, &a));
}

TEST(range_shared_never_conflict)
{
	const struct vaai_range a = { .start = 0, .end = 512 };

	CHECK(!vaai_range_conflicts(&a, &a));
	vaai_range_queue_init(&q);
	CHECK(vaai_range_queue_add(&q, &r[0], 0, 512, false));
	CHECK(vaai_range_queue_add(&q, &r[1], 0, 512, false));
	CHECK(!vaai_range_queue_del(&q, &r[0]));	/* nobody to wake */
	CHECK(!vaai_range_queue_del(&q, &r[1]));
}

TEST(range_exclusive_waits_for_earlier_shared)
{
	vaai_range_queue_init(&q);
	CHECK(vaai_range_queue_add(&q, &r[0], 0, 4096, false));
	CHECK(!vaai_range_queue_add(&q, &r[1], 1024, 1536, true));
	CHECK(vaai_range_queue_del(&q, &r[0]));
	CHECK(vaai_range_grantable(&q, &r[1]));
	CHECK(vaai_range_queue_del(&q, &r[1]));
	CHECK_EQ(q.nr_excl, 0);
}

/* A later write must not overtake a waiting COMPARE AND WRITE. */
TEST(range_later_shared_waits_behind_exclusive)
{
	vaai_range_queue_init(&q);
	CHECK(vaai_range_queue_add(&q, &r[0], 0, 4096, false));
	CHECK(!vaai_range_queue_add(&q, &r[1], 0, 512, true));
	CHECK(!vaai_range_queue_add(&q, &r[2], 0, 512, false));
	CHECK(vaai_range_queue_add(&q, &r[3], 8192, 9000, false));
	vaai_range_queue_del(&q, &r[0]);
	CHECK(vaai_range_grantable(&q, &r[1]));
	CHECK(!vaai_range_grantable(&q, &r[2]));
	CHECK(vaai_range_queue_del(&q, &r[1]));	/* wakes r[2] */
	CHECK(vaai_range_grantable(&q, &r[2]));
	vaai_range_queue_del(&q, &r[2]);
	vaai_range_queue_del(&q, &r[3]);
}

TEST(range_disjoint_exclusives_run_together)
{
	vaai_range_queue_init(&q);
	CHECK(vaai_range_queue_add(&q, &r[0], 0, 512, true));
	CHECK(vaai_range_queue_add(&q, &r[1], 512, 1024, true));
	CHECK_EQ(q.nr_excl, 2);
	vaai_range_queue_del(&q, &r[1]);
	vaai_range_queue_del(&q, &r[0]);
	CHECK(list_empty(&q.list));
}

/* The hint the start of a large transfer takes: would it wait now? */
TEST(range_would_wait_only_behind_a_conflict)
{
	vaai_range_queue_init(&q);
	CHECK(!vaai_range_queue_would_wait(&q, 0, 4096, false));
	CHECK(!vaai_range_queue_would_wait(&q, 0, 4096, true));
	CHECK(vaai_range_queue_add(&q, &r[0], 0, 4096, false));
	CHECK(!vaai_range_queue_would_wait(&q, 0, 512, false));	/* shared */
	CHECK(vaai_range_queue_would_wait(&q, 0, 512, true));
	CHECK(!vaai_range_queue_add(&q, &r[1], 1024, 1536, true));
	CHECK(vaai_range_queue_would_wait(&q, 1000, 1100, false));
	CHECK(!vaai_range_queue_would_wait(&q, 1536, 2048, false));	/* touching */
	CHECK(!vaai_range_queue_would_wait(&q, 8192, 9000, false));
	/* a question, not a request: nothing was queued */
	CHECK_EQ(q.nr_excl, 1);
	vaai_range_queue_del(&q, &r[1]);
	vaai_range_queue_del(&q, &r[0]);
	CHECK(list_empty(&q.list));
}
