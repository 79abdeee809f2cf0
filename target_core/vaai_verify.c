// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: VERIFY (10), (12) and (16) with BYTCHK, SBC-4 5.33.
 *
 * BYTCHK 01b: the data-out holds the blocks to compare with the medium;
 * BYTCHK 11b: it holds one block, compared with every block of the range.
 * A difference is a MISCOMPARE whose INFORMATION is the offset of the first
 * differing byte from the start of the range.  BYTCHK 00b (no data) checks
 * only the medium, which is always readable: GOOD.  All three are ours, so
 * that every one checks its fields alike (VRPROTECT, DPO): LIO core knows
 * only VERIFY (10) and (16), and ignores both fields.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/* The medium is read and compared this much at a time. */
#define VAAI_VERIFY_CHUNK	(1U << 20)

static void vaai_verify_work(struct vaai_io *io)
{
	struct se_cmd *cmd = io->cmd;
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	bool one = VAAI_VERIFY_BYTCHK(cmd->t_task_cdb[1]) == VAAI_BYTCHK_ONE_BLOCK;
	struct bio_vec *medium;
	size_t off, diff = io->len;
	unsigned int nr;
	u8 *block = NULL;
	int ret = 0;

	medium = vaai_pages_alloc(min_t(size_t, io->len, VAAI_VERIFY_CHUNK), &nr);
	if (one)
		block = kmalloc(bs, GFP_NOIO);
	if (!medium || (one && !block)) {
		ret = -ENOMEM;
		goto out;
	}
	if (one)
		sg_copy_to_buffer(cmd->t_data_sg, cmd->t_data_nents, block, bs);

	vaai_io_lock(io, io->pos, io->len, false);
	for (off = 0; off < io->len && diff == io->len; off += VAAI_VERIFY_CHUNK) {
		size_t n = min_t(size_t, io->len - off, VAAI_VERIFY_CHUNK), d;

		ret = io->vdev->store->xfer_bvec(io->vdev, false, io->pos + off,
						 medium, DIV_ROUND_UP(n, PAGE_SIZE),
						 n, false);
		if (ret)
			break;
		/* chunks are whole blocks: the pattern restarts at each */
		d = one ? vaai_compare_pattern(block, bs, medium, n) :
			  vaai_compare_sg(cmd->t_data_sg, cmd->t_data_nents, off,
					  medium, n);
		if (d != n)
			diff = off + d;
	}
out:
	kfree(block);
	if (medium)
		vaai_pages_free(medium, nr);
	if (!ret && diff != io->len) {
		vaai_io_finish(io);
		vaai_cmd_complete_miscompare(cmd, diff);
		return;
	}
	vaai_io_done(io, ret);
}

static sense_reason_t vaai_verify_execute(struct se_cmd *cmd)
{
	return vaai_execute_blocks(cmd, vaai_verify_work, false, false, false);
}

static sense_reason_t vaai_verify_medium_execute(struct se_cmd *cmd)
{
	vaai_cmd_complete(cmd, 0, false);
	return TCM_NO_SENSE;
}

sense_reason_t vaai_verify_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_verify_cdb_check, VAAI_XFER_BLOCKS, false,
			      VAAI_VERIFY_BYTCHK(cmd->t_task_cdb[1]) ?
			      vaai_verify_execute : vaai_verify_medium_execute);
}
