// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the copy engine behind EXTENDED COPY and WRITE USING
 * TOKEN.
 *
 * Segments run in order, off the fabric's thread.  Within a segment the
 * bytes move one of three ways:
 *   - clone: file to file on a file system that can share extents
 *     (remap_file_range: XFS, btrfs): vfs_copy_file_range() in large steps;
 *   - splice: file to file where neither side does direct I/O (tmpfs, or
 *     io_mode buffered): vfs_copy_file_range() with COPY_FILE_SPLICE, page
 *     cache to page cache with no bounce buffer, in chunks of
 *     VAAI_COPY_CHUNK bytes;
 *   - bounce: a block device on either side, or a file the direct path
 *     serves: chunks read into a buffer and written out, with direct I/O
 *     where the store does it (no page cache on either side).
 * Chunks are taken by up to VAAI_COPY_WORKERS workers at once, and moved
 * by no more than one worker per CPU in all, oldest copy first, each
 * bounced through its slot's buffer (vaai_copy_slots.c); no worker waits
 * for another's chunk.  A command whose segments are all clones starts on
 * the submitting CPU (vaai_queue_clone()); the others on an unbound
 * queue.  A segment whose source and destination overlap on one LUN is
 * bounced by one worker walking away from the overlap, so the result is as
 * if all of the source had been read before any of it was overwritten.
 *
 * Range locks keep COMPARE AND WRITE atomic against the copy.  A bounced
 * chunk is read under a shared lock on the source and written under one on
 * the destination, one at a time.  A clone or splice reads and writes in one
 * call and holds both: one lock over both ranges on one LUN, else the two in
 * the order of the devices' addresses.  Copies thus never wait for each
 * other in a circle; every other request holds one lock at a time.  A
 * clone step then takes its LUNs' clone locks, in the same order: one
 * clone step at a time on a LUN.
 * Aborts (TMR ABORT TASK, LUN RESET, session teardown) are noticed between
 * chunks and clone steps.
 *
 * A WRITE USING TOKEN with a persistent token reads the token's file instead
 * of the source LUN (vaai_odx_snap.c): cloned from where the destination
 * shares its file system, else bounced; nothing writes that file, so it
 * takes no lock.  One with a change-vulnerable token stops, and fails, once
 * a change to the token's ranges cancels it, its own writes included.
 * Every write here cancels the change-vulnerable tokens it reaches.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/fs.h>
#include <linux/percpu-refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>
#include <uapi/linux/sched/types.h>

#include "vaai_xcopy.h"

#define VAAI_COPY_WORKERS	4
/* How often a worker waiting for a slot checks that its copy is wanted. */
#define VAAI_COPY_SLOT_WAIT	(HZ / 10)
/* Chunks a copy moves before it waits its turn behind younger ones. */
#define VAAI_COPY_QUANTUM	64
/* One clone call at most, so an abort is noticed. */
#define VAAI_COPY_CLONE_STEP	(64LL << 20)

enum vaai_copy_how {
	VAAI_COPY_BOUNCE,
	VAAI_COPY_SPLICE,
	VAAI_COPY_CLONE,
};

struct vaai_copy_job {
	struct vaai_xcopy *xc;
	struct vaai_cscd *csrc, *cdst;
	struct vaai_dev *src, *dst;
	struct file *sfile;		/* a persistent token's, else NULL */
	loff_t src_pos, dst_pos, len;
	enum vaai_copy_how how;
	bool serial;			/* overlapping: one worker ... */
	bool backward;			/* ... and last chunk first */
	atomic64_t next;		/* bytes handed out to workers */
	atomic_t error;			/* first error */
};

struct vaai_copy_worker {
	struct work_struct work;
	struct vaai_copy_job *job;
};

/* The locks a clone or splice holds on [spos, +n) and [dpos, +n). */
struct vaai_copy_locks {
	struct vaai_dev *dev[2];
	struct vaai_range range[2];
};

