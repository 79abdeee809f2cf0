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
 * Whatever completes a command does it through vaai_cmd_done() and its
 * kind (vaai_online.c), never target_complete_cmd() itself: a command that
 * holds the store gives it back just before it is answered.
 * A sense code is never used to steer control flow inside the backend.
 */
#ifndef VAAI_H
#define VAAI_H

#include <linux/fs.h>
#include <linux/workqueue.h>
#include <linux/atomic.h>
#include <linux/configfs.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/completion.h>
#include <linux/percpu-refcount.h>
#include <target/target_core_base.h>
#include <target/target_core_backend.h>

#include "compat.h"
#include "parse/vaai_parse.h"

/*
 * The release, as modinfo shows it; debian/changelog and python/pyproject.toml
 * carry the same (tests/host/test_version.py).
 */
#define VAAI_VERSION		"0.1.0"

/* Largest data transfer of one READ/WRITE command we accept (bytes). */
#define VAAI_MAX_IO_BYTES	(8U << 20)
/* Commands LIO core may have outstanding on one device. */
#define VAAI_QUEUE_DEPTH	256
/* Smallest logical block LIO lets a device use (bytes). */
#define VAAI_MIN_BLOCK_SIZE	512
/*
 * Thin-provisioning limits reported in the Block Limits VPD page (through
 * LIO's dev_attrib) and enforced by our parsers.  An UNMAP parameter list is
 * at most 65535 bytes (16-bit length), so 4095 descriptors fit in any list.
 */
#define VAAI_MAX_WRITE_SAME_BYTES	(2ULL << 30)
/*
 * At most 1 Mi blocks per UNMAP (512 MiB to 4 GiB): a bounded amount of
 * deallocation per command.  libiscsi's Block Limits test refuses any
 * larger finite value.
 */
#define VAAI_MAX_UNMAP_BLOCKS		(1U << 20)
#define VAAI_MAX_UNMAP_DESCS		4095
/* VMFS-6 unmaps in 1 MiB units: a granularity must divide it (SBC-4 6.6.4). */
#define VAAI_UNMAP_UNIT_BYTES		(1U << 20)

struct vaai_dev;
struct vaai_io;
struct bio_vec;

/* What the I/O metrics count commands as (vaai_metrics.c). */
enum vaai_op {
	VAAI_OP_READ,
	VAAI_OP_WRITE,
	VAAI_OP_ATS,
	VAAI_OP_ZERO,			/* WRITE SAME */
	VAAI_OP_UNMAP,
	VAAI_OP_CLONE,			/* EXTENDED COPY */
	VAAI_OP_ODX,			/* POPULATE TOKEN, WRITE USING TOKEN */
	VAAI_OP_NR,
	VAAI_OP_NONE = VAAI_OP_NR,	/* not counted */
};

/* Latency histogram: [0, 1) µs, [1, 2), [2, 4), ..., then 2^22 µs (4.2 s) on. */
#define VAAI_LAT_BUCKETS	24

/* The commands are the histogram's sum: one count, so readings agree. */
struct vaai_op_metrics {
	u64 errors;			/* not GOOD */
	u64 bytes;
	u64 lat_us;			/* latencies' sum */
	u64 lat[VAAI_LAT_BUCKETS];
};

/* attrib/stats_ats_worst_us: the slowest COMPARE AND WRITE in this window. */
#define VAAI_ATS_WORST_SECONDS	60

/* One CPU's share of a device's metrics. */
struct vaai_metrics {
	struct vaai_op_metrics op[VAAI_OP_NR];
	u64 lock_waits;			/* commands that waited for a range */
	u64 lock_wait_us;
};

