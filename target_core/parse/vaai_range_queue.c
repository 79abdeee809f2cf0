// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the queue of LBA range locks, without the spinlock that
 * guards it and the wait queue its waiters sleep on (vaai_lock.c).
 *
 * Reads and writes share, COMPARE AND WRITE is exclusive (SBC-4 5.3).  A
 * request is granted once nothing queued before it conflicts with it, so
 * requests are granted in arrival order among those they conflict with.
 * When no exclusive request is queued, everything is granted at once.
 */
#include "vaai_parse.h"

void vaai_range_queue_init(struct vaai_range_queue *q)
{
	INIT_LIST_HEAD(&q->list);
	q->nr_excl = 0;
}

bool vaai_range_conflicts(const struct vaai_range *a, const struct vaai_range *b)
{
	return (a->excl || b->excl) && a->start < b->end && b->start < a->end;
}

/* May r, queued in q, go ahead of everything queued before it? */
bool vaai_range_grantable(const struct vaai_range_queue *q,
			  const struct vaai_range *r)
{
	const struct vaai_range *prev;

	if (!q->nr_excl)
		return true;
	list_for_each_entry(prev, &q->list, node) {
		if (prev == r)
			return true;
		if (vaai_range_conflicts(prev, r))
			return false;
	}
	return true;
}

/*
 * Would a request for [start, end) bytes, queued now, wait?  Only behind
 * an exclusive request it overlaps, or that a shared one overlaps.
 */
bool vaai_range_queue_would_wait(const struct vaai_range_queue *q,
				 loff_t start, loff_t end, bool excl)
{
	const struct vaai_range probe = { .start = start, .end = end, .excl = excl };
	const struct vaai_range *prev;

	if (!q->nr_excl && !excl)
		return false;
	list_for_each_entry(prev, &q->list, node)
		if (vaai_range_conflicts(prev, &probe))
			return true;
	return false;
}

/* Queue r for [start, end) bytes; whether it is granted at once. */
bool vaai_range_queue_add(struct vaai_range_queue *q, struct vaai_range *r,
			  loff_t start, loff_t end, bool excl)
{
	r->start = start;
	r->end = end;
	r->excl = excl;
	list_add_tail(&r->node, &q->list);
	if (excl)
		q->nr_excl++;
	return vaai_range_grantable(q, r);
}

/*
 * Take r off the queue; whether waiters must look again.  Someone waits
 * only behind an exclusive request, queued or leaving.
 */
bool vaai_range_queue_del(struct vaai_range_queue *q, struct vaai_range *r)
{
	list_del(&r->node);
	if (r->excl)
		q->nr_excl--;
	return q->nr_excl || r->excl;
}