/* Was the token the copy uses cancelled by a change to its ranges? */
static int vaai_copy_token_check(struct vaai_xcopy *xc)
{
	return xc->tok && vaai_odx_token_cancelled(xc->tok) ? -ECANCELED : 0;
}

/*
 * May the copy go on?  Not once the command is aborted or its session goes
 * (-EINTR), a LUN it uses is being removed (-ENODEV), another initiator
 * has reserved one (-EBUSY: a reservation taken, or preempted, mid-copy),
 * or its token was cancelled (-ECANCELED).
 */
static int vaai_copy_check(struct vaai_copy_job *job)
{
	struct se_cmd *cmd = job->xc->cmd;

	if (vaai_cmd_stopped(cmd))
		return -EINTR;
	if (vaai_copy_token_check(job->xc))
		return -ECANCELED;
	if (percpu_ref_is_dying(&job->csrc->lun->lun_ref) ||
	    percpu_ref_is_dying(&job->cdst->lun->lun_ref))
		return -ENODEV;
	if (vaai_cscd_reserved(cmd, job->csrc) ||
	    (job->cdst != job->csrc && vaai_cscd_reserved(cmd, job->cdst)))
		return -EBUSY;
	return 0;
}

static void vaai_copy_progress(struct vaai_xcopy *xc, loff_t n)
{
	atomic64_add(n, &xc->status->bytes_done);
}

static void vaai_copy_lock_both(struct vaai_copy_job *job, loff_t spos,
				loff_t dpos, loff_t n, struct vaai_copy_locks *l)
{
	struct vaai_dev *a = job->src, *b = job->dst;
	loff_t bpos = dpos;

	if (job->sfile) {		/* nothing writes a token's file */
		l->dev[0] = b;
		l->dev[1] = NULL;
		vaai_dev_range_lock(b, &l->range[0], dpos, dpos + n, false);
	} else if (a == b) {
		l->dev[0] = a;
		l->dev[1] = NULL;
		vaai_dev_range_lock(a, &l->range[0], min(spos, dpos),
				    max(spos, dpos) + n, false);
	} else {
		if (a > b) {
			swap(a, b);
			swap(spos, dpos);
		}
		l->dev[0] = a;
		l->dev[1] = b;
		vaai_dev_range_lock(a, &l->range[0], spos, spos + n, false);
		vaai_dev_range_lock(b, &l->range[1], dpos, dpos + n, false);
	}
	vaai_odx_touch(job->dst, bpos, n);
}

static void vaai_copy_unlock_both(struct vaai_copy_locks *l)
{
	vaai_range_unlock(&l->dev[0]->rlock, &l->range[0]);
	if (l->dev[1])
		vaai_range_unlock(&l->dev[1]->rlock, &l->range[1]);
}

/*
 * XFS and btrfs remap under the inode's lock held exclusively, on both
 * files.  Copies waiting there queue as writers, and every read and write
 * of the LUN that comes later, a heartbeat's, waits behind all of them
 * (traced: docs/ats.md).  So a LUN's clone steps go one at a time, and
 * no more than one of them waits on the inode; the locks are taken after
 * the range locks, in the same order.
 */
static void vaai_copy_clone_lock(struct vaai_copy_locks *l)
{
	mutex_lock(&l->dev[0]->copies.clone);
	if (l->dev[1])
		mutex_lock_nested(&l->dev[1]->copies.clone, SINGLE_DEPTH_NESTING);
}

static void vaai_copy_clone_unlock(struct vaai_copy_locks *l)
{
	if (l->dev[1])
		mutex_unlock(&l->dev[1]->copies.clone);
	mutex_unlock(&l->dev[0]->copies.clone);
}

