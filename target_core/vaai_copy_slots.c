// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the chunk slots of the copy engine, each with its
 * bounce buffer, handed out oldest copy first.
 *
 * All copies together move one chunk per CPU at a time (vaai_copy.c says
 * why), so one bounce buffer per slot is all they need.  A buffer per
 * worker, allocated for each command, cost as much again as the copy: a
 * 4 MiB EXTENDED COPY's four workers took 1 MiB of new pages, each
 * cleared by the allocator (init_on_alloc, on in Debian's kernels), and
 * perf in the guest put 18 % of all CPU time in vaai_pages_alloc() beside
 * 33 % moving the data (four copies in flight on RAM disks).  A slot's
 * buffer is allocated the first time a bounce needs it (again, if that
 * failed), and kept until the module goes: 256 KiB per CPU online at
 * most, and only as many as were ever in use at once (a slot freed is
 * the next taken).
 *
 * A worker waits for a slot in order of its copy's age, then of its own
 * arrival: oldest copy first, so that of the copies a host keeps in
 * flight (ESXi four or eight of 4 MiB, the next sent as one ends) each
 * ends as soon as it can, rather than all of them at one pace and
 * together.  A copy's age is renewed every VAAI_COPY_QUANTUM chunks it
 * moves (vaai_copy.c), so that a long WRITE USING TOKEN does not hold
 * every other copy back until it ends: oldest first up to a quantum, then
 * in turn.
 */
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "vaai_xcopy.h"

struct vaai_copy_slot {
	struct list_head entry;		/* in the pool while free */
	struct bio_vec *bv;		/* the bounce buffer, once needed */
	unsigned int nr;
};

static struct {
	spinlock_t lock;
	struct list_head free;		/* of vaai_copy_slot */
	struct list_head waiters;	/* of vaai_copy_waiter, oldest first */
	atomic64_t age;
	struct vaai_copy_slot *slots;
	unsigned int nr;
} vaai_slots;

int vaai_copy_slots_init(void)
{
	unsigned int i;

	spin_lock_init(&vaai_slots.lock);
	INIT_LIST_HEAD(&vaai_slots.free);
	INIT_LIST_HEAD(&vaai_slots.waiters);
	atomic64_set(&vaai_slots.age, 0);
	vaai_slots.nr = num_online_cpus();
	vaai_slots.slots = kcalloc(vaai_slots.nr, sizeof(*vaai_slots.slots),
				   GFP_KERNEL);
	if (!vaai_slots.slots)
		return -ENOMEM;
	for (i = 0; i < vaai_slots.nr; i++)
		list_add_tail(&vaai_slots.slots[i].entry, &vaai_slots.free);
	return 0;
}

/* Once no copy runs: every slot is back in the pool. */
void vaai_copy_slots_exit(void)
{
	unsigned int i;

	for (i = 0; i < vaai_slots.nr; i++) {
		struct vaai_copy_slot *s = &vaai_slots.slots[i];

		if (s->bv)
			vaai_pages_free(s->bv, s->nr);
	}
	kfree(vaai_slots.slots);
}

u64 vaai_copy_slot_age(void)
{
	return atomic64_inc_return(&vaai_slots.age);
}

/* Behind the waiters as old or older: one copy's workers in turn. */
static void vaai_copy_slot_enqueue(struct vaai_copy_waiter *w)
{
	struct vaai_copy_waiter *pos;

	list_for_each_entry_reverse(pos, &vaai_slots.waiters, entry) {
		if (pos->age <= w->age) {
			list_add(&w->entry, &pos->entry);
			return;
		}
	}
	list_add(&w->entry, &vaai_slots.waiters);
}

/* The slot released goes to the oldest waiter, else back to the pool. */
static void vaai_copy_slot_release(struct vaai_copy_slot *s)
{
	struct vaai_copy_waiter *w;

	w = list_first_entry_or_null(&vaai_slots.waiters,
				     struct vaai_copy_waiter, entry);
	if (!w) {
		list_add(&s->entry, &vaai_slots.free);
		return;
	}
	list_del_init(&w->entry);
	WRITE_ONCE(w->slot, s);
	wake_up_process(w->task);
}

/*
 * A slot for a copy of this age, or NULL: then w waits in line, and
 * vaai_copy_slot_wait() until it is granted or given up.
 */
struct vaai_copy_slot *vaai_copy_slot_get(struct vaai_copy_waiter *w, u64 age)
{
	struct vaai_copy_slot *s = NULL;

	w->task = current;
	w->age = age;
	w->slot = NULL;
	spin_lock(&vaai_slots.lock);
	if (list_empty(&vaai_slots.waiters))
		s = list_first_entry_or_null(&vaai_slots.free,
					     struct vaai_copy_slot, entry);
	if (s)
		list_del(&s->entry);
	else
		vaai_copy_slot_enqueue(w);
	spin_unlock(&vaai_slots.lock);
	return s;
}

/* Wait up to timeout jiffies for w's slot; NULL: not granted yet. */
struct vaai_copy_slot *vaai_copy_slot_wait(struct vaai_copy_waiter *w,
					   long timeout)
{
	struct vaai_copy_slot *s;

	/* TASK_IDLE: a copy waiting its turn is no load */
	set_current_state(TASK_IDLE);
	/* granted under the lock, before the wakeup: seen here, or woken */
	if (!READ_ONCE(w->slot))
		schedule_timeout(timeout);
	__set_current_state(TASK_RUNNING);
	spin_lock(&vaai_slots.lock);
	s = w->slot;
	spin_unlock(&vaai_slots.lock);
	return s;
}

/* w stops waiting; a slot granted meanwhile goes on to the next. */
void vaai_copy_slot_cancel(struct vaai_copy_waiter *w)
{
	spin_lock(&vaai_slots.lock);
	if (w->slot)
		vaai_copy_slot_release(w->slot);
	else
		list_del(&w->entry);
	spin_unlock(&vaai_slots.lock);
}

void vaai_copy_slot_put(struct vaai_copy_slot *s)
{
	spin_lock(&vaai_slots.lock);
	vaai_copy_slot_release(s);
	spin_unlock(&vaai_slots.lock);
}

/*
 * Between two chunks of a copy of this age: keep the slot (true) if keep
 * says the worker may and no older copy waits; else it goes to the
 * oldest waiter, or back to the pool.
 */
bool vaai_copy_slot_pass(struct vaai_copy_slot *s, u64 age, bool keep)
{
	struct vaai_copy_waiter *w;

	spin_lock(&vaai_slots.lock);
	w = list_first_entry_or_null(&vaai_slots.waiters,
				     struct vaai_copy_waiter, entry);
	keep = keep && (!w || w->age >= age);
	if (!keep)
		vaai_copy_slot_release(s);
	spin_unlock(&vaai_slots.lock);
	return keep;
}

/* The slot's bounce buffer of VAAI_COPY_CHUNK bytes; NULL: no memory. */
struct bio_vec *vaai_copy_slot_buffer(struct vaai_copy_slot *s)
{
	if (!s->bv)
		s->bv = vaai_pages_alloc(VAAI_COPY_CHUNK, &s->nr);
	return s->bv;
}
