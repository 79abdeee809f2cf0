// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the regular-file store.
 *
 * READ and WRITE are vaai_file_rw.c; here are the rest of the store's
 * operations.  A write that must be durable is issued with RWF_DSYNC, so it
 * is on stable storage (data and the metadata needed to find it) when it
 * completes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/bvec.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <linux/blkdev.h>
#include <linux/falloc.h>

#include "vaai.h"

/*
 * Whether the file system can punch holes.  Having a fallocate() is not
 * enough: vfat's, ntfs3's (on a file that is not sparse), NFS's before 4.2
 * and some FUSE file systems' refuse PUNCH_HOLE, and a thin LUN on them
 * would answer every UNMAP with a medium error.  The probe punches the
 * block past the end of the file, keeping the size: nothing the LUN holds
 * changes.  A read-only LUN cannot ask (and never unmaps).
 */
static bool vaai_file_can_punch(struct file *file, u32 unit)
{
	loff_t end = round_up(i_size_read(file_inode(file)), unit);

	if (!file->f_op->fallocate)
		return false;
	if (!(file->f_mode & FMODE_WRITE))
		return true;
	return !vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      end, unit);
}

static int vaai_file_open(struct vaai_dev *vdev)
{
	struct inode *inode = file_inode(vdev->file);
	struct super_block *sb = inode->i_sb;

	vdev->min_block = VAAI_MIN_BLOCK_SIZE;
	/* Punched holes read back as zeros: deallocation is LBPRZ = 1. */
	if (vaai_file_can_punch(vdev->file, sb->s_blocksize)) {
		vdev->unmap_unit = sb->s_blocksize;
		vdev->lbprz = true;
	}
	/* A file on memory or on an SSD does not seek. */
	vdev->dev.dev_attrib.is_nonrot = !sb->s_bdev || vaai_bdev_nonrot(sb->s_bdev);
	vaai_file_drop_cache(vdev);
	return 0;
}

static loff_t vaai_file_size(struct vaai_dev *vdev)
{
	return i_size_read(file_inode(vdev->file));
}

/*
 * Move len bytes between bv and the file at pos.  A short transfer is
 * retried for the rest, so that a write which filled the file system reports
 * -ENOSPC rather than a short count.
 */
int vaai_file_xfer(struct file *file, bool write, struct bio_vec *bv,
		   unsigned int nr, size_t len, loff_t pos, rwf_t flags)
{
	struct iov_iter iter;
	ssize_t ret;

	iov_iter_bvec(&iter, write ? ITER_SOURCE : ITER_DEST, bv, nr, len);
	if (write)
		file_start_write(file);
	do {
		if (write)
			ret = vfs_iter_write(file, &iter, &pos, flags);
		else
			ret = vfs_iter_read(file, &iter, &pos, flags);
		/* The LUN's blocks all lie inside the file: EOF means broken. */
		if (ret == 0)
			ret = -EIO;
	} while (ret > 0 && iov_iter_count(&iter));
	if (write)
		file_end_write(file);
	return ret < 0 ? ret : 0;
}

static int vaai_file_flush(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	loff_t end = len ? pos + len - 1 : LLONG_MAX;

	return vfs_fsync_range(vdev->file, pos, end, 1);
}

/* Direct where READ and WRITE are (attrib/io_mode), else buffered. */
static int vaai_file_xfer_bvec(struct vaai_dev *vdev, bool write, loff_t pos,
			       struct bio_vec *bv, unsigned int nr, size_t len,
			       bool fua)
{
	if (vaai_file_direct(vdev)) {
		int ret = vaai_file_xfer_direct(vdev, write, bv, nr, len, pos, fua);

		if (ret != -ENOTBLK)
			return ret;
	}
	return vaai_file_xfer(vdev->file, write, bv, nr, len, pos,
			      fua ? RWF_DSYNC : 0);
}

static int vaai_file_unmap(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	return vfs_fallocate(vdev->file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     pos, len);
}

/*
 * Zeroed and still allocated: unwritten extents where the file system has
 * them, else a hole allocated again (tmpfs).
 */
static int vaai_file_zero(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	int ret;

	ret = vfs_fallocate(vdev->file, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			    pos, len);
	if (ret != -EOPNOTSUPP)
		return ret;
	ret = vaai_file_unmap(vdev, pos, len);
	if (ret)
		return ret;
	return vfs_fallocate(vdev->file, FALLOC_FL_KEEP_SIZE, pos, len);
}

static loff_t vaai_file_map_status(struct vaai_dev *vdev, loff_t pos,
				   loff_t len, bool *mapped)
{
	loff_t data, hole;

	data = vfs_llseek(vdev->file, pos, SEEK_DATA);
	if (data == -ENXIO || (data >= 0 && data > pos)) {
		*mapped = false;
		return data < 0 ? len : min(data - pos, len);
	}
	if (data < 0)
		return data;
	hole = vfs_llseek(vdev->file, pos, SEEK_HOLE);
	if (hole < 0)
		return hole;
	*mapped = true;
	return min(hole - pos, len);
}

/*
 * A read into nowhere: the pages stay cached.  Not fadvise(WILLNEED), which
 * reads no more than the readahead window.
 */
static int vaai_file_prefetch(struct vaai_dev *vdev, loff_t pos, size_t len)
{
	struct iov_iter iter;
	ssize_t ret;

	if (vaai_file_direct(vdev))
		return -EOPNOTSUPP;
	iov_iter_discard(&iter, ITER_DEST, len);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_read(vdev->file, &iter, &pos, 0);
		if (ret <= 0)
			return ret ? ret : -EIO;
	}
	return 0;
}

const struct vaai_store_ops vaai_file_ops = {
	.name		= "file",
	.open		= vaai_file_open,
	.size		= vaai_file_size,
	.submit_rw	= vaai_file_submit_rw,
	.flush		= vaai_file_flush,
	.xfer_bvec	= vaai_file_xfer_bvec,
	.zero		= vaai_file_zero,
	.unmap		= vaai_file_unmap,
	.map_status	= vaai_file_map_status,
	.prefetch	= vaai_file_prefetch,
};
