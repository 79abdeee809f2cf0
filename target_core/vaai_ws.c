// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: WRITE SAME (10) and (16), SBC-4 5.49 and 5.50.
 *
 * A zero payload (or NDOB) is a metadata operation on the store: the blocks
 * are zeroed in place, or deallocated when the UNMAP bit is set and the
 * store reads deallocated blocks back as zeros.  Any other pattern is
 * written in large chunks from a buffer filled once.
 *
 * A WRITE SAME may cover 2 GiB: it is done in steps, and an abort (TMR
 * ABORT TASK, LUN RESET, the session going away) is noticed between them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

#define VAAI_WS_UNMAP		0x08	/* CDB byte 1 */

/* One pattern write covers this much of the range. */
#define VAAI_WS_CHUNK_BYTES	(1U << 20)
/* One zeroing or deallocation covers at most this much. */
#define VAAI_WS_STEP_BYTES	(64U << 20)

/* Write the one-block pattern in buf over [pos, pos + len). */
static int vaai_ws_write_pattern(struct vaai_io *io, const void *buf,
				 u32 bs, loff_t pos, loff_t len)
{
	struct vaai_dev *vdev = io->vdev;
	struct bio_vec *bv;
	unsigned int nr, i, off;
	int ret = 0;

	bv = vaai_pages_alloc(min_t(loff_t, len, VAAI_WS_CHUNK_BYTES), &nr);
	if (!bv)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		void *p = kmap_local_page(bv[i].bv_page);

		for (off = 0; off < PAGE_SIZE; off += bs)
			memcpy(p + off, buf, bs);
		kunmap_local(p);
		bv[i].bv_len = PAGE_SIZE;
	}

	while (len) {
		size_t n = min_t(loff_t, len, (loff_t)nr * PAGE_SIZE);

		if (vaai_cmd_stopped(io->cmd)) {
			ret = -EINTR;
			break;
		}
		ret = vdev->store->xfer_bvec(vdev, true, pos, bv,
					     DIV_ROUND_UP(n, PAGE_SIZE), n, false);
		if (ret)
			break;
		pos += n;
		len -= n;
	}
	vaai_pages_free(bv, nr);
	return ret;
}

/*
 * Zeros on a thin LUN whose deallocated blocks read back as zeros are
 * deallocated, UNMAP bit or not: SBC-4 lets a device server move a mapped
 * LBA holding zeros to deallocated at any time when LBPRZ is set
 * (autonomous LBA transitions), and it keeps the file sparse.  With logical
 * block provisioning turned off (no LBPME) the zeros stay allocated.
 */
static int vaai_ws_zero_step(struct vaai_io *io, loff_t pos, loff_t len)
{
	struct vaai_dev *vdev = io->vdev;
	struct se_dev_attrib *da = &vdev->dev.dev_attrib;
	bool thin = da->emulate_tpu || da->emulate_tpws;
	int ret;

	if ((io->unmap || thin) && vdev->lbprz)
		return vdev->store->unmap(vdev, pos, len);
	ret = vdev->store->zero(vdev, pos, len);
	if (ret == -EOPNOTSUPP) {
		u8 *zeros = kzalloc(VAAI_MIN_BLOCK_SIZE, GFP_NOIO);

		if (!zeros)
			return -ENOMEM;
		ret = vaai_ws_write_pattern(io, zeros, VAAI_MIN_BLOCK_SIZE,
					    pos, len);
		kfree(zeros);
	}
	return ret;
}

/* Zero [io->pos, +io->len), in steps that notice an abort. */
int vaai_ws_zero(struct vaai_io *io)
{
	loff_t pos = io->pos, end = io->pos + io->len;
	int ret = 0;

	for (; pos < end && !ret; pos += VAAI_WS_STEP_BYTES) {
		if (vaai_cmd_stopped(io->cmd))
			return -EINTR;
		ret = vaai_ws_zero_step(io, pos,
					min_t(loff_t, end - pos, VAAI_WS_STEP_BYTES));
	}
	return ret;
}

static void vaai_ws_work(struct vaai_io *io)
{
	struct vaai_dev *vdev = io->vdev;
	u32 bs = vdev->dev.dev_attrib.block_size;
	int ret;

	vaai_io_lock(io, io->pos, io->len, false);
	if (!io->buf || !memchr_inv(io->buf, 0, bs))
		ret = vaai_ws_zero(io);
	else
		ret = vaai_ws_write_pattern(io, io->buf, bs, io->pos, io->len);
	if (!ret)
		ret = vaai_dev_sync_if_write_through(vdev, io->pos, io->len);

	if (ret) {
		atomic64_inc(&vdev->stats.zero_failed);
	} else {
		atomic64_inc(&vdev->stats.zero);
		atomic64_add(io->len / bs, &vdev->stats.zero_blocks);
	}
	kfree(io->buf);
	vaai_io_done(io, ret);
}

static bool vaai_ws_is_metadata_op(struct vaai_io *io)
{
	u32 bs = io->vdev->dev.dev_attrib.block_size;

	return io->vdev->lbprz && (!io->buf || !memchr_inv(io->buf, 0, bs));
}

static sense_reason_t vaai_ws_execute(struct se_cmd *cmd)
{
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	struct vaai_io *io;
	void *buf = NULL;

	if (cmd->data_length) {
		buf = kmalloc(bs, GFP_KERNEL);
		if (!buf)
			return TCM_OUT_OF_RESOURCES;
		if (sg_copy_to_buffer(cmd->t_data_sg, cmd->t_data_nents, buf,
				      bs) != bs) {
			kfree(buf);
			return TCM_INVALID_FIELD_IN_COMMAND_IU;
		}
	}
	io = vaai_io_alloc(cmd);
	if (!io) {
		kfree(buf);
		return TCM_OUT_OF_RESOURCES;
	}
	io->buf = buf;
	io->write = true;
	io->unmap = cmd->t_task_cdb[1] & VAAI_WS_UNMAP;
	io->pos = (loff_t)cmd->t_task_lba * bs;
	io->len = (loff_t)cmd->t_task_nolb * bs;
	/*
	 * Zeros a store deallocates or zeroes in its metadata are quick (ESXi
	 * sends a million of them to eager-zero a disk): done here, as LIO
	 * core does its own.  Patterns, which write every block, go to the
	 * workqueue.
	 */
	if (vaai_ws_is_metadata_op(io))
		vaai_ws_work(io);
	else
		vaai_io_queue(io, vaai_ws_work);
	return TCM_NO_SENSE;
}

sense_reason_t vaai_ws_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_ws_cdb_check, VAAI_XFER_BLOCKS, true,
			      vaai_ws_execute);
}