/* vfs_copy_file_range() until all n bytes are across. */
static int vaai_copy_file_range(struct vaai_copy_job *job, loff_t spos,
				loff_t dpos, loff_t n, unsigned int flags)
{
	bool clone = job->how == VAAI_COPY_CLONE;
	struct vaai_copy_locks l;
	int err = 0;

	vaai_copy_lock_both(job, spos, dpos, n, &l);
	if (clone)
		vaai_copy_clone_lock(&l);
	while (n) {
		ssize_t ret = vfs_copy_file_range(job->sfile ?: job->src->file,
						  spos, job->dst->file, dpos, n,
						  flags);

		if (ret <= 0) {
			/* 0: past the end, but the LUN lies inside the file */
			err = ret ? ret : -EIO;
			break;
		}
		spos += ret;
		dpos += ret;
		n -= ret;
		vaai_copy_progress(job->xc, ret);
	}
	if (clone)
		vaai_copy_clone_unlock(&l);
	vaai_copy_unlock_both(&l);
	return err;
}

static int vaai_copy_bounce(struct vaai_copy_job *job, loff_t spos,
			    loff_t dpos, size_t n, struct bio_vec *bv)
{
	unsigned int pages = DIV_ROUND_UP(n, PAGE_SIZE);
	struct vaai_range r;
	int ret;

	if (job->sfile) {
		ret = vaai_file_xfer(job->sfile, false, bv, pages, n, spos, 0);
	} else {
		vaai_dev_range_lock(job->src, &r, spos, spos + n, false);
		ret = job->src->store->xfer_bvec(job->src, false, spos, bv,
						 pages, n, false);
		vaai_range_unlock(&job->src->rlock, &r);
	}
	if (ret)
		return ret;

	vaai_dev_range_lock(job->dst, &r, dpos, dpos + n, false);
	vaai_odx_touch(job->dst, dpos, n);
	ret = job->dst->store->xfer_bvec(job->dst, true, dpos, bv, pages, n,
					 false);
	vaai_range_unlock(&job->dst->rlock, &r);
	if (!ret)
		vaai_copy_progress(job->xc, n);
	return ret;
}

/*
 * A slot to move a chunk in, or an ERR_PTR: the job failed or stopped.
 * Chunks are moved one per CPU online when the module loads, by all
 * copies together (vaai_copy_slots.c).  A bounced or spliced chunk on a
 * store in RAM or through the page cache is moved by the CPU, and a VMFS
 * heartbeat's COMPARE AND WRITE must find a CPU soon: it competes with
 * that many chunks, not with four workers for every copy in flight.  A
 * worker holds no range lock while it waits for a slot, and checks every
 * VAAI_COPY_SLOT_WAIT that its copy is still wanted, so a copy waiting
 * behind others still stops at once when aborted; no copy waits for one
 * on another LUN to end, only for its chunks up to a quantum.  NULL: the
 * other workers took every chunk meanwhile.
 */
static struct vaai_copy_slot *vaai_copy_slot_take(struct vaai_copy_job *job)
{
	struct vaai_copy_waiter w;
	struct vaai_copy_slot *slot;
	int ret;

	slot = vaai_copy_slot_get(&w, atomic64_read(&job->xc->age));
	if (slot)
		return slot;
	for (;;) {
		slot = vaai_copy_slot_wait(&w, VAAI_COPY_SLOT_WAIT);
		ret = atomic_read(&job->error) ?: vaai_copy_check(job);
		if (slot)
			break;
		if (ret || atomic64_read(&job->next) >= job->len) {
			vaai_copy_slot_cancel(&w);
			return ret ? ERR_PTR(ret) : NULL;
		}
	}
	/* what happened while it waited */
	if (ret) {
		vaai_copy_slot_put(slot);
		return ERR_PTR(ret);
	}
	return slot;
}

/* Move the n bytes at off into the segment, in the slot given. */
static int vaai_copy_chunk(struct vaai_copy_job *job,
			   struct vaai_copy_slot *slot, loff_t off, size_t n)
{
	struct bio_vec *bv;

