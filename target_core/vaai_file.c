// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the regular-file store.
 *
 * Reads and writes go through the page cache from the module's workqueue;
 * a write that must be durable is issued with RWF_DSYNC, so it is on stable
 * storage (data and the metadata needed to find it) when it completes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uio.h>
#include <linux/bvec.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <linux/blkdev.h>

#include "vaai.h"

static int vaai_file_open(struct vaai_dev *vdev)
{
	struct inode *inode = file_inode(vdev->file);
	struct super_block *sb = inode->i_sb;

	vdev->nr_bytes = i_size_read(inode);
	vdev->min_block = VAAI_MIN_BLOCK_SIZE;
	/* A file on memory or on an SSD does not seek. */
	vdev->dev.dev_attrib.is_nonrot = !sb->s_bdev || bdev_nonrot(sb->s_bdev);
	return 0;
}

static void vaai_file_rw_work(struct vaai_io *io)
{
	struct file *file = io->vdev->file;
	struct scatterlist *sg;
	struct iov_iter iter;
	struct bio_vec *bv;
	loff_t pos = io->pos;
	ssize_t ret;
	int i;

	bv = kmalloc_array(io->sgl_nents, sizeof(*bv), GFP_NOIO);
	if (!bv) {
		vaai_io_done(io, -ENOMEM);
		return;
	}
	for_each_sg(io->sgl, sg, io->sgl_nents, i) {
		bv[i].bv_page = sg_page(sg);
		bv[i].bv_len = sg->length;
		bv[i].bv_offset = sg->offset;
	}

	iov_iter_bvec(&iter, io->write ? ITER_SOURCE : ITER_DEST, bv,
		      io->sgl_nents, io->len);
	/*
	 * A short transfer is retried for the rest, so that a write which
	 * filled the file system reports -ENOSPC rather than a short count.
	 */
	do {
		if (io->write)
			ret = vfs_iter_write(file, &iter, &pos,
					     io->fua ? RWF_DSYNC : 0);
		else
			ret = vfs_iter_read(file, &iter, &pos, 0);
		/* The LUN's blocks all lie inside the file: EOF means broken. */
		if (ret == 0)
			ret = -EIO;
	} while (ret > 0 && iov_iter_count(&iter));
	kfree(bv);
	vaai_io_done(io, ret < 0 ? ret : 0);
}

static void vaai_file_submit_rw(struct vaai_io *io)
{
	vaai_io_queue(io, vaai_file_rw_work);
}

static int vaai_file_flush(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	loff_t end = len ? pos + len - 1 : LLONG_MAX;

	return vfs_fsync_range(vdev->file, pos, end, 1);
}

const struct vaai_store_ops vaai_file_ops = {
	.name		= "file",
	.open		= vaai_file_open,
	.submit_rw	= vaai_file_submit_rw,
	.flush		= vaai_file_flush,
};
