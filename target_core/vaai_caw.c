// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: COMPARE AND WRITE, SBC-4 5.3 (VMware's ATS).
 *
 * The data-out buffer holds NUMBER OF LOGICAL BLOCKS of verify data, then as
 * many of write data.  Under an exclusive lock on exactly those blocks the
 * medium is read and compared with the verify data; only if all of it
 * matches is the write data written.  Other COMPARE AND WRITEs on other
 * blocks run in parallel; reads and writes of the same blocks wait.
 * vaai_caw_work() runs in the context that executes the command.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

#define VAAI_CAW_FUA		0x08	/* CDB byte 1 */

/*
 * bio_vecs over the write half of the data-out: bytes [skip, skip + len).
 * A heartbeat's few pages are described in io's own bio_vecs.
 */
static struct bio_vec *vaai_caw_write_bvecs(struct vaai_io *io, size_t skip,
					    size_t len, unsigned int *nr)
{
	struct se_cmd *cmd = io->cmd;
	struct scatterlist *sg;
	struct bio_vec *bv;
	unsigned int i;

	if (cmd->t_data_nents <= ARRAY_SIZE(io->inline_bvec))
		bv = io->inline_bvec;
	else
		bv = kmalloc_array(cmd->t_data_nents, sizeof(*bv), GFP_NOIO);
	if (!bv)
		return NULL;
	*nr = 0;
	for_each_sg(cmd->t_data_sg, sg, cmd->t_data_nents, i) {
		size_t from = 0, n = sg->length;

		if (skip >= n) {
			skip -= n;
			continue;
		}
		from = skip;
		skip = 0;
		n = min(n - from, len);
		bv[*nr].bv_page = sg_page(sg);
		bv[*nr].bv_offset = sg->offset + from;
		bv[*nr].bv_len = n;
		(*nr)++;
		len -= n;
		if (!len)
			break;
	}
	return bv;
}

static int vaai_caw_write(struct vaai_io *io)
{
	struct bio_vec *bv;
	unsigned int nr;
	int ret;

	bv = vaai_caw_write_bvecs(io, io->len, io->len, &nr);
	if (!bv)
		return -ENOMEM;
	ret = io->vdev->store->xfer_bvec(io->vdev, true, io->pos, bv, nr,
					 io->len, io->fua);
	if (bv != io->inline_bvec)
		kfree(bv);
	return ret;
}

static void vaai_caw_work(struct vaai_io *io)
{
	struct vaai_dev *vdev = io->vdev;
	struct se_cmd *cmd = io->cmd;
	struct vaai_buf medium;
	size_t diff;
	int ret;

	ret = vaai_buf_alloc(vdev, &medium, io->len);
	if (ret)
		goto out_done;
	vaai_io_lock(io, io->pos, io->len, true);
	ret = vdev->store->xfer_bvec(vdev, false, io->pos, medium.bv, medium.nr,
				     io->len, false);
	if (ret) {
		io->write = false;	/* nothing written: a read error */
		goto out_free;
	}

	diff = vaai_compare_sg(cmd->t_data_sg, cmd->t_data_nents, 0, medium.bv,
			       io->len);
	if (diff != io->len) {
		vaai_buf_free(&medium);
		atomic64_inc(&vdev->stats.ats_miscompare);
		vaai_io_finish(io);
		vaai_cmd_complete_miscompare(cmd, diff);
		return;
	}
	/* An aborted command must not write (LIO answers it, not us). */
	if (vaai_cmd_stopped(cmd)) {
		ret = -EINTR;
	} else {
		vaai_odx_touch(vdev, io->pos, io->len);
		ret = vaai_caw_write(io);
	}

out_free:
	vaai_buf_free(&medium);
out_done:
	if (ret)
		atomic64_inc(&vdev->stats.ats_failed);
	else
		atomic64_inc(&vdev->stats.ats);
	vaai_io_done(io, ret);
}

static sense_reason_t vaai_caw_execute(struct se_cmd *cmd)
{
	bool fua = (cmd->t_task_cdb[1] & VAAI_CAW_FUA) ||
		   !cmd->se_dev->dev_attrib.emulate_write_cache;

	/*
	 * SBC-4 5.3: 0 blocks reads, compares and writes nothing.  At most
	 * 255 blocks: short enough to run here, in the context LIO executes
	 * commands in, which spares a heartbeat a trip through the workqueue.
	 */
	return vaai_execute_blocks(cmd, vaai_caw_work, true, fua, true);
}

sense_reason_t vaai_caw_parse(struct se_cmd *cmd)
{
	if (!cmd->se_dev->dev_attrib.emulate_caw)
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	return vaai_cdb_parse(cmd, vaai_caw_cdb_check, VAAI_XFER_BLOCKS, true,
			      vaai_caw_execute);
}