/* Per-device counters, shown in attrib/ (vaai_stats.c). */
struct vaai_stats {
	atomic64_t ats;			/* COMPARE AND WRITE done (esxtop ATS) */
	atomic64_t ats_miscompare;	/* ... that miscompared (ATSF) */
	atomic64_t ats_failed;		/* ... that failed otherwise */
	atomic64_t zero;		/* WRITE SAME done (esxtop ZERO) */
	atomic64_t zero_failed;		/* WRITE SAME failed (ZERO_F) */
	atomic64_t zero_blocks;
	atomic64_t unmap;		/* UNMAP done */
	atomic64_t unmap_failed;
	atomic64_t unmap_blocks;
	atomic64_t clone_read;		/* EXTENDED COPY reading it (CLONE_RD) */
	atomic64_t clone_write;		/* ... writing it (CLONE_WR) */
	atomic64_t clone_failed;	/* sent to it and failed (CLONE_F) */
	atomic64_t clone_read_bytes;
	atomic64_t clone_write_bytes;
	atomic64_t odx_tokens;		/* POPULATE TOKEN tokens made of it */
	atomic64_t rw_deferred;		/* file READ/WRITE sent to the workqueue */
	atomic64_t in_flight;		/* requests at the store now (a gauge) */
};

/*
 * A store is the thing a LUN's blocks live in.  Both stores are opened as a
 * struct file (a regular file, or a block device node); the ops say how the
 * data gets there.
 */
struct vaai_store_ops {
	const char *name;
	/* vdev->file is open: set the device's limits */
	int (*open)(struct vaai_dev *vdev);
	/* bytes the store holds now */
	loff_t (*size)(struct vaai_dev *vdev);
	/*
	 * Start a READ/WRITE; completes through vaai_io_done().  It holds a
	 * shared range lock while the transfer runs, taken where the transfer
	 * runs: a request must not sit in the lock queue while its work item
	 * waits for a worker that may itself be waiting on that queue.
	 */
	void (*submit_rw)(struct vaai_io *io);
	/* make [pos, pos + len) durable; len 0 means to the end; may sleep */
	int (*flush)(struct vaai_dev *vdev, loff_t pos, loff_t len);
	/* move len bytes between bv and pos, and wait; may sleep */
	int (*xfer_bvec)(struct vaai_dev *vdev, bool write, loff_t pos,
			 struct bio_vec *bv, unsigned int nr, size_t len, bool fua);
	/* zero [pos, pos + len), leaving it mapped; may sleep */
	int (*zero)(struct vaai_dev *vdev, loff_t pos, loff_t len);
	/* deallocate [pos, pos + len); reads zeros after if vdev->lbprz */
	int (*unmap)(struct vaai_dev *vdev, loff_t pos, loff_t len);
	/*
	 * Provisioning state at pos: *mapped, and the length in bytes (at most
	 * len) of the extent in that state; may sleep.
	 */
	loff_t (*map_status)(struct vaai_dev *vdev, loff_t pos, loff_t len,
			     bool *mapped);
	/*
	 * Read [pos, pos + len) into the cache READs are served from, and wait
	 * for it; -EOPNOTSUPP: READs bypass the cache now.  NULL: the store has
	 * no cache.  May sleep.
	 */
	int (*prefetch)(struct vaai_dev *vdev, loff_t pos, size_t len);
};

extern const struct vaai_store_ops vaai_file_ops;
extern const struct vaai_store_ops vaai_bdev_ops;

/* vaai_file.c, vaai_file_rw.c */
int vaai_file_xfer(struct file *file, bool write, struct bio_vec *bv,
		   unsigned int nr, size_t len, loff_t pos, rwf_t flags);
void vaai_file_submit_rw(struct vaai_io *io);
bool vaai_file_direct(struct vaai_dev *vdev);
int vaai_file_xfer_direct(struct vaai_dev *vdev, bool write, struct bio_vec *bv,
			  unsigned int nr, size_t len, loff_t pos, bool dsync);
void vaai_file_drop_cache(struct vaai_dev *vdev);
extern struct configfs_attribute vaai_attr_io_mode;

/* How the file store reaches the file (attrib/io_mode). */
enum vaai_io_mode {
	VAAI_IO_AUTO,		/* direct while the write cache is off */
	VAAI_IO_DIRECT,
	VAAI_IO_BUFFERED,
};

