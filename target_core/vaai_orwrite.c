// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: ORWRITE (16), SBC-4.
 *
 * Each block becomes the bitwise OR of what the medium holds and what the
 * host sent, as one operation: under an exclusive lock on the blocks, as
 * COMPARE AND WRITE takes, the medium is read, the data OR-ed in and
 * written back, a chunk at a time.  No other command that reads or writes
 * those blocks runs in between, so concurrent ORWRITEs lose no bit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

#define VAAI_ORWRITE_FUA	0x08	/* CDB byte 1 */
/* The medium is read, OR-ed and written back this much at a time. */
#define VAAI_ORWRITE_CHUNK	(1U << 20)

static void vaai_orwrite_work(struct vaai_io *io)
{
	struct vaai_dev *vdev = io->vdev;
	struct se_cmd *cmd = io->cmd;
	struct bio_vec *medium;
	unsigned int nr;
	size_t off;
	int ret = 0;

	medium = vaai_pages_alloc(min_t(size_t, io->len, VAAI_ORWRITE_CHUNK), &nr);
	if (!medium) {
		vaai_io_done(io, -ENOMEM);
		return;
	}
	vaai_io_lock(io, io->pos, io->len, true);
	vaai_odx_touch(vdev, io->pos, io->len);
	for (off = 0; off < io->len && !ret; off += VAAI_ORWRITE_CHUNK) {
		size_t n = min_t(size_t, io->len - off, VAAI_ORWRITE_CHUNK);
		unsigned int pages = DIV_ROUND_UP(n, PAGE_SIZE);

		ret = vdev->store->xfer_bvec(vdev, false, io->pos + off, medium,
					     pages, n, false);
		if (ret) {
			io->write = false;	/* answered as the read error */
			break;
		}
		vaai_or_sg(cmd->t_data_sg, cmd->t_data_nents, off, medium, n);
		/* An aborted command must not write (LIO answers it). */
		if (vaai_cmd_stopped(cmd))
			ret = -EINTR;
		else
			ret = vdev->store->xfer_bvec(vdev, true, io->pos + off,
						     medium, pages, n, io->fua);
	}
	vaai_pages_free(medium, nr);
	vaai_io_done(io, ret);
}

static sense_reason_t vaai_orwrite_execute(struct se_cmd *cmd)
{
	bool fua = (cmd->t_task_cdb[1] & VAAI_ORWRITE_FUA) ||
		   !cmd->se_dev->dev_attrib.emulate_write_cache;

	return vaai_execute_blocks(cmd, vaai_orwrite_work, true, fua, false);
}

sense_reason_t vaai_orwrite_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_orwrite_cdb_check, VAAI_XFER_BLOCKS, true,
			      vaai_orwrite_execute);
}
