/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels we build against lives here, so the
 * rest of the module reads as if there were one kernel.  Oldest supported:
 * 6.1 (Debian 12).
 */
#ifndef VAAI_COMPAT_H
#define VAAI_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/blkdev.h>

/* The block device behind an opened block device node. */
static inline struct block_device *vaai_file_bdev(struct file *file)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	return file_bdev(file);
#else
	return I_BDEV(file->f_mapping->host);
#endif
}

/* Remove a file we created; the caller holds the parent's inode lock. */
static inline int vaai_vfs_unlink(struct inode *dir, struct dentry *dentry)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return vfs_unlink(&nop_mnt_idmap, dir, dentry, NULL);
#else
	return vfs_unlink(&init_user_ns, dir, dentry, NULL);
#endif
}

#endif /* VAAI_COMPAT_H */
