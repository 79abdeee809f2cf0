// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: READ/WRITE and SYNCHRONIZE CACHE, handed to the store.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

static struct kmem_cache *vaai_io_cache;

int vaai_io_cache_init(void)
{
	vaai_io_cache = KMEM_CACHE(vaai_io, 0);
	return vaai_io_cache ? 0 : -ENOMEM;
}

void vaai_io_cache_exit(void)
{
	kmem_cache_destroy(vaai_io_cache);
}

/*
 * A request with every field zeroed but the inline bio_vecs, which are
 * written before they are read (vaai_file_bvecs()) and are over half its
 * size.
 */
struct vaai_io *vaai_io_alloc(struct se_cmd *cmd)
{
	struct vaai_io *io = kmem_cache_alloc(vaai_io_cache, GFP_NOIO);

	BUILD_BUG_ON(offsetofend(struct vaai_io, inline_bvec) !=
		     sizeof(struct vaai_io));
	if (!io)
		return NULL;
	memset(io, 0, offsetof(struct vaai_io, inline_bvec));
	io->cmd = cmd;
	io->vdev = to_vaai_dev(cmd->se_dev);
	io->op = vaai_op_of(cmd);
	io->start_ns = vaai_metrics_start(io->vdev);
	atomic64_inc(&io->vdev->stats.in_flight);
	return io;
}

void vaai_pages_free(struct bio_vec *bv, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr && bv[i].bv_page; i++)
		__free_page(bv[i].bv_page);
	kfree(bv);
}

/* Pages for len bytes of the backend's own data, as bio_vecs. */
struct bio_vec *vaai_pages_alloc(size_t len, unsigned int *nr)
{
	struct bio_vec *bv;
	unsigned int i;

	*nr = DIV_ROUND_UP(len, PAGE_SIZE);
	bv = kcalloc(*nr, sizeof(*bv), GFP_NOIO);
	if (!bv)
		return NULL;
	for (i = 0; i < *nr; i++) {
		bv[i].bv_page = alloc_page(GFP_NOIO);
		if (!bv[i].bv_page) {
			vaai_pages_free(bv, *nr);
			return NULL;
		}
		bv[i].bv_len = min_t(size_t, PAGE_SIZE, len - (size_t)i * PAGE_SIZE);
		bv[i].bv_offset = 0;
	}
	return bv;
}

/*
 * A buffer for len bytes of vdev's medium to be read into.  Up to a page it
 * is one kmalloc()ed piece rather than a page of its own, which
 * init_on_alloc would clear whole for a heartbeat's 512 bytes.  Sized to a
 * power of two, which kmalloc() aligns naturally: it never crosses a page,
 * suits direct I/O, and is used only where that alignment meets the
 * device's DMA alignment.  Slab memory may not be handed to anything that
 * takes page references (a network store's send): read into, compared,
 * freed.
 */
int vaai_buf_alloc(struct vaai_dev *vdev, struct vaai_buf *b, size_t len)
{
	size_t size = roundup_pow_of_two(len);

	b->small = NULL;
	if (size <= PAGE_SIZE && size > vdev->dma_align)
		b->small = kmalloc(size, GFP_NOIO);
	if (!b->small) {
		b->bv = vaai_pages_alloc(len, &b->nr);
		return b->bv ? 0 : -ENOMEM;
	}
	b->one.bv_page = virt_to_page(b->small);
	b->one.bv_offset = offset_in_page(b->small);
	b->one.bv_len = len;
	b->bv = &b->one;
	b->nr = 1;
	return 0;
}

void vaai_buf_free(struct vaai_buf *b)
{
	if (b->small)
		kfree(b->small);
	else
		vaai_pages_free(b->bv, b->nr);
}

/*
 * Hold [pos, pos + len) for io until it finishes; may sleep.  A write,
 * WRITE SAME or UNMAP then cancels the change-vulnerable tokens on it;
 * those taking an exclusive lock (COMPARE AND WRITE, ORWRITE) do that
 * themselves, once they know they write.
 */