	if (job->how == VAAI_COPY_SPLICE)
		return vaai_copy_file_range(job, job->src_pos + off,
					    job->dst_pos + off, n,
					    COPY_FILE_SPLICE);
	bv = vaai_copy_slot_buffer(slot);
	if (!bv)
		return -ENOMEM;
	return vaai_copy_bounce(job, job->src_pos + off, job->dst_pos + off, n,
				bv);
}

/*
 * A quantum of chunks moved: the copy waits behind those that came since
 * (vaai_copy_slots.c).  Counted over the command, whatever its segments.
 */
static void vaai_copy_aging(struct vaai_xcopy *xc)
{
	if (!(atomic_inc_return(&xc->chunks) % VAAI_COPY_QUANTUM))
		atomic64_set(&xc->age, vaai_copy_slot_age());
}

/*
 * Take chunks until there are none left, or the job failed or stopped.
 * A worker in the background (vaai_copy_background()) keeps its slot from
 * chunk to chunk while no older copy waits and nothing else wants the
 * CPU: a slot handed from worker to worker is a wakeup and a switch per
 * chunk.  One that is to yield its CPU passes the slot on first, so that
 * no copy waits for a worker that is not running; an ordinary one always
 * passes it on.
 */
static void vaai_copy_loop(struct vaai_copy_job *job, bool keep)
{
	struct vaai_copy_slot *slot = NULL;

	for (;;) {
		s64 taken;
		loff_t off;
		size_t n;
		int ret;

		if (atomic_read(&job->error))
			break;
		if (atomic64_read(&job->next) >= job->len)
			break;		/* all taken: no slot needed */
		ret = vaai_copy_check(job);
		if (!ret && !slot) {
			slot = vaai_copy_slot_take(job);
			if (IS_ERR(slot)) {
				ret = PTR_ERR(slot);
				slot = NULL;
			} else if (!slot) {
				break;	/* taken meanwhile */
			}
		}
		if (ret) {
			atomic_cmpxchg(&job->error, 0, ret);
			break;
		}
		taken = atomic64_fetch_add(VAAI_COPY_CHUNK, &job->next);
		if (taken >= job->len)
			break;
		n = min_t(loff_t, VAAI_COPY_CHUNK, job->len - taken);
		off = job->backward ? job->len - taken - n : taken;
		ret = vaai_copy_chunk(job, slot, off, n);
		if (ret) {
			atomic_cmpxchg(&job->error, 0, ret);
			break;
		}
		vaai_copy_aging(job->xc);
		if (!vaai_copy_slot_pass(slot, atomic64_read(&job->xc->age),
					 keep && !need_resched()))
			slot = NULL;
		cond_resched();
	}
	if (slot)
		vaai_copy_slot_put(slot);
}

/*
 * Chunks bounced between block devices are moved as background work
 * (SCHED_IDLE): the worker yields its CPU to ordinary tasks.  LIO starts
 * commands from a per-CPU submission worker (tcm_loop) or the
 * connection's threads (iSCSI), and completes them from per-CPU workers
 * and softirq threads, all ordinary tasks.  With copy workers ordinary
 * too, each that woke (for a slot, or a new work item) was placed ahead of
 * them: beside four 4 MiB EXTENDED COPYs on a RAM disk a heartbeat's
 * COMPARE AND WRITE waited for two to five chunks of different copies in
 * turn, up to 7 ms in LIO's submission queue (ftrace, docs/ats.md); at
 * nice 19 it still waited for several.  An ordinary task that wakes
 * preempts a background one (at its next point to reschedule; where the
 * kernel preempts lazily, from 6.13, at the next tick), and a CPU running
 * only background tasks counts as idle to a waking task that looks for
 * one.
 *
 * The cost: while ordinary tasks keep every CPU busy, these copies get a
 * small share of it.  What waits for them waits as long: a range lock a
 * chunk holds (the copy's own ranges), the chunk slot it holds while it
 * moves a chunk (between chunks it passes the slot on before it yields),
 * an abort (noticed between chunks).  A copy that touches a file stays
 * ordinary: the file system's inode lock, which every command to the LUN
 * takes, may be held across its I/O (a buffered write, a direct write
 * into a hole).  A persistent token's file is only read.
 *
 * Every copy work item sets its own priority and puts back the pool's
 * when it returns: the copy queue's pool runs at high priority
 * (vaai_main.c), what a copy does outside its background sections runs
 * as ordinary work.  What a worker may allocate in the background is a
 * slot's buffer, the first time the slot bounces.
 */