/* What the operator wrote to `control`, before the device is enabled. */
struct vaai_params {
	char *path;
	u64 size;		/* 0: not given */
	bool readonly;
	bool offline;		/* online=0: enabled with the store closed */
	u32 unmap_unit;		/* with online=0: the store's, as it will be */
	bool lbprz;		/* with online=0: the store's, as it will be */
};

/* LBA range locks (vaai_lock.c, around vaai_range_queue.c's queue). */
struct vaai_rlock {
	spinlock_t lock;
	struct vaai_range_queue queue;
	wait_queue_head_t wait;
};

void vaai_rlock_init(struct vaai_rlock *rl);
u64 vaai_range_lock(struct vaai_rlock *rl, struct vaai_range *r,
		    loff_t start, loff_t end, bool excl);
void vaai_dev_range_lock(struct vaai_dev *vdev, struct vaai_range *r,
			 loff_t start, loff_t end, bool excl);
void vaai_range_unlock(struct vaai_rlock *rl, struct vaai_range *r);
bool vaai_range_would_wait(struct vaai_rlock *rl, loff_t start, loff_t end,
			   bool excl);

/* Thin-provisioning soft threshold state (vaai_threshold.c). */
struct vaai_tp {
	spinlock_t lock;
	u8 threshold;			/* percent of capacity; 0: off */
	bool crossed;			/* allocation is at or over it */
	struct work_struct work;	/* a look from interrupt context */
};

/* Unit attentions this backend raises on every I_T nexus (vaai_ua.c). */
enum vaai_ua_kind {
	VAAI_UA_CAPACITY,		/* in the order they are reported */
	VAAI_UA_SOFT_THRESHOLD,
	VAAI_UA_NR,
};

struct vaai_ua {
	spinlock_t lock;
	bool pending;			/* some I_T nexus is still to be told */
	unsigned int nr_told;
	const void *told[32];		/* se_session of each nexus told */
};

/* The EXTENDED COPY commands of one device (vaai_copy_results.c). */
struct vaai_copies {
	spinlock_t lock;
	struct list_head list;		/* of vaai_copy_status */
	unsigned int nr_listed;
	atomic_t nr_running;
	struct mutex clone;		/* one clone step at a time (vaai_copy.c) */
};

/* A device's point-in-time tokens (vaai_odx_token.c, vaai_odx_snap.c). */
struct vaai_odx_dev {
	bool pit;			/* attrib/odx_point_in_time */
	bool share;			/* the store can share into a token file */
	atomic_t nr_watched;		/* change-vulnerable tokens of it ... */
	struct list_head watched;	/* ... under the tokens' lock */
	atomic64_t held;		/* bytes its persistent tokens hold */
};

/* A peer node's target port group: its id and its ports (vaai_rtpg.c). */
#define VAAI_PEER_PORTS_MAX	8
struct vaai_alua_peer {
	u16 group;
	u8 nr;				/* 0: no peer declared */
	u16 rtpi[VAAI_PEER_PORTS_MAX];
};

struct vaai_dev {
	struct se_device dev;		/* first: LIO core allocates through us */
	struct vaai_params params;

