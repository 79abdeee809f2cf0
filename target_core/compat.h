/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels we build against lives here, so the
 * rest of the module reads as if there were one kernel.  Oldest supported:
 * 6.1 (Debian 12); tested: 6.1, 6.12 and the newest Debian kernel
 * (docs/kernels.md lists each difference and the kernel it came with).
 *
 * A difference the preprocessor can see (a header, a macro) is tested for
 * itself, one it cannot by a compile probe in Kbuild (VAAI_HAVE_*); only a
 * changed function or structure falls back to the version.
 * In parentheses, the release a change came with; "by 6.12": not in 6.1,
 * in 6.12, and "by 7.2": not in 6.12, in 7.2.
 * The first part also builds on the host, in the parsers' tests.
 */
#ifndef VAAI_COMPAT_H
#define VAAI_COMPAT_H

/* The 6-byte RESERVE and RELEASE took an _6 suffix (by 7.2). */
#ifndef RESERVE_6
#define RESERVE_6	RESERVE
#define RELEASE_6	RELEASE
#endif

#ifdef __KERNEL__
#include <linux/version.h>
#include <linux/fs.h>
#include <linux/blkdev.h>

/* get/put_unaligned_*() moved from asm/ to linux/ (by 6.12). */
#if __has_include(<linux/unaligned.h>)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* hex_to_bin() left linux/kernel.h for linux/hex.h (by 6.12). */
#if __has_include(<linux/hex.h>)
#include <linux/hex.h>
#endif

/* The backend's execute hooks for sbc_parse_cdb() were renamed (6.5). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define vaai_exec_ops	exec_cmd_ops
#else
#define vaai_exec_ops	sbc_ops
#endif

/*
 * A LUN's RELATIVE TARGET PORT IDENTIFIER: numbered per device in the
 * order of its exports until 6.4, its portal group's (tpgt_N/rtpi) since.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define vaai_lun_rtpi(lun)	((lun)->lun_tpg->tpg_rtpi)
#else
#define vaai_lun_rtpi(lun)	((lun)->lun_rtpi)
#endif

/* The block device behind an opened block device node. */
static inline struct block_device *vaai_file_bdev(struct file *file)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	return file_bdev(file);
#else
	return I_BDEV(file->f_mapping->host);
#endif
}

/* bdev_nonrot() became its inverse, bdev_rot() (by 7.2). */
static inline bool vaai_bdev_nonrot(struct block_device *bdev)
{
#ifdef blk_queue_rot
	return !bdev_rot(bdev);
#else
	return bdev_nonrot(bdev);
#endif
}

/*
 * Whether a buffered write may be tried with IOCB_NOWAIT: a file mode bit
 * until it moved to the file operations' flags (by 6.12).
 */
static inline bool vaai_file_buffered_wasync(struct file *file)
{
#ifdef FOP_BUFFER_WASYNC
	return file->f_op->fop_flags & FOP_BUFFER_WASYNC;
#else
	return file->f_mode & FMODE_BUF_WASYNC;
#endif
}

/*
 * A workqueue says whether it is per-CPU: 7.2 warns at allocation when it
 * names neither WQ_PERCPU nor WQ_UNBOUND.  The flag reached 6.12's stable
 * releases as a no-op; an enum constant, so Kbuild probes for it.
 */
#ifdef VAAI_HAVE_WQ_PERCPU
#define VAAI_WQ_PERCPU	WQ_PERCPU
#else
#define VAAI_WQ_PERCPU	0
#endif

/*
 * Untorn writes of a block device (REQ_ATOMIC, by 6.12): the smallest and
 * largest unit it writes whole and the boundary none may cross (0: none),
 * in bytes; false where the kernel or the device has none.
 */
#ifdef REQ_ATOMIC
#define VAAI_REQ_ATOMIC	REQ_ATOMIC
static inline bool vaai_bdev_atomic_units(struct block_device *bdev, u32 *min,
					  u32 *max, u32 *boundary)
{
	struct request_queue *q = bdev_get_queue(bdev);

	if (!bdev_can_atomic_write(bdev))
		return false;
	*min = queue_atomic_write_unit_min_bytes(q);
	*max = queue_atomic_write_unit_max_bytes(q);
	*boundary = queue_atomic_write_boundary_bytes(q);
	return true;
}
#else
#define VAAI_REQ_ATOMIC	0
static inline bool vaai_bdev_atomic_units(struct block_device *bdev, u32 *min,
					  u32 *max, u32 *boundary)
{
	return false;
}
#endif

/*
 * An unnamed file (O_TMPFILE) in dir, opened with flags: renamed from
 * vfs_tmpfile_open() in 6.5, idmapped mounts' argument changed in 6.3.
 */
static inline struct file *vaai_tmpfile_open(const struct path *dir, int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return kernel_tmpfile_open(&nop_mnt_idmap, dir, S_IFREG | 0600, flags,
				   current_cred());
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return vfs_tmpfile_open(&nop_mnt_idmap, dir, S_IFREG | 0600, flags,
				current_cred());
#else
	return vfs_tmpfile_open(&init_user_ns, dir, S_IFREG | 0600, flags,
				current_cred());
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
#endif /* __KERNEL__ */

#endif /* VAAI_COMPAT_H */