struct vaai_copy_prio {
	struct sched_attr was;
	bool changed;
	bool background;
};

static bool vaai_copy_in_background(const struct vaai_copy_job *job)
{
	return job->how == VAAI_COPY_BOUNCE &&
	       job->dst->store == &vaai_bdev_ops &&
	       (job->sfile || job->src->store == &vaai_bdev_ops);
}

/*
 * Run as @policy: SCHED_IDLE (at nice 19: with SCHED_IDLE the nice is not
 * kept, but the lower p->prio it sets makes the switch itself reschedule)
 * or SCHED_NORMAL at nice 0.  A worker someone made a deadline task is
 * left as it is.
 */
static void vaai_copy_prio_set(struct vaai_copy_prio *prio, int policy)
{
	struct sched_attr attr = {
		.size		= sizeof(attr),
		.sched_policy	= policy,
		.sched_nice	= policy == SCHED_IDLE ? MAX_NICE : 0,
	};

	prio->changed = current->policy != SCHED_DEADLINE &&
			(current->policy != policy ||
			 task_nice(current) != attr.sched_nice);
	if (!prio->changed)
		return;
	prio->was = (struct sched_attr) {
		.size		= sizeof(prio->was),
		.sched_policy	= current->policy,
		.sched_priority	= current->rt_priority,
		.sched_nice	= task_nice(current),
	};
	sched_setattr_nocheck(current, &attr);
}

static void vaai_copy_prio_restore(struct vaai_copy_prio *prio)
{
	if (prio->changed)
		sched_setattr_nocheck(current, &prio->was);
}

static void vaai_copy_background(struct vaai_copy_job *job,
				 struct vaai_copy_prio *prio)
{
	vaai_copy_prio_set(prio, vaai_copy_in_background(job) ?
			   SCHED_IDLE : SCHED_NORMAL);
	prio->background = current->policy == SCHED_IDLE;
	/* what woke while this worker was ordinary goes first now */
	if (prio->background)
		cond_resched();
}

static void vaai_copy_worker_fn(struct work_struct *work)
{
	struct vaai_copy_worker *w = container_of(work, struct vaai_copy_worker,
						  work);
	struct vaai_copy_prio prio;

	vaai_copy_background(w->job, &prio);
	vaai_copy_loop(w->job, prio.background);
	vaai_copy_prio_restore(&prio);
}

static int vaai_copy_chunked(struct vaai_copy_job *job)
{
	struct vaai_copy_worker w[VAAI_COPY_WORKERS - 1];
	unsigned int i, helpers = 0;
	struct vaai_copy_prio prio;

	vaai_copy_background(job, &prio);
	if (!job->serial)
		helpers = min_t(loff_t, VAAI_COPY_WORKERS - 1,
				DIV_ROUND_UP(job->len, VAAI_COPY_CHUNK) - 1);
	for (i = 0; i < helpers; i++) {
		INIT_WORK_ONSTACK(&w[i].work, vaai_copy_worker_fn);
		w[i].job = job;
		vaai_queue_copy(&w[i].work);
	}
	vaai_copy_loop(job, prio.background);
	/* a helper that has not started has nothing left to do */
	for (i = 0; i < helpers; i++) {
		cancel_work_sync(&w[i].work);
		destroy_work_on_stack(&w[i].work);
	}
	vaai_copy_prio_restore(&prio);
	return atomic_read(&job->error);
}