	/* Valid once configured. */
	const struct vaai_store_ops *store;
	struct file *file;
	loff_t nr_bytes;		/* capacity in bytes */
	u32 min_block;			/* smallest block the store can address */
	u32 dma_align;			/* mask a buffer's address must clear */
	u32 unmap_unit;			/* store's deallocation unit, bytes; 0: none */
	bool lbprz;			/* deallocated blocks read back as zeros */
	bool created;			/* we created the backing file */
	int io_mode;			/* enum vaai_io_mode */
	u32 limits_bs;			/* block size the limits were set for */
	struct vaai_stats stats;
	struct vaai_metrics __percpu *metrics;
	bool io_stats;			/* count into metrics (attrib/io_stats) */
	/* per second of the last minute: the second, the slowest ATS (µs) */
	atomic64_t ats_worst[VAAI_ATS_WORST_SECONDS];
	struct vaai_tp tp;
	struct vaai_ua ua[VAAI_UA_NR];
	struct vaai_rlock rlock;
	struct vaai_copies copies;
	u64 gen;			/* unique per device since load (tokens) */
	struct vaai_odx_dev odx;
	/* held by what uses the store; dead while it is closed (vaai_online.c) */
	struct percpu_ref online;
	struct completion offlined;	/* online's last holder has gone */
	struct mutex online_lock;	/* one online= at a time */
	/* the peer node's ports in its ALUA group (vaai_rtpg.c) */
	struct vaai_alua_peer peer;
	spinlock_t peer_lock;

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

/* The device's name in configfs, as its messages begin. */
static inline const char *vaai_dev_name(struct vaai_dev *vdev)
{
	return vdev->dev.dev_group.cg_item.ci_name;
}

/* The device of a file in its attrib/ directory (our own attributes). */
static inline struct vaai_dev *vaai_attrib_dev(struct config_item *item)
{
	struct se_dev_attrib *da = container_of(to_config_group(item),
						struct se_dev_attrib, da_group);

	return to_vaai_dev(da->da_dev);
}

/* Pages a file READ/WRITE describes without an allocation (64 KiB). */
#define VAAI_INLINE_BVECS	16

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
	bool atomic;			/* WRITE ATOMIC: one untorn write */
	struct scatterlist *bounce;	/* bdev: its data copied into whole pages */
	struct work_struct work;	/* blocking stores run here */
	void (*work_fn)(struct vaai_io *io);
	atomic_t pending;		/* bdev: bios in flight, plus one */
	int error;			/* first error seen */
	void *buf;			/* command's own data, freed by its work */
	bool unmap;			/* WRITE SAME: UNMAP bit */
	bool locked;			/* range holds a lock */
	bool failed;			/* completes other than GOOD */
	enum vaai_op op;		/* what the metrics count it as */
	u64 start_ns;
	struct vaai_range range;
	/* file store READ/WRITE (vaai_file_rw.c) */
	struct kiocb iocb;		/* the direct request */
	struct bio_vec *bvec;		/* the command's pages */
	/* last: vaai_io_alloc() zeroes everything before it */
	struct bio_vec inline_bvec[VAAI_INLINE_BVECS];
};

/* vaai_online.c */
int vaai_online_init(struct vaai_dev *vdev);
void vaai_online_exit(struct vaai_dev *vdev);
int vaai_online_configure(struct vaai_dev *vdev);
int vaai_online_set(struct vaai_dev *vdev, bool on);
bool vaai_online(struct vaai_dev *vdev);
bool vaai_store_get(struct vaai_dev *vdev);
void vaai_store_put(struct vaai_dev *vdev);
void vaai_cmd_gate(struct se_cmd *cmd);
void vaai_cmd_done(struct se_cmd *cmd, u8 status);
void vaai_cmd_done_len(struct se_cmd *cmd, u8 status, int len);
void vaai_cmd_done_reason(struct se_cmd *cmd, sense_reason_t reason);
sense_reason_t vaai_execute_rw_online(struct se_cmd *cmd,
				      struct scatterlist *sgl, u32 sgl_nents,
				      enum dma_data_direction dir);
sense_reason_t vaai_execute_sync_cache_online(struct se_cmd *cmd);

/* vaai_main.c */
void vaai_io_queue(struct vaai_io *io, void (*fn)(struct vaai_io *io));
void vaai_io_queue_start(struct vaai_io *io, void (*fn)(struct vaai_io *io));
void vaai_queue_copy(struct work_struct *work);
void vaai_queue_clone(struct work_struct *work);
bool vaai_dev_is_ours(struct se_device *dev);

/* vaai_copy_slots.c */
int vaai_copy_slots_init(void);
void vaai_copy_slots_exit(void);

