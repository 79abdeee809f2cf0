// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: persistent point-in-time tokens' files.
 *
 * On a file store whose file system can share extents (XFS with reflink,
 * btrfs), POPULATE TOKEN shares the token's ranges into a file of the
 * token's own: an unnamed file (O_TMPFILE) in the LUN file's directory, which
 * nothing can open, write or list.  WRITE USING TOKEN copies from it, so the
 * destination gets what the ranges held at POPULATE TOKEN.  No data moves:
 * the file system copies blocks only when the LUN's are written afterwards,
 * and that space is what a token holds.  The file goes with the token's
 * last reference (vaai_odx_token.c); a crash leaves it on the file system's
 * list of unlinked inodes, which the next mount frees.
 *
 * Extents are shared in whole file-system blocks: each range goes into the
 * file at an offset aligned to the larger of a file-system block and a LUN
 * block, from the file-system block that holds its first byte.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/statfs.h>

#include "vaai_xcopy.h"

static struct file *vaai_odx_snap_open(struct vaai_dev *vdev)
{
	struct path dir = { .mnt = vdev->file->f_path.mnt };
	struct file *f;

	dir.dentry = dget_parent(vdev->file->f_path.dentry);
	f = vaai_tmpfile_open(&dir, O_RDWR | O_LARGEFILE);
	dput(dir.dentry);
	return f;
}

/*
 * Can the store share extents into a token file?  Tried once when the device
 * is configured, between two token files of one block: XFS made without
 * reflink has the method but refuses.  Not on the LUN's file: XFS would mark
 * it shared for good, and send each of its direct writes the slow way.
 */
void vaai_odx_snap_probe(struct vaai_dev *vdev)
{
	struct file *a, *b;
	loff_t pos = 0;
	void *block;
	u32 n;

	vdev->odx.share = false;
	if (vdev->store != &vaai_file_ops ||
	    !vdev->file->f_op->remap_file_range)
		return;
	n = i_blocksize(file_inode(vdev->file));
	block = kzalloc(n, GFP_KERNEL);
	if (!block)
		return;
	a = vaai_odx_snap_open(vdev);
	b = vaai_odx_snap_open(vdev);
	if (!IS_ERR(a) && !IS_ERR(b) && kernel_write(a, block, n, &pos) == n)
		vdev->odx.share = vfs_clone_file_range(a, 0, b, 0, n, 0) == n;
	if (!IS_ERR(b))
		fput(b);
	if (!IS_ERR(a))
		fput(a);
	kfree(block);
}

/*
 * Is there room for a token of bytes more: what the device's tokens hold
 * could all come to be copies, which its file system must have free, and
 * with the LUN's own allocation stay under its soft threshold?  -ENOBUFS if
 * not.
 */
int vaai_odx_snap_room(struct vaai_dev *vdev, u64 bytes)
{
	u64 held = atomic64_read(&vdev->odx.held) + bytes;
	u8 pct = vaai_tp_threshold(vdev);
	struct kstatfs st;
	int ret;

	ret = vfs_statfs(&vdev->file->f_path, &st);
	if (ret)
		return ret;
	if (held > (u64)st.f_bavail * st.f_bsize)
		return -ENOBUFS;
	if (pct && (vaai_file_allocated(vdev) + held) * 100 >=
		   (u64)pct * vdev->nr_bytes)
		return -ENOBUFS;
	return 0;
}

/*
 * A token file holding r's nr ranges of vdev, shared; foff[i] is where range
 * i's first byte is in it.
 */
struct file *vaai_odx_snap_make(struct vaai_dev *vdev,
				const struct vaai_odx_range *r, unsigned int nr,
				u64 *foff)
{
	struct inode *inode = file_inode(vdev->file);
	u32 bs = vdev->dev.dev_attrib.block_size;
	u32 fsb = i_blocksize(inode);
	loff_t size = i_size_read(inode), at = 0;
	struct file *f = vaai_odx_snap_open(vdev);
	unsigned int i;

	if (IS_ERR(f))
		return f;
	for (i = 0; i < nr; i++) {
		loff_t pos = r[i].lba * bs;
		loff_t end = pos + (loff_t)r[i].nolb * bs;
		loff_t from = round_down(pos, fsb);
		loff_t to = min_t(loff_t, round_up(end, fsb), size);
		loff_t ret;

		at = round_up(at, max(fsb, bs));
		ret = vfs_clone_file_range(vdev->file, from, f, at, to - from, 0);
		if (ret != to - from) {
			fput(f);
			return ERR_PTR(ret < 0 ? ret : -EIO);
		}
		foff[i] = at + (pos - from);
		at += to - from;
	}
	return f;
}
