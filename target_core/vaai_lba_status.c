// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: GET LBA STATUS, SBC-4 5.8.
 *
 * One LBA status descriptor per extent from the starting LBA on, as the
 * store knows it: a file knows its holes (SEEK_DATA/SEEK_HOLE); a block
 * device does not, and reports "mapped or unknown" (status 0h); nor does a
 * fully provisioned LUN, whose every block is mapped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

static loff_t vaai_lbas_map(void *ctx, loff_t pos, loff_t len, bool *mapped)
{
	struct vaai_dev *vdev = ctx;

	return vdev->store->map_status(vdev, pos, len, mapped);
}

/*
 * A fully provisioned LUN (LBPME 0) has every LBA mapped (SBC-4 4.7.2),
 * whatever holes a sparse backing file has: they are its business, and
 * reporting them would tell a host that blocks are deallocated on a LUN
 * that says it never deallocates.
 */
static loff_t vaai_lbas_all_mapped(void *ctx, loff_t pos, loff_t len,
				   bool *mapped)
{
	*mapped = true;
	return len;
}

static void vaai_lbas_work(struct vaai_io *io)
{
	struct se_cmd *cmd = io->cmd;
	const struct vaai_lbas_req req = {
		.lba = cmd->t_task_lba,
		.nr_blocks = cmd->se_dev->transport->get_blocks(cmd->se_dev) + 1,
		.block_size = cmd->se_dev->dev_attrib.block_size,
		.alloc_len = io->len,
	};
	const struct se_dev_attrib *da = &cmd->se_dev->dev_attrib;
	bool thin = da->emulate_tpu || da->emulate_tpws;
	u32 len;
	u8 *buf;
	int ret;

	/* An initiator's ALLOCATION LENGTH may be far more than a reply holds. */
	buf = kzalloc(clamp_t(u32, req.alloc_len, VAAI_LBAS_HDR_LEN,
			      VAAI_LBAS_MAX_LEN), GFP_KERNEL);
	if (!buf) {
		vaai_io_done(io, -ENOMEM);
		return;
	}
	ret = vaai_lbas_reply_build(&req, buf, thin ? vaai_lbas_map :
				    vaai_lbas_all_mapped, io->vdev, &len);
	if (!ret)
		sg_copy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf, len);
	kfree(buf);
	if (ret) {
		vaai_io_done(io, ret);
		return;
	}
	vaai_io_done_len(io, len);
}

static sense_reason_t vaai_lbas_execute(struct se_cmd *cmd)
{
	struct vaai_io *io;

	if (!cmd->data_length) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	io = vaai_io_alloc(cmd);
	if (!io)
		return TCM_OUT_OF_RESOURCES;
	io->len = cmd->data_length;
	vaai_io_queue(io, vaai_lbas_work);
	return TCM_NO_SENSE;
}

sense_reason_t vaai_lba_status_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_lbas_cdb_check, VAAI_XFER_IN, false,
			      vaai_lbas_execute);
}