void vaai_io_lock(struct vaai_io *io, loff_t pos, loff_t len, bool excl)
{
	vaai_dev_range_lock(io->vdev, &io->range, pos, pos + len, excl);
	io->locked = true;
	if (io->write && !excl)
		vaai_odx_touch(io->vdev, pos, len);
}

void vaai_io_unlock(struct vaai_io *io)
{
	if (io->locked)
		vaai_range_unlock(&io->vdev->rlock, &io->range);
	io->locked = false;
}

/*
 * Release what the request holds and count it: io->len bytes moved, or
 * failed; its command is completed by the caller.
 */
void vaai_io_finish(struct vaai_io *io)
{
	vaai_io_unlock(io);
	atomic64_dec(&io->vdev->stats.in_flight);
	vaai_metrics_done(io->vdev, io->op, io->start_ns,
			  io->failed ? 0 : io->len, io->failed);
	kmem_cache_free(vaai_io_cache, io);
}

/* The completion point of every request that ends in an errno. */
void vaai_io_done(struct vaai_io *io, int err)
{
	struct se_cmd *cmd = io->cmd;
	bool write = io->write;

	if (write && !err)
		vaai_tp_check(io->vdev);
	io->failed = err != 0;
	vaai_io_finish(io);
	vaai_cmd_complete(cmd, err, write);
}

/* The same, for a data-in request that returns len bytes. */
void vaai_io_done_len(struct vaai_io *io, u32 len)
{
	struct se_cmd *cmd = io->cmd;

	vaai_io_finish(io);
	vaai_cmd_done_len(cmd, SAM_STAT_GOOD, len);
}

/*
 * Durability (SBC-4 4.15 and 5.8): with the write cache disabled every write
 * is on the medium before GOOD; with it enabled only FUA writes are, and the
 * rest after SYNCHRONIZE CACHE.
 */
static bool vaai_write_must_be_durable(struct se_cmd *cmd)
{
	return !cmd->se_dev->dev_attrib.emulate_write_cache ||
	       (cmd->se_cmd_flags & SCF_FUA);
}

/*
 * The largest READ or WRITE started in the context that executes it.
 * LIO runs a fabric's commands one after another from a per-CPU submission
 * worker (tcm_loop) or the connection's receive thread (iSCSI), and a
 * store may move the data right there (a RAM disk copies it in submit_bio,
 * a buffered write into the page cache): a COMPARE AND WRITE queued behind
 * a few 1 MiB writes waited for all of them, and so did every completion
 * on that CPU's worker pool.  A larger transfer is started from the
 * vaai_start workqueue (vaai_io_queue_start()), so that the fabric goes on
 * to the next command at once; the hop is short against moving the data.
 */
#define VAAI_INLINE_MAX		(128 * 1024)

static void vaai_submit_rw(struct vaai_io *io)
{
	io->vdev->store->submit_rw(io);
}

/*
 * A large READ or WRITE, on vaai_start.  Its few workers must not sleep
 * for long, or every LUN's large transfers wait behind one LUN's: one
 * whose range lock would wait (behind a COMPARE AND WRITE, an ORWRITE, a
 * POPULATE TOKEN draining writes) goes on to the ordinary workqueue and
 * waits there.
 */
static void vaai_start_rw(struct vaai_io *io)
{
	if (vaai_range_would_wait(&io->vdev->rlock, io->pos, io->pos + io->len,
				  false))
		vaai_io_queue(io, vaai_submit_rw);
	else
		vaai_submit_rw(io);
}

