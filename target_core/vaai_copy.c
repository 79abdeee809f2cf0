// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the copy engine behind EXTENDED COPY.
 *
 * Segments run in order, off the fabric's thread.  Within a segment:
 *   - file to file: vfs_copy_file_range(), which shares extents on XFS and
 *     btrfs and copies inside the kernel elsewhere on one file system;
 *   - otherwise, or where that is refused: chunks of VAAI_COPY_CHUNK bytes,
 *     read and written by up to VAAI_COPY_WORKERS workers at once, each
 *     with its own buffer, none waiting for another's chunk.
 * A segment whose source and destination overlap on one LUN is copied by
 * one worker, walking away from the overlap, so the result is as if all of
 * the source had been read before any of it was overwritten.
 *
 * Each chunk is read under a shared range lock on the source and written
 * under one on the destination, never both at once: COMPARE AND WRITE
 * stays atomic against the copy, and no lock order across LUNs is needed.
 * Aborts (TMR ABORT TASK, LUN RESET, session teardown) are noticed between
 * chunks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"

#define VAAI_COPY_CHUNK		(1U << 20)
#define VAAI_COPY_WORKERS	4
/* One vfs_copy_file_range() call at most, so an abort is noticed. */
#define VAAI_COPY_CLONE_STEP	(64LL << 20)

/* COPY ABORTED additional sense (SPC-4 annex D). */
#define ASC_COPY_TARGET		0x0d
#define ASCQ_DEVICE_FAILURE	0x01

struct vaai_copy_job {
	struct vaai_xcopy *xc;
	struct vaai_dev *src, *dst;
	loff_t src_pos, dst_pos, len;
	bool backward;			/* last chunk first */
	atomic64_t next;		/* bytes handed out to workers */
	atomic_t error;			/* first error */
};

struct vaai_copy_worker {
	struct work_struct work;
	struct vaai_copy_job *job;
};

static bool vaai_copy_stopped(struct se_cmd *cmd)
{
	return READ_ONCE(cmd->transport_state) &
	       (CMD_T_ABORTED | CMD_T_STOP | CMD_T_FABRIC_STOP);
}

static void vaai_copy_progress(struct vaai_xcopy *xc, loff_t n)
{
	atomic64_add(n, &xc->status->bytes_done);
}

static int vaai_copy_chunk(struct vaai_copy_job *job, loff_t off, size_t n,
			   struct bio_vec *bv)
{
	unsigned int pages = DIV_ROUND_UP(n, PAGE_SIZE);
	loff_t spos = job->src_pos + off, dpos = job->dst_pos + off;
	struct vaai_range r;
	int ret;

	vaai_range_lock(&job->src->rlock, &r, spos, spos + n, false);
	ret = job->src->store->xfer_bvec(job->src, false, spos, bv, pages, n,
					 false);
	vaai_range_unlock(&job->src->rlock, &r);
	if (ret)
		return ret;

	vaai_range_lock(&job->dst->rlock, &r, dpos, dpos + n, false);
	ret = job->dst->store->xfer_bvec(job->dst, true, dpos, bv, pages, n,
					 false);
	vaai_range_unlock(&job->dst->rlock, &r);
	return ret;
}

/* Take chunks until there are none left, or the job failed or stopped. */
static void vaai_copy_loop(struct vaai_copy_job *job, struct bio_vec *bv)
{
	for (;;) {
		s64 taken;
		size_t n;
		int ret;

		if (atomic_read(&job->error))
			return;
		if (vaai_copy_stopped(job->xc->cmd)) {
			atomic_cmpxchg(&job->error, 0, -EINTR);
			return;
		}
		taken = atomic64_fetch_add(VAAI_COPY_CHUNK, &job->next);
		if (taken >= job->len)
			return;
		n = min_t(loff_t, VAAI_COPY_CHUNK, job->len - taken);
		ret = vaai_copy_chunk(job, job->backward ? job->len - taken - n :
					   taken, n, bv);
		if (ret) {
			atomic_cmpxchg(&job->error, 0, ret);
			return;
		}
		vaai_copy_progress(job->xc, n);
	}
}

/* A helper worker: without a buffer it leaves its share to the others. */
static void vaai_copy_worker_fn(struct work_struct *work)
{
	struct vaai_copy_worker *w = container_of(work, struct vaai_copy_worker,
						  work);
	unsigned int nr;
	struct bio_vec *bv = vaai_pages_alloc(VAAI_COPY_CHUNK, &nr);

	if (!bv)
		return;
	vaai_copy_loop(w->job, bv);
	vaai_pages_free(bv, nr);
}

static bool vaai_copy_overlap(struct vaai_copy_job *job)
{
	return job->src == job->dst &&
	       job->src_pos < job->dst_pos + job->len &&
	       job->dst_pos < job->src_pos + job->len;
}