/*
 * Shared extents, in steps; *done is what got across.  Before anything
 * did, an error that means "not this way" lets the caller bounce instead.
 */
static int vaai_copy_clone(struct vaai_copy_job *job, loff_t *done)
{
	*done = 0;
	while (*done < job->len) {
		loff_t n = min(VAAI_COPY_CLONE_STEP, job->len - *done);
		int ret = vaai_copy_check(job);

		if (ret)
			return ret;
		ret = vaai_copy_file_range(job, job->src_pos + *done,
					   job->dst_pos + *done, n, 0);
		if (ret)
			return ret;
		*done += n;
	}
	return 0;
}

static void vaai_copy_job_init(struct vaai_copy_job *job, struct vaai_xcopy *xc,
			       const struct vaai_xseg *s)
{
	job->xc = xc;
	job->csrc = &xc->cscd[s->src];
	job->cdst = &xc->cscd[s->dst];
	job->src = job->csrc->vdev;
	job->dst = job->cdst->vdev;
	/* a token copy's source is CSCD 0 */
	job->sfile = s->src == 0 ? xc->tok_file : NULL;
	job->src_pos = s->src_pos;
	job->dst_pos = s->dst_pos;
	job->len = s->len;
}

/* Same LUN, source and destination: a token's file is not the LUN. */
static bool vaai_copy_same(const struct vaai_copy_job *job)
{
	return job->src == job->dst && !job->sfile;
}

/* A segment of no bytes, or onto itself: nothing to move. */
static bool vaai_copy_nothing(const struct vaai_copy_job *job)
{
	return !job->len ||
	       (vaai_copy_same(job) && job->src_pos == job->dst_pos);
}

static bool vaai_copy_overlap(struct vaai_copy_job *job)
{
	return vaai_copy_same(job) &&
	       job->src_pos < job->dst_pos + job->len &&
	       job->dst_pos < job->src_pos + job->len;
}

static enum vaai_copy_how vaai_copy_choose(struct vaai_copy_job *job)
{
	struct file *in = job->sfile ?: job->src->file, *out = job->dst->file;
	bool files = (job->sfile || job->src->store == &vaai_file_ops) &&
		     job->dst->store == &vaai_file_ops;

	if (!files || vaai_copy_overlap(job))
		return VAAI_COPY_BOUNCE;
	/*
	 * XFS made without reflink has the method but refuses, and then
	 * vfs_copy_file_range() copies through the page cache in one call:
	 * the probe of vaai_odx_snap.c knows whether sharing works.
	 */
	if (in->f_op->remap_file_range && job->dst->odx.share &&
	    file_inode(in)->i_sb == file_inode(out)->i_sb)
		return VAAI_COPY_CLONE;
	/* Direct I/O through our buffers beats two trips through the cache. */
	if ((!job->sfile && vaai_file_direct(job->src)) ||
	    vaai_file_direct(job->dst))
		return VAAI_COPY_BOUNCE;
	return VAAI_COPY_SPLICE;
}

static int vaai_copy_segment(struct vaai_xcopy *xc, const struct vaai_xseg *s)
{
	struct vaai_copy_job job = {};
	loff_t done;
	int ret;

	vaai_copy_job_init(&job, xc, s);
	if (vaai_copy_nothing(&job)) {
		/* there already: counted as transferred */
		vaai_copy_progress(xc, job.len);
		return 0;
	}
	job.how = vaai_copy_choose(&job);
	job.serial = vaai_copy_overlap(&job);
	job.backward = job.serial && job.dst_pos > job.src_pos;
	if (job.how == VAAI_COPY_CLONE) {
		ret = vaai_copy_clone(&job, &done);
		if (ret && !done && (ret == -EOPNOTSUPP || ret == -EXDEV ||
				     ret == -EINVAL)) {
			job.how = VAAI_COPY_BOUNCE;
			ret = vaai_copy_chunked(&job);
		}
	} else {
		ret = vaai_copy_chunked(&job);
	}
	if (!ret)
		ret = vaai_dev_sync_if_write_through(job.dst, job.dst_pos, job.len);
	if (!ret) {
		atomic64_add(job.len, &job.src->stats.clone_read_bytes);
		atomic64_add(job.len, &job.dst->stats.clone_write_bytes);
	}
	return ret;
}

