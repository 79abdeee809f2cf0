// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: opening and closing the backing store named by path=.
 *
 * A regular file is used as it is, or created sparse when size= is given and
 * it does not exist; a block device node is opened exclusively.  Anything
 * else is refused.  A failure leaves nothing behind: a file we created is
 * removed again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/file.h>
#include <linux/dcache.h>

#include "vaai.h"

static void vaai_store_unlink_created(struct vaai_dev *vdev)
{
	/*
	 * Our own reference keeps the open file's dentry positive: with only
	 * the file's, vfs_unlink() would detach its inode under the file.
	 */
	struct dentry *dentry = dget(vdev->file->f_path.dentry);
	struct dentry *parent = dget_parent(dentry);
	int ret;

	inode_lock_nested(d_inode(parent), I_MUTEX_PARENT);
	ret = vaai_vfs_unlink(d_inode(parent), dentry);
	inode_unlock(d_inode(parent));
	dput(parent);
	dput(dentry);
	if (ret)
		pr_warn("%s: could not remove %s again: %d\n",
			vaai_dev_name(vdev), vdev->params.path, ret);
}

/* Create a new sparse file of params.size bytes. */
static int vaai_store_create(struct vaai_dev *vdev)
{
	struct vaai_params *p = &vdev->params;
	int ret;

	if (!p->size) {
		pr_err("%s: %s does not exist; give size= to create it\n",
		       vaai_dev_name(vdev), p->path);
		return -ENOENT;
	}
	if (p->readonly) {
		pr_err("%s: %s does not exist; a read-only LUN needs existing data\n",
		       vaai_dev_name(vdev), p->path);
		return -ENOENT;
	}

	vdev->file = filp_open(p->path, O_RDWR | O_CREAT | O_EXCL | O_LARGEFILE,
			       0600);
	if (IS_ERR(vdev->file)) {
		ret = PTR_ERR(vdev->file);
		vdev->file = NULL;
		pr_err("%s: cannot create %s: %d\n", vaai_dev_name(vdev),
		       p->path, ret);
		return ret;
	}
	vdev->created = true;

	ret = vfs_truncate(&vdev->file->f_path, p->size);
	if (ret) {
		pr_err("%s: cannot size %s to %llu bytes: %d\n",
		       vaai_dev_name(vdev), p->path, p->size, ret);
		return ret;
	}
	/*
	 * The file, its size and its name are durable before the LUN answers
	 * anything: a write made durable later must not be lost with the
	 * file it went to.  On XFS, ext4 and btrfs an fsync of a new file
	 * commits the transaction that named it.
	 */
	ret = vfs_fsync(vdev->file, 0);
	if (ret)
		pr_err("%s: cannot make %s durable: %d\n", vaai_dev_name(vdev),
		       p->path, ret);
	return ret;
}

static int vaai_store_open_existing(struct vaai_dev *vdev, umode_t mode)
{
	struct vaai_params *p = &vdev->params;
	int flags = (p->readonly ? O_RDONLY : O_RDWR) | O_LARGEFILE;
	int ret;

	if (S_ISDIR(mode)) {
		pr_err("%s: %s is a directory\n", vaai_dev_name(vdev), p->path);
		return -EISDIR;
	}
	if (!S_ISREG(mode) && !S_ISBLK(mode)) {
		pr_err("%s: %s is neither a regular file nor a block device\n",
		       vaai_dev_name(vdev), p->path);
		return -EINVAL;
	}
	/* O_EXCL on a block device claims it: no mounted or shared disks. */
	if (S_ISBLK(mode))
		flags |= O_EXCL;

	vdev->file = filp_open(p->path, flags, 0);
	if (IS_ERR(vdev->file)) {
		ret = PTR_ERR(vdev->file);
		vdev->file = NULL;
		pr_err("%s: cannot open %s: %d%s\n", vaai_dev_name(vdev),
		       p->path, ret, ret == -EBUSY ? " (in use)" : "");
		return ret;
	}
	return 0;
}

