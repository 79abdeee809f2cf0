/* SPDX-License-Identifier: GPL-2.0 */
/*
 * target_core_vaai: private header.
 *
 * Completion contract.  Every execute function of this backend does exactly
 * one of two things:
 *   - it returns a sense reason before any I/O has been started, and LIO core
 *     answers the command with CHECK CONDITION; or
 *   - it returns TCM_NO_SENSE and the command is completed exactly once, by
 *     vaai_cmd_complete() (directly, or from a store's completion path).
 * A sense code is never used to steer control flow inside the backend.
 */
#ifndef VAAI_H
#define VAAI_H

#include <linux/fs.h>
#include <linux/workqueue.h>
#include <target/target_core_base.h>
#include <target/target_core_backend.h>

#include "compat.h"

/* Largest data transfer of one READ/WRITE command we accept (bytes). */
#define VAAI_MAX_IO_BYTES	(8U << 20)
/* Commands LIO core may have outstanding on one device. */
#define VAAI_QUEUE_DEPTH	256
/* Smallest logical block LIO lets a device use (bytes). */
#define VAAI_MIN_BLOCK_SIZE	512

struct vaai_dev;
struct vaai_io;

/*
 * A store is the thing a LUN's blocks live in.  Both stores are opened as a
 * struct file (a regular file, or a block device node); the ops say how the
 * data gets there.
 */
struct vaai_store_ops {
	const char *name;
	/* vdev->file is open: set vdev->nr_bytes and the device's limits */
	int (*open)(struct vaai_dev *vdev);
	/* start a READ/WRITE; completes through vaai_io_done() */
	void (*submit_rw)(struct vaai_io *io);
	/* make [pos, pos + len) durable; len 0 means to the end; may sleep */
	int (*flush)(struct vaai_dev *vdev, loff_t pos, loff_t len);
};

extern const struct vaai_store_ops vaai_file_ops;
extern const struct vaai_store_ops vaai_bdev_ops;

/* What the operator wrote to `control`, before the device is enabled. */
struct vaai_params {
	char *path;
	u64 size;		/* 0: not given */
	bool readonly;
};

struct vaai_dev {
	struct se_device dev;		/* first: LIO core allocates through us */
	struct vaai_params params;

	/* Valid once configured. */
	const struct vaai_store_ops *store;
	struct file *file;
	loff_t nr_bytes;		/* capacity in bytes */
	u32 min_block;			/* smallest block the store can address */
	bool created;			/* we created the backing file */

	union {
		struct {
			struct block_device *bdev;
		} bdev;
	};
};

static inline struct vaai_dev *to_vaai_dev(struct se_device *dev)
{
	return container_of(dev, struct vaai_dev, dev);
}

/* One backend request: a READ/WRITE, or a cache flush. */
struct vaai_io {
	struct se_cmd *cmd;
	struct vaai_dev *vdev;
	struct scatterlist *sgl;
	u32 sgl_nents;
	loff_t pos;
	size_t len;
	bool write;
	bool fua;			/* durable before completion */
	struct work_struct work;	/* blocking stores run here */
	void (*work_fn)(struct vaai_io *io);
	atomic_t pending;		/* bdev: bios in flight, plus one */
	int error;			/* first error seen */
};

/* vaai_main.c */
void vaai_io_queue(struct vaai_io *io, void (*fn)(struct vaai_io *io));

/* vaai_rw.c */
struct vaai_io *vaai_io_alloc(struct se_cmd *cmd);
void vaai_io_done(struct vaai_io *io, int err);
sense_reason_t vaai_execute_rw(struct se_cmd *cmd, struct scatterlist *sgl,
			       u32 sgl_nents, enum dma_data_direction dir);
sense_reason_t vaai_execute_sync_cache(struct se_cmd *cmd);
int vaai_io_cache_init(void);
void vaai_io_cache_exit(void);

/* vaai_cdb.c */
sense_reason_t vaai_parse_cdb(struct se_cmd *cmd);

/* vaai_configfs.c */
ssize_t vaai_set_configfs_dev_params(struct se_device *dev, const char *page,
				     ssize_t count);
ssize_t vaai_show_configfs_dev_params(struct se_device *dev, char *page);
/* vaai_store.c */
int vaai_store_open(struct vaai_dev *vdev);
void vaai_store_close(struct vaai_dev *vdev);

/* vaai_sense.c */
void vaai_cmd_complete(struct se_cmd *cmd, int err, bool write);

#endif /* VAAI_H */