/* vaai_rw.c */
struct vaai_io *vaai_io_alloc(struct se_cmd *cmd);
struct bio_vec *vaai_pages_alloc(size_t len, unsigned int *nr);
void vaai_pages_free(struct bio_vec *bv, unsigned int nr);

/* A buffer the backend reads the medium into (vaai_rw.c). */
struct vaai_buf {
	struct bio_vec *bv;
	unsigned int nr;
	struct bio_vec one;		/* bv when small is set */
	void *small;			/* kmalloc()ed, up to a page */
};

int vaai_buf_alloc(struct vaai_dev *vdev, struct vaai_buf *b, size_t len);
void vaai_buf_free(struct vaai_buf *b);
void vaai_io_lock(struct vaai_io *io, loff_t pos, loff_t len, bool excl);
void vaai_io_unlock(struct vaai_io *io);
void vaai_io_finish(struct vaai_io *io);
void vaai_io_done(struct vaai_io *io, int err);
void vaai_io_done_len(struct vaai_io *io, u32 len);
sense_reason_t vaai_execute_rw(struct se_cmd *cmd, struct scatterlist *sgl,
			       u32 sgl_nents, enum dma_data_direction dir);
sense_reason_t vaai_write_parse(struct se_cmd *cmd, vaai_cdb_check_t check,
				u32 flags);
sense_reason_t vaai_execute_sync_cache(struct se_cmd *cmd);
sense_reason_t vaai_execute_blocks(struct se_cmd *cmd,
				   void (*fn)(struct vaai_io *io),
				   bool write, bool fua, bool now);
int vaai_io_cache_init(void);
void vaai_io_cache_exit(void);

/* vaai_cdb.c */
sense_reason_t vaai_parse_cdb(struct se_cmd *cmd);
sense_reason_t vaai_cdb_size_check(struct se_cmd *cmd, u32 size, bool data_cdb);
sense_reason_t vaai_cdb_data_out_check(struct se_cmd *cmd, u32 size,
				       bool data_cdb);
/* What a command transfers, for vaai_cdb_accept(). */
enum vaai_xfer {
	VAAI_XFER_BLOCKS,	/* data-out: exactly the blocks the CDB names */
	VAAI_XFER_LIST,		/* data-out: at least its parameter list */
	VAAI_XFER_IN,		/* data-in: up to the allocation length */
};
sense_reason_t vaai_cdb_accept(struct se_cmd *cmd, enum vaai_cdb_err err,
			       const struct vaai_cdb_args *a,
			       enum vaai_xfer xfer, bool write,
			       sense_reason_t (*execute)(struct se_cmd *cmd));
sense_reason_t vaai_cdb_parse(struct se_cmd *cmd, vaai_cdb_check_t check,
			      enum vaai_xfer xfer, bool write,
			      sense_reason_t (*execute)(struct se_cmd *cmd));
sense_reason_t vaai_cdb_reason(enum vaai_cdb_err err);
void vaai_dev_set_limits(struct vaai_dev *vdev);

/* vaai_vpd.c */
bool vaai_vpd_match(const u8 *cdb);
sense_reason_t vaai_vpd_parse(struct se_cmd *cmd);
/* vaai_vpd_tpc.c: the Third-party Copy VPD page */
#define VAAI_VPD_TPC	0x8f
sense_reason_t vaai_vpd_tpc_execute(struct se_cmd *cmd);

/* vaai_prefetch.c */
sense_reason_t vaai_prefetch_parse(struct se_cmd *cmd);

/* vaai_ws.c */
sense_reason_t vaai_ws_parse(struct se_cmd *cmd);
int vaai_ws_zero(struct vaai_io *io);

/* vaai_compare.c */
size_t vaai_compare_sg(struct scatterlist *sgl, unsigned int nents,
		       size_t skip, struct bio_vec *bv, size_t len);
size_t vaai_compare_pattern(const u8 *block, u32 bs, struct bio_vec *bv,
			    size_t len);
void vaai_or_sg(struct scatterlist *sgl, unsigned int nents, size_t skip,
		struct bio_vec *bv, size_t len);