int vaai_store_open(struct vaai_dev *vdev)
{
	struct vaai_params *p = &vdev->params;
	struct path path;
	umode_t mode;
	int ret;

	if (!p->path) {
		pr_err("%s: no path= given\n", vaai_dev_name(vdev));
		return -EINVAL;
	}

	ret = kern_path(p->path, LOOKUP_FOLLOW, &path);
	if (ret == -ENOENT) {
		ret = vaai_store_create(vdev);
	} else if (!ret) {
		mode = d_inode(path.dentry)->i_mode;
		path_put(&path);
		ret = vaai_store_open_existing(vdev, mode);
	} else {
		pr_err("%s: cannot look up %s: %d\n", vaai_dev_name(vdev),
		       p->path, ret);
	}
	if (ret)
		goto out_close;

	vdev->store = S_ISBLK(file_inode(vdev->file)->i_mode) ?
		      &vaai_bdev_ops : &vaai_file_ops;
	ret = vdev->store->open(vdev);
	if (ret)
		goto out_close;
	vdev->nr_bytes = vdev->store->size(vdev);

	if (p->size && p->size != vdev->nr_bytes && !vdev->created) {
		pr_err("%s: size=%llu does not match the %lld bytes of %s\n",
		       vaai_dev_name(vdev), p->size, vdev->nr_bytes, p->path);
		ret = -EINVAL;
		goto out_close;
	}
	if (vdev->nr_bytes < VAAI_MIN_BLOCK_SIZE) {
		pr_err("%s: %s holds less than one block\n",
		       vaai_dev_name(vdev), p->path);
		ret = -EINVAL;
		goto out_close;
	}
	return 0;

out_close:
	if (vdev->created) {
		vaai_store_unlink_created(vdev);
		vdev->created = false;
	}
	vaai_store_close(vdev);
	return ret;
}

/*
 * online=1 (vaai_online.c): the block device at path= opened again under
 * the live LUN.  Nothing is created (a device node not there yet is not a
 * file to make), and vdev->store and the capacity are the caller's to set
 * once it has checked the device; vaai_store_close() undoes it.
 */
int vaai_store_reopen(struct vaai_dev *vdev, loff_t *size)
{
	struct vaai_params *p = &vdev->params;
	struct path path;
	umode_t mode;
	int ret;

	ret = kern_path(p->path, LOOKUP_FOLLOW, &path);
	if (ret) {
		pr_err("%s: cannot look up %s: %d\n", vaai_dev_name(vdev),
		       p->path, ret);
		return ret;
	}
	mode = d_inode(path.dentry)->i_mode;
	path_put(&path);
	if (!S_ISBLK(mode)) {
		pr_err("%s: %s is not a block device; only a block device store is closed and opened again\n",
		       vaai_dev_name(vdev), p->path);
		return -ENOTBLK;
	}
	ret = vaai_store_open_existing(vdev, mode);
	if (ret)
		return ret;
	ret = vaai_bdev_ops.open(vdev);
	if (ret)
		return ret;
	*size = vaai_bdev_ops.size(vdev);
	return 0;
}

/*
 * The store grew under the live LUN (a file extended, an LV or a LUN of
 * the SAN grown): take its size now, and tell every I_T nexus, which SBC-4
 * 4.6 asks of a capacity change.  A store that shrank is refused: the
 * hosts may have written the blocks that are gone.
 */
static int vaai_store_resize_held(struct vaai_dev *vdev)
{
	loff_t now = vdev->store->size(vdev);

	if (now < vdev->nr_bytes) {
		pr_err("%s: %s now holds %lld bytes, fewer than the LUN's %lld; "
		       "a live LUN does not shrink\n", vaai_dev_name(vdev),
		       vdev->params.path, now, vdev->nr_bytes);
		return -EINVAL;
	}
	if (now == vdev->nr_bytes)
		return 0;
	pr_info("%s: capacity %lld -> %lld bytes\n", vaai_dev_name(vdev),
		vdev->nr_bytes, now);
	WRITE_ONCE(vdev->nr_bytes, now);
	vaai_ua_raise(vdev, VAAI_UA_CAPACITY);
	return 0;
}

int vaai_store_resize(struct vaai_dev *vdev)
{
	int ret;

	if (!vaai_store_get(vdev)) {
		pr_err("%s: the store is closed (online=0): nothing to resize\n",
		       vaai_dev_name(vdev));
		return -ENODEV;
	}
	ret = vaai_store_resize_held(vdev);
	vaai_store_put(vdev);
	return ret;
}

void vaai_store_close(struct vaai_dev *vdev)
{
	if (vdev->file)
		filp_close(vdev->file, NULL);
	vdev->file = NULL;
	/* info's show reads it unlocked */
	WRITE_ONCE(vdev->store, NULL);
}