sense_reason_t vaai_execute_rw(struct se_cmd *cmd, struct scatterlist *sgl,
			       u32 sgl_nents, enum dma_data_direction dir)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	struct vaai_io *io;

	if (dir == DMA_TO_DEVICE && vaai_cmd_write_protected(cmd))
		return TCM_WRITE_PROTECTED;
	/* A block device cannot address less than its own logical block. */
	if (bs < vdev->min_block)
		return TCM_LOGICAL_UNIT_COMMUNICATION_FAILURE;

	if (!cmd->data_length) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}

	/* LIO checked the LBAs; the bytes must lie inside the store too. */
	if ((loff_t)cmd->t_task_lba * bs + cmd->data_length > vdev->nr_bytes)
		return TCM_ADDRESS_OUT_OF_RANGE;

	io = vaai_io_alloc(cmd);
	if (!io)
		return TCM_OUT_OF_RESOURCES;
	io->sgl = sgl;
	io->sgl_nents = sgl_nents;
	io->pos = (loff_t)cmd->t_task_lba * bs;
	io->len = cmd->data_length;
	io->write = dir == DMA_TO_DEVICE;
	io->fua = io->write && vaai_write_must_be_durable(cmd);
	io->atomic = cmd->t_task_cdb[0] == WRITE_ATOMIC_16;
	if (io->len > VAAI_INLINE_MAX)
		vaai_io_queue_start(io, vaai_start_rw);
	else
		vaai_submit_rw(io);
	return TCM_NO_SENSE;
}

static sense_reason_t vaai_execute_write(struct se_cmd *cmd)
{
	return vaai_execute_rw(cmd, cmd->t_data_sg, cmd->t_data_nents,
			       DMA_TO_DEVICE);
}

/*
 * The parse of a write of our own whose data goes the way of a WRITE
 * (WRITE AND VERIFY, WRITE ATOMIC): its CDB check, then an LBA-addressed
 * data transfer, as LIO core marks a WRITE, with flags (SCF_FUA) added.
 */
sense_reason_t vaai_write_parse(struct se_cmd *cmd, vaai_cdb_check_t check,
				u32 flags)
{
	sense_reason_t ret;

	ret = vaai_cdb_parse(cmd, check, VAAI_XFER_BLOCKS, true, vaai_execute_write);
	if (!ret)
		cmd->se_cmd_flags |= SCF_SCSI_DATA_CDB | flags;
	return ret;
}

/*
 * Run fn on the command's blocks [t_task_lba, t_task_lba + t_task_nolb),
 * from the workqueue, or here when the work is short (now); with no blocks
 * there is nothing to do: GOOD.
 */
sense_reason_t vaai_execute_blocks(struct se_cmd *cmd,
				   void (*fn)(struct vaai_io *io),
				   bool write, bool fua, bool now)
{
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	struct vaai_io *io;

	if (!cmd->t_task_nolb) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	io = vaai_io_alloc(cmd);
	if (!io)
		return TCM_OUT_OF_RESOURCES;
	io->write = write;
	io->fua = fua;
	io->pos = (loff_t)cmd->t_task_lba * bs;
	io->len = (size_t)cmd->t_task_nolb * bs;
	if (now)
		fn(io);
	else
		vaai_io_queue(io, fn);
	return TCM_NO_SENSE;
}

static void vaai_sync_cache_work(struct vaai_io *io)
{
	vaai_io_done(io, io->vdev->store->flush(io->vdev, io->pos, io->len));
}

/* SBC-4 5.27: NUMBER OF LOGICAL BLOCKS 0 means through the last block. */
sense_reason_t vaai_execute_sync_cache(struct se_cmd *cmd)
{
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	u8 *cdb = cmd->t_task_cdb;
	struct vaai_io *io;
	u32 nolb;

	nolb = cdb[0] == SYNCHRONIZE_CACHE_16 ? get_unaligned_be32(&cdb[10]) :
						get_unaligned_be16(&cdb[7]);
	io = vaai_io_alloc(cmd);
	if (!io)
		return TCM_OUT_OF_RESOURCES;
	io->pos = (loff_t)cmd->t_task_lba * bs;
	io->len = (loff_t)nolb * bs;
	/* A flush that fails could not write: WRITE ERROR, not a read one. */
	io->write = true;
	vaai_io_queue(io, vaai_sync_cache_work);
	return TCM_NO_SENSE;
}