/* vaai_verify.c */
sense_reason_t vaai_verify_parse(struct se_cmd *cmd);

/* vaai_caw.c */
sense_reason_t vaai_caw_parse(struct se_cmd *cmd);

/* vaai_write_verify.c */
sense_reason_t vaai_write_verify_parse(struct se_cmd *cmd);

/* vaai_orwrite.c */
sense_reason_t vaai_orwrite_parse(struct se_cmd *cmd);

/* vaai_vpd.c */
u32 vaai_cmd_max_transfer(struct se_cmd *cmd);

/* vaai_rtpg.c */
void vaai_alua_peer_init(struct vaai_dev *vdev);
bool vaai_rtpg_match(const u8 *cdb);
sense_reason_t vaai_rtpg_parse(struct se_cmd *cmd);
extern struct configfs_attribute vaai_attr_alua_peer_ports;

/* vaai_write_atomic.c */
sense_reason_t vaai_write_atomic_parse(struct se_cmd *cmd);
void vaai_write_atomic_limits(struct se_cmd *cmd, struct vaai_cdb_lun *lun);
bool vaai_write_atomic_supported(struct se_cmd *cmd);

/* vaai_xcopy.c, vaai_copy_results.c */
sense_reason_t vaai_xcopy_parse(struct se_cmd *cmd);
sense_reason_t vaai_rcr_parse(struct se_cmd *cmd);
void vaai_copies_init(struct vaai_copies *cp);
void vaai_copies_free(struct vaai_copies *cp);

/* vaai_odx_token.c, vaai_odx_snap.c: the token copy's tokens, per device */
extern struct configfs_attribute vaai_attr_odx_point_in_time;
extern struct configfs_attribute vaai_stat_attr_odx_held_bytes;
void vaai_odx_dev_init(struct vaai_dev *vdev);
void vaai_odx_tokens_drop(struct vaai_dev *vdev);
void vaai_odx_exit(void);
void vaai_odx_snap_probe(struct vaai_dev *vdev);
void __vaai_odx_touch(struct vaai_dev *vdev, loff_t pos, loff_t len);

/*
 * [pos, +len) of vdev is about to change, under a range lock on it: the
 * change-vulnerable tokens on it are cancelled.  Costs a read of one
 * counter while the device has none.
 */
static inline void vaai_odx_touch(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	if (unlikely(atomic_read(&vdev->odx.nr_watched)))
		__vaai_odx_touch(vdev, pos, len);
}

/* vaai_unmap.c */
sense_reason_t vaai_unmap_parse(struct se_cmd *cmd);

/* vaai_lba_status.c */
sense_reason_t vaai_lba_status_parse(struct se_cmd *cmd);

/* vaai_opcodes.c */
bool vaai_opcodes_match(const u8 *cdb);
sense_reason_t vaai_opcodes_parse(struct se_cmd *cmd);
bool vaai_opcodes_sa_enabled(struct se_cmd *cmd);

/* vaai_threshold.c */
extern struct configfs_attribute vaai_tp_attr_soft_threshold;
void vaai_tp_init(struct vaai_dev *vdev);
void vaai_tp_exit(struct vaai_dev *vdev);
void vaai_tp_check(struct vaai_dev *vdev);
u8 vaai_tp_threshold(struct vaai_dev *vdev);
u64 vaai_file_allocated(struct vaai_dev *vdev);

/* vaai_ua.c */
void vaai_ua_init(struct vaai_dev *vdev);
void vaai_ua_raise(struct vaai_dev *vdev, enum vaai_ua_kind kind);
void vaai_ua_withdraw(struct vaai_dev *vdev, enum vaai_ua_kind kind);
bool vaai_ua_report(struct se_cmd *cmd);