static void vaai_copy_finish(struct vaai_xcopy *xc, int err)
{
	struct vaai_copy_status *st = xc->status;
	struct vaai_dev *vdev = xc->vdev;
	struct se_cmd *cmd = xc->cmd;
	bool underrun = !err && xc->underrun;
	enum vaai_asc code;
	u8 status, key;
	unsigned int i;
	u64 done = 0;

	for (i = 0; i < xc->list.nr_cscds; i++) {
		struct vaai_cscd *c = &xc->cscd[i];

		if (c->info.src)
			atomic64_inc(&c->vdev->stats.clone_read);
		if (c->info.dst) {
			atomic64_inc(&c->vdev->stats.clone_write);
			vaai_tp_check(c->vdev);
		}
	}
	vaai_cscd_release(xc);

	status = vaai_copy_errno_sense(err, &key, &code);
	if (underrun) {
		/* SBC-4 5.51: INFORMATION is the blocks written */
		status = SAM_STAT_CHECK_CONDITION;
		key = COPY_ABORTED;
		code = VAAI_ASC_COPY_TARGET_DATA_UNDERRUN;
		done = div_u64(atomic64_read(&st->bytes_done),
			       vdev->dev.dev_attrib.block_size);
	}
	if (err) {
		atomic64_inc(&vdev->stats.clone_failed);
		if (err != -EINTR)
			pr_err_ratelimited("%s: copy failed in segment %u: %d\n",
					   vdev->dev.dev_group.cg_item.ci_name,
					   st->segs_done, err);
	}
	atomic_dec(&vdev->copies.nr_running);
	if (xc->tok)
		vaai_odx_token_put(xc->tok);
	kvfree(xc);
	vaai_copy_status_answer(cmd, st, status, key, code,
				underrun ? &done : NULL);
}

static void vaai_copy_work(struct work_struct *work)
{
	struct vaai_xcopy *xc = container_of(work, struct vaai_xcopy, work);
	struct vaai_copy_prio prio;
	unsigned int i;
	int ret = 0;

	vaai_copy_prio_set(&prio, SCHED_NORMAL);
	for (i = 0; i < xc->list.nr_segs && !ret; i++) {
		ret = vaai_copy_segment(xc, &xc->list.seg[i]);
		if (!ret)
			WRITE_ONCE(xc->status->segs_done, i + 1);
	}
	/* a change that cancelled the token after its last chunk was read */
	if (!ret)
		ret = vaai_copy_token_check(xc);
	vaai_copy_finish(xc, ret);
	vaai_copy_prio_restore(&prio);
}

/* Does every segment share extents, or have nothing to move? */
static bool vaai_copy_only_clones(struct vaai_xcopy *xc)
{
	unsigned int i;

	for (i = 0; i < xc->list.nr_segs; i++) {
		struct vaai_copy_job job = {};

		vaai_copy_job_init(&job, xc, &xc->list.seg[i]);
		if (!vaai_copy_nothing(&job) &&
		    vaai_copy_choose(&job) != VAAI_COPY_CLONE)
			return false;
	}
	return true;
}

void vaai_copy_start(struct vaai_xcopy *xc)
{
	atomic64_set(&xc->age, vaai_copy_slot_age());
	INIT_WORK(&xc->work, vaai_copy_work);
	if (vaai_copy_only_clones(xc))
		vaai_queue_clone(&xc->work);
	else
		vaai_queue_copy(&xc->work);
}
