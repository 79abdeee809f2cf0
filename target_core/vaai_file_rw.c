// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: READ and WRITE on the file store.
 *
 * Two ways to the file, chosen per command (attrib/io_mode):
 *
 *  - direct: an asynchronous kiocb with IOCB_DIRECT moves the data between
 *    the command's pages and the file system's blocks, with no page cache
 *    copy.  It is first submitted with IOCB_NOWAIT from the fabric's
 *    context (a transfer over 128 KiB from vaai_start, vaai_rw.c: "the
 *    fabric's context" below is that worker for them); a file system that
 *    would block (block allocation, a contended inode lock) answers -EAGAIN
 *    and the submission moves to the workqueue, where it may block but
 *    still completes asynchronously.  One thing is done in the fabric's
 *    context although it may wait: the mtime update of the first write in
 *    each clock tick (vaai_file_touch()).  A write that
 *    must be durable carries IOCB_DSYNC: the file system completes it once
 *    the data and the metadata to find it are stable (FUA where it can, a
 *    sync where it must).
 *
 *  - buffered: through the page cache.  A read the cache holds in full,
 *    and a write the cache takes without blocking, finish in the fabric's
 *    context; anything else runs blocking from the workqueue.
 *
 * What the direct path cannot do (buffers or offsets the backing device
 * cannot address directly, a short transfer, a file system that falls back)
 * is done again, buffered, from the workqueue.  The range lock is dropped in
 * between: only a request whose work is running may wait in the lock queue
 * (see vaai_store_ops.submit_rw).  attrib/stats_rw_deferred counts the
 * requests that went to the workqueue.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/uio.h>
#include <linux/bvec.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>

#include "vaai.h"

static const char *const vaai_io_mode_names[] = {
	[VAAI_IO_AUTO]		= "auto",
	[VAAI_IO_DIRECT]	= "direct",
	[VAAI_IO_BUFFERED]	= "buffered",
};

/*
 * auto: direct while the write cache is off (every write is durable
 * anyway, and the page cache would only hold a second copy), buffered
 * while it is on.  A file system that cannot do direct I/O (tmpfs) is
 * always buffered.
 */
bool vaai_file_direct(struct vaai_dev *vdev)
{
	if (!(vdev->file->f_mode & FMODE_CAN_ODIRECT))
		return false;
	switch (READ_ONCE(vdev->io_mode)) {
	case VAAI_IO_DIRECT:
		return true;
	case VAAI_IO_BUFFERED:
		return false;
	default:
		return !vdev->dev.dev_attrib.emulate_write_cache;
	}
}

/*
 * Drop what the page cache holds of the file when the direct path is to
 * serve it.  A direct write that finds a cached page in its range cannot be
 * issued without blocking (the page must be written back and invalidated
 * first), so a file copied or written in full just before the LUN was set
 * up would send nearly every first write to the workqueue.  Dirty pages are
 * written back first; pages mapped by someone else stay.
 */
void vaai_file_drop_cache(struct vaai_dev *vdev)
{
	struct address_space *mapping = vdev->file->f_mapping;

	int ret;

	if (!vaai_file_direct(vdev) || !mapping->nrpages)
		return;
	ret = filemap_write_and_wait(mapping);
	if (ret)
		pr_warn("%s: writing back the backing file's page cache failed: %d\n",
			vdev->dev.dev_group.cg_item.ci_name, ret);
	invalidate_mapping_pages(mapping, 0, -1);
}

/*
 * Move len bytes between bv and the file at pos with direct I/O, and wait:
 * the backend's own transfers (EXTENDED COPY's chunks, COMPARE AND WRITE,
 * WRITE SAME patterns) on a LUN the direct path serves.  -ENOTBLK when
 * direct I/O cannot do it (misaligned, a short transfer, a file system
 * that falls back): the caller does it buffered.
 */
int vaai_file_xfer_direct(struct vaai_dev *vdev, bool write, struct bio_vec *bv,
			  unsigned int nr, size_t len, loff_t pos, bool dsync)
{
	struct file *file = vdev->file;
	struct iov_iter iter;
	struct kiocb kiocb;
	ssize_t ret;

	init_sync_kiocb(&kiocb, file);
	kiocb.ki_pos = pos;
	kiocb.ki_flags |= IOCB_DIRECT;
	iov_iter_bvec(&iter, write ? ITER_SOURCE : ITER_DEST, bv, nr, len);
	if (write) {
		if (dsync)
			kiocb.ki_flags |= IOCB_DSYNC;
		file_start_write(file);
		ret = file->f_op->write_iter(&kiocb, &iter);
		file_end_write(file);
	} else {
		ret = file->f_op->read_iter(&kiocb, &iter);
	}
	if (ret == len)
		return 0;
	if (ret >= 0 || ret == -EINVAL || ret == -ENOTBLK)
		return -ENOTBLK;
	return ret;
}

/* The command's pages as bio_vecs: in the request when few, else allocated. */
static int vaai_file_bvecs(struct vaai_io *io)
{
	struct scatterlist *sg;
	struct bio_vec *bv;
	int i;

	if (io->sgl_nents <= ARRAY_SIZE(io->inline_bvec)) {
		bv = io->inline_bvec;
	} else {
		bv = kmalloc_array(io->sgl_nents, sizeof(*bv), GFP_NOIO);
		if (!bv)
			return -ENOMEM;
	}
	for_each_sg(io->sgl, sg, io->sgl_nents, i) {
		bv[i].bv_page = sg_page(sg);
		bv[i].bv_len = sg->length;
		bv[i].bv_offset = sg->offset;
	}
	io->bvec = bv;
	return 0;
}

static void vaai_file_rw_done(struct vaai_io *io, int err)
{
	if (io->bvec != io->inline_bvec)
		kfree(io->bvec);
	io->bvec = NULL;
	vaai_io_done(io, err);
}

/* A READ/WRITE that cannot go on here: to the workqueue, counted. */
static void vaai_file_defer(struct vaai_io *io, void (*fn)(struct vaai_io *io))
{
	atomic64_inc(&io->vdev->stats.rw_deferred);
	vaai_io_queue(io, fn);
}

/* Buffered and blocking, from the workqueue: the path that always works. */
static void vaai_file_buffered_work(struct vaai_io *io)
{
	int ret;

	vaai_io_lock(io, io->pos, io->len, false);
	ret = vaai_file_xfer(io->vdev->file, io->write, io->bvec,
			     io->sgl_nents, io->len, io->pos,
			     io->fua ? RWF_DSYNC : 0);
	vaai_file_rw_done(io, ret);
}

static void vaai_file_redo_buffered(struct vaai_io *io)
{
	vaai_io_unlock(io);
	vaai_file_defer(io, vaai_file_buffered_work);
}

static void vaai_file_direct_work(struct vaai_io *io);

/*
 * The first write of each clock tick must update the file's mtime, which a
 * NOWAIT write refuses to do (-EAGAIN): do it here, with freeze protection
 * held, before the write is issued, rather than send that write to the
 * workqueue.  It is a short transaction where the file system has them and
 * may wait for log space, as upstream LIO's writes do every time.  Should it
 * fail, the write does it itself, or fails.  The write reads the clock
 * again: if the tick moved on during the update, it refuses too, and is
 * deferred like any other refusal (rare on a 250 Hz kernel; most writes on
 * a slow debug kernel at 1000 Hz, where the update can outlast a tick).
 */
static void vaai_file_touch(struct file *file)
{
	file_update_time(file);
}

/*
 * The end of a direct request: from the file system's completion (any
 * context, interrupts included) or from its submitter when the file system
 * finished at once.
 */
static void vaai_file_direct_done(struct kiocb *iocb, long ret)
{
	struct vaai_io *io = container_of(iocb, struct vaai_io, iocb);

	if (iocb->ki_flags & IOCB_WRITE)
		kiocb_end_write(iocb);
	if (ret == io->len) {
		vaai_file_rw_done(io, 0);
	} else if (ret == -EAGAIN && (iocb->ki_flags & IOCB_NOWAIT)) {
		vaai_io_unlock(io);
		vaai_file_defer(io, vaai_file_direct_work);
	} else if (ret >= 0 || ret == -EINVAL || ret == -ENOTBLK) {
		/* short, misaligned, or the file system prefers buffered */
		vaai_file_redo_buffered(io);
	} else {
		vaai_file_rw_done(io, ret);
	}
}

/* Submit io as a direct request; flags may add IOCB_NOWAIT. */
static void vaai_file_direct_submit(struct vaai_io *io, int flags)
{
	struct file *file = io->vdev->file;
	struct kiocb *iocb = &io->iocb;
	struct iov_iter iter;
	ssize_t ret;

	init_sync_kiocb(iocb, file);
	iocb->ki_pos = io->pos;
	iocb->ki_complete = vaai_file_direct_done;
	iocb->ki_flags |= IOCB_DIRECT | flags;
	iov_iter_bvec(&iter, io->write ? ITER_SOURCE : ITER_DEST, io->bvec,
		      io->sgl_nents, io->len);
	if (!io->write) {
		ret = file->f_op->read_iter(iocb, &iter);
	} else {
		if (io->fua)
			iocb->ki_flags |= IOCB_DSYNC;
		/* Freeze protection, handed over to the completion. */
		if (flags & IOCB_NOWAIT) {
			if (!sb_start_write_trylock(file_inode(file)->i_sb)) {
				vaai_file_direct_done(iocb, -EAGAIN);
				return;
			}
			vaai_file_touch(file);
			__sb_writers_release(file_inode(file)->i_sb,
					     SB_FREEZE_WRITE);
		} else {
			kiocb_start_write(iocb);
		}
		iocb->ki_flags |= IOCB_WRITE;
		ret = file->f_op->write_iter(iocb, &iter);
	}
	if (ret != -EIOCBQUEUED)
		vaai_file_direct_done(iocb, ret);
}

static void vaai_file_direct_work(struct vaai_io *io)
{
	vaai_io_lock(io, io->pos, io->len, false);
	vaai_file_direct_submit(io, 0);
}

/*
 * A buffered transfer done here if the page cache can do all of it without
 * blocking: a read it holds, a write it takes (a file system that supports
 * non-blocking buffered writes, and no durability to wait for).
 */
static bool vaai_file_buffered_nowait(struct vaai_io *io)
{
	struct file *file = io->vdev->file;
	struct super_block *sb = file_inode(file)->i_sb;
	struct iov_iter iter;
	loff_t pos = io->pos;
	ssize_t ret;

	if (!(file->f_mode & FMODE_NOWAIT))
		return false;
	if (io->write && (io->fua || !vaai_file_buffered_wasync(file)))
		return false;

	vaai_io_lock(io, io->pos, io->len, false);
	iov_iter_bvec(&iter, io->write ? ITER_SOURCE : ITER_DEST, io->bvec,
		      io->sgl_nents, io->len);
	if (!io->write) {
		ret = vfs_iter_read(file, &iter, &pos, RWF_NOWAIT);
	} else if (sb_start_write_trylock(sb)) {
		vaai_file_touch(file);
		ret = vfs_iter_write(file, &iter, &pos, RWF_NOWAIT);
		sb_end_write(sb);
	} else {
		ret = -EAGAIN;
	}
	if (ret != io->len) {
		/* Nothing lost: the workqueue does all of it again. */
		vaai_io_unlock(io);
		return false;
	}
	vaai_file_rw_done(io, 0);
	return true;
}

void vaai_file_submit_rw(struct vaai_io *io)
{
	int ret = vaai_file_bvecs(io);

	if (ret) {
		vaai_io_done(io, ret);
		return;
	}
	if (vaai_file_direct(io->vdev)) {
		if (!(io->vdev->file->f_mode & FMODE_NOWAIT)) {
			vaai_file_defer(io, vaai_file_direct_work);
			return;
		}
		vaai_io_lock(io, io->pos, io->len, false);
		vaai_file_direct_submit(io, IOCB_NOWAIT);
		return;
	}
	if (!vaai_file_buffered_nowait(io))
		vaai_file_defer(io, vaai_file_buffered_work);
}

static ssize_t vaai_io_mode_show(struct config_item *item, char *page)
{
	return sprintf(page, "%s\n",
		       vaai_io_mode_names[READ_ONCE(vaai_attrib_dev(item)->io_mode)]);
}

static ssize_t vaai_io_mode_store(struct config_item *item, const char *page,
				  size_t count)
{
	struct vaai_dev *vdev = vaai_attrib_dev(item);
	int mode = sysfs_match_string(vaai_io_mode_names, page);

	if (mode < 0)
		return mode;
	WRITE_ONCE(vdev->io_mode, mode);
	if (target_dev_configured(&vdev->dev) && vdev->store == &vaai_file_ops)
		vaai_file_drop_cache(vdev);
	return count;
}

struct configfs_attribute vaai_attr_io_mode = {
	.ca_name	= "io_mode",
	.ca_mode	= 0644,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_io_mode_show,
	.store		= vaai_io_mode_store,
};