/* vaai_metrics.c */
extern struct configfs_attribute vaai_attr_io_stats;
int vaai_metrics_init(struct vaai_dev *vdev);
u64 vaai_metrics_start(struct vaai_dev *vdev);
void vaai_metrics_exit(struct vaai_dev *vdev);
enum vaai_op vaai_op_of(const struct se_cmd *cmd);
void vaai_metrics_done(struct vaai_dev *vdev, enum vaai_op op, u64 start_ns,
		       u64 bytes, bool failed);
void vaai_metrics_refused(struct se_cmd *cmd);
void vaai_metrics_lock_wait(struct vaai_dev *vdev, u64 ns);
ssize_t vaai_metrics_show_op(struct vaai_dev *vdev, enum vaai_op op, char *page);
ssize_t vaai_metrics_show_lock_wait(struct vaai_dev *vdev, char *page);
ssize_t vaai_metrics_show_ats_worst(struct vaai_dev *vdev, char *page);

/* vaai_stats.c */
int vaai_stats_attrs_init(struct configfs_attribute ***attrs);
void vaai_stats_attrs_exit(struct configfs_attribute **attrs);

/* vaai_configfs.c */
ssize_t vaai_set_configfs_dev_params(struct se_device *dev, const char *page,
				     ssize_t count);
ssize_t vaai_show_configfs_dev_params(struct se_device *dev, char *page);
/* vaai_store.c */
int vaai_store_open(struct vaai_dev *vdev);
int vaai_store_reopen(struct vaai_dev *vdev, loff_t *size);
void vaai_store_close(struct vaai_dev *vdev);
int vaai_store_resize(struct vaai_dev *vdev);

/*
 * DPO and FUA are accepted where MODE SENSE's DPOFUA bit says so: LIO core
 * sets the bit, and accepts the bits in the READ, WRITE and WRITE AND
 * VERIFY it parses, with the write cache on and emulate_fua_write set
 * (target_check_fua()); our parsers and our REPORT SUPPORTED OPERATION
 * CODES follow the same rule (SBC-4 6.5.1).
 */
static inline bool vaai_dpofua(const struct se_dev_attrib *da)
{
	return da->emulate_write_cache > 0 && da->emulate_fua_write > 0;
}

/* A write to this LUN is refused with DATA PROTECT / WRITE PROTECTED. */
static inline bool vaai_cmd_write_protected(struct se_cmd *cmd)
{
	return to_vaai_dev(cmd->se_dev)->params.readonly ||
	       target_lun_is_rdonly(cmd);
}

/*
 * Has the command been aborted (TMR ABORT TASK, LUN RESET) or is its
 * session going away?  Long work looks between steps and lets go.
 */
static inline bool vaai_cmd_stopped(struct se_cmd *cmd)
{
	return READ_ONCE(cmd->transport_state) &
	       (CMD_T_ABORTED | CMD_T_STOP | CMD_T_FABRIC_STOP);
}

/* Work that must be durable before GOOD when the write cache is off. */
static inline int vaai_dev_sync_if_write_through(struct vaai_dev *vdev,
						 loff_t pos, loff_t len)
{
	if (vdev->dev.dev_attrib.emulate_write_cache)
		return 0;
	return vdev->store->flush(vdev, pos, len);
}

/* vaai_sense.c */
void vaai_cmd_complete(struct se_cmd *cmd, int err, bool write);
void vaai_cmd_complete_ua(struct se_cmd *cmd, enum vaai_asc code);
void vaai_cmd_complete_miscompare(struct se_cmd *cmd, u64 offset);
void vaai_cmd_complete_sense_data(struct se_cmd *cmd, u8 *buf);
u8 vaai_copy_errno_sense(int err, u8 *key, enum vaai_asc *code);
u8 vaai_sense_fill(struct se_device *dev, u8 *buf, u8 key, enum vaai_asc code);
void vaai_cmd_complete_data(struct se_cmd *cmd, const void *buf, u32 size);
void vaai_cmd_complete_fault(struct se_cmd *cmd, const struct vaai_fault *f);
void vaai_cmd_complete_bad_cdb(struct se_cmd *cmd, u16 byte, int bit);

#endif /* VAAI_H */