static int vaai_copy_chunked(struct vaai_copy_job *job)
{
	struct vaai_copy_worker w[VAAI_COPY_WORKERS - 1];
	unsigned int i, nr, helpers = 0;
	struct bio_vec *bv;

	bv = vaai_pages_alloc(VAAI_COPY_CHUNK, &nr);
	if (!bv)
		return -ENOMEM;
	if (!vaai_copy_overlap(job))
		helpers = min_t(loff_t, VAAI_COPY_WORKERS - 1,
				DIV_ROUND_UP(job->len, VAAI_COPY_CHUNK) - 1);
	for (i = 0; i < helpers; i++) {
		INIT_WORK_ONSTACK(&w[i].work, vaai_copy_worker_fn);
		w[i].job = job;
		vaai_queue_work(&w[i].work);
	}
	vaai_copy_loop(job, bv);
	/* a helper that has not started has nothing left to do */
	for (i = 0; i < helpers; i++) {
		cancel_work_sync(&w[i].work);
		destroy_work_on_stack(&w[i].work);
	}
	vaai_pages_free(bv, nr);
	return atomic_read(&job->error);
}

/*
 * File to file through the file systems; *done is what got copied.  Errors
 * that mean "not this way" before anything was copied let the caller fall
 * back to chunks.
 */
static int vaai_copy_clone(struct vaai_copy_job *job, loff_t *done)
{
	struct vaai_dev *src = job->src, *dst = job->dst;

	*done = 0;
	while (*done < job->len) {
		loff_t n = min(VAAI_COPY_CLONE_STEP, job->len - *done);
		loff_t dpos = job->dst_pos + *done;
		struct vaai_range r;
		ssize_t ret;

		if (vaai_copy_stopped(job->xc->cmd))
			return -EINTR;
		vaai_range_lock(&dst->rlock, &r, dpos, dpos + n, false);
		ret = vfs_copy_file_range(src->file, job->src_pos + *done,
					  dst->file, dpos, n, 0);
		vaai_range_unlock(&dst->rlock, &r);
		if (ret < 0)
			return ret;
		if (ret == 0)		/* the LUN lies inside the file */
			return -EIO;
		*done += ret;
		vaai_copy_progress(job->xc, ret);
	}
	return 0;
}

static int vaai_copy_segment(struct vaai_xcopy *xc, const struct vaai_xseg *s)
{
	struct vaai_copy_job job = {
		.xc = xc,
		.src = xc->cscd[s->src].vdev,
		.dst = xc->cscd[s->dst].vdev,
		.src_pos = s->src_pos,
		.dst_pos = s->dst_pos,
		.len = s->len,
	};
	loff_t done = 0;
	int ret = -EOPNOTSUPP;

	if (!job.len || (job.src == job.dst && job.src_pos == job.dst_pos))
		return 0;
	if (job.src->store == &vaai_file_ops && job.dst->store == &vaai_file_ops &&
	    !vaai_copy_overlap(&job))
		ret = vaai_copy_clone(&job, &done);
	if (ret && !done && (ret == -EOPNOTSUPP || ret == -EXDEV ||
			     ret == -EINVAL)) {
		job.backward = vaai_copy_overlap(&job) && job.dst_pos > job.src_pos;
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
	struct vaai_dev *vdev = xc->vdev;
	struct se_cmd *cmd = xc->cmd;
	u8 key = COPY_ABORTED, asc = ASC_COPY_TARGET, ascq = ASCQ_DEVICE_FAILURE;
	unsigned int i;

	for (i = 0; i < xc->nr_cscds; i++) {
		struct vaai_cscd *c = &xc->cscd[i];

		if (c->src)
			atomic64_inc(&c->vdev->stats.clone_read);
		if (c->dst) {
			atomic64_inc(&c->vdev->stats.clone_write);
			vaai_tp_check(c->vdev);
		}
	}
	vaai_cscd_release(xc);

	switch (err) {
	case 0:
		key = 0;
		break;
	case -ENOSPC:
	case -EDQUOT:
		key = DATA_PROTECT;
		asc = 0x27;
		ascq = 0x07;		/* SPACE ALLOCATION FAILED WRITE PROTECT */
		break;
	case -EINTR:
		key = ABORTED_COMMAND;
		asc = 0;
		ascq = 0;
		break;
	}
	if (err) {
		atomic64_inc(&vdev->stats.clone_failed);
		pr_err_ratelimited("%s: EXTENDED COPY failed in segment %u: %d\n",
				   vdev->dev.dev_group.cg_item.ci_name,
				   xc->status->segs_done, err);
	}
	vaai_copy_status_end(vdev, xc->status, key, asc, ascq);
	xc->status = NULL;
	atomic_dec(&vdev->copies.nr_running);
	kvfree(xc);

	if (key)
		vaai_cmd_complete_check(cmd, key, asc, ascq, -1, -1);
	else
		target_complete_cmd(cmd, SAM_STAT_GOOD);
}

static void vaai_copy_work(struct work_struct *work)
{
	struct vaai_xcopy *xc = container_of(work, struct vaai_xcopy, work);
	unsigned int i;
	int ret = 0;

	for (i = 0; i < xc->nr_segs && !ret; i++) {
		ret = vaai_copy_segment(xc, &xc->seg[i]);
		if (!ret)
			WRITE_ONCE(xc->status->segs_done, i + 1);
	}
	vaai_copy_finish(xc, ret);
}

void vaai_copy_start(struct vaai_xcopy *xc)
{
	INIT_WORK(&xc->work, vaai_copy_work);
	vaai_queue_work(&xc->work);
}
