// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: LBA range locks.
 *
 * COMPARE AND WRITE must be atomic against every command that touches its
 * blocks (SBC-4 5.3), without serializing unrelated commands the way one
 * semaphore per device would.  Every medium access holds a lock on exactly
 * its byte range: reads and writes share (they never wait for each other),
 * COMPARE AND WRITE is exclusive.  Requests are granted in arrival order
 * among those they conflict with, so a steady stream of writes cannot starve
 * a waiting COMPARE AND WRITE.
 *
 * When no exclusive request is queued, taking a shared lock is a list
 * insertion under the device's spinlock, with no search.  The queue itself
 * is vaai_range_queue.c; this file adds the lock and the waiting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/ktime.h>
#include <linux/wait.h>

#include "vaai.h"

void vaai_rlock_init(struct vaai_rlock *rl)
{
	spin_lock_init(&rl->lock);
	vaai_range_queue_init(&rl->queue);
	init_waitqueue_head(&rl->wait);
}

static bool vaai_range_granted(struct vaai_rlock *rl, struct vaai_range *r)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&rl->lock, flags);
	ok = vaai_range_grantable(&rl->queue, r);
	spin_unlock_irqrestore(&rl->lock, flags);
	return ok;
}

/*
 * Queue r for [start, end) bytes and wait until it is granted.  Sleeps;
 * never from a completion path.  Returns the nanoseconds it waited, 0 when
 * the range was free.
 */
u64 vaai_range_lock(struct vaai_rlock *rl, struct vaai_range *r,
		    loff_t start, loff_t end, bool excl)
{
	unsigned long flags;
	u64 since;
	bool ok;

	spin_lock_irqsave(&rl->lock, flags);
	ok = vaai_range_queue_add(&rl->queue, r, start, end, excl);
	spin_unlock_irqrestore(&rl->lock, flags);
	if (ok)
		return 0;
	since = ktime_get_ns();
	wait_event(rl->wait, vaai_range_granted(rl, r));
	return ktime_get_ns() - since ?: 1;
}

/*
 * Would a lock on [start, end) wait now?  A hint, true only until the lock
 * is dropped: the answer may change as soon as the spinlock is.
 */
bool vaai_range_would_wait(struct vaai_rlock *rl, loff_t start, loff_t end,
			   bool excl)
{
	unsigned long flags;
	bool wait;

	if (!excl && !READ_ONCE(rl->queue.nr_excl))
		return false;
	spin_lock_irqsave(&rl->lock, flags);
	wait = vaai_range_queue_would_wait(&rl->queue, start, end, excl);
	spin_unlock_irqrestore(&rl->lock, flags);
	return wait;
}

/* vaai_range_lock() on vdev's blocks, the wait counted in its metrics. */
void vaai_dev_range_lock(struct vaai_dev *vdev, struct vaai_range *r,
			 loff_t start, loff_t end, bool excl)
{
	u64 waited = vaai_range_lock(&vdev->rlock, r, start, end, excl);

	if (waited)
		vaai_metrics_lock_wait(vdev, waited);
}

/* Drop r; any context, completion paths included. */
void vaai_range_unlock(struct vaai_rlock *rl, struct vaai_range *r)
{
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&rl->lock, flags);
	wake = vaai_range_queue_del(&rl->queue, r);
	spin_unlock_irqrestore(&rl->lock, flags);
	if (wake)
		wake_up_all(&rl->wait);
}
