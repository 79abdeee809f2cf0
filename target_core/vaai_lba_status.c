// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: GET LBA STATUS, SBC-4 5.8.
 *
 * One LBA status descriptor per extent from the starting LBA on, as the
 * store knows it: a file knows its holes (SEEK_DATA/SEEK_HOLE); a block
 * device does not, and reports "mapped or unknown" (status 0h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

#define VAAI_LBAS_HDR_LEN	8
#define VAAI_LBAS_DESC_LEN	16
/* Bounded work per command, whatever the allocation length says. */
#define VAAI_LBAS_MAX_DESCS	1024

/* SBC-4 table 43: PROVISIONING STATUS */
#define VAAI_LBAS_MAPPED	0x0	/* mapped or unknown */
#define VAAI_LBAS_DEALLOCATED	0x1

/*
 * Next extent from block lba: its state and end (exclusive), in blocks.  A
 * block that is partly backed counts as mapped.
 */
static int vaai_lbas_extent(struct vaai_dev *vdev, u64 lba, u64 nr_blocks,
			    bool *mapped, u64 *end)
{
	u32 bs = vdev->dev.dev_attrib.block_size;
	loff_t pos = (loff_t)lba * bs;
	loff_t len;

	len = vdev->store->map_status(vdev, pos, (loff_t)(nr_blocks - lba) * bs,
				      mapped);
	if (len < 0)
		return len;
	if (*mapped) {
		*end = DIV_ROUND_UP_ULL(pos + len, bs);
	} else {
		*end = div_u64(pos + len, bs);
		if (*end == lba) {
			*mapped = true;
			*end = lba + 1;
		}
	}
	*end = min(*end, nr_blocks);
	return 0;
}

static void vaai_lbas_work(struct vaai_io *io)
{
	struct se_cmd *cmd = io->cmd;
	struct vaai_dev *vdev = io->vdev;
	u64 nr_blocks = cmd->se_dev->transport->get_blocks(cmd->se_dev) + 1;
	u32 len = io->len;
	unsigned int n = 0, max;
	u64 lba = cmd->t_task_lba;
	u8 *buf;
	int ret = 0;

	buf = kzalloc(max_t(u32, len, VAAI_LBAS_HDR_LEN), GFP_KERNEL);
	if (!buf) {
		vaai_io_done(io, -ENOMEM);
		return;
	}
	max = len > VAAI_LBAS_HDR_LEN ?
	      (len - VAAI_LBAS_HDR_LEN) / VAAI_LBAS_DESC_LEN : 0;
	max = min_t(unsigned int, max, VAAI_LBAS_MAX_DESCS);

	while (n < max && lba < nr_blocks) {
		u8 *d = buf + VAAI_LBAS_HDR_LEN + n * VAAI_LBAS_DESC_LEN;
		bool mapped;
		u64 end;

		ret = vaai_lbas_extent(vdev, lba, nr_blocks, &mapped, &end);
		if (ret)
			break;
		/* NUMBER OF LOGICAL BLOCKS is 32 bits wide. */
		end = min_t(u64, end, lba + U32_MAX);
		put_unaligned_be64(lba, &d[0]);
		put_unaligned_be32(end - lba, &d[8]);
		d[12] = mapped ? VAAI_LBAS_MAPPED : VAAI_LBAS_DEALLOCATED;
		lba = end;
		n++;
	}
	if (!ret) {
		/* PARAMETER DATA LENGTH: the bytes that follow it. */
		put_unaligned_be32(VAAI_LBAS_HDR_LEN - 4 + n * VAAI_LBAS_DESC_LEN, buf);
		len = min_t(u32, len, VAAI_LBAS_HDR_LEN + n * VAAI_LBAS_DESC_LEN);
		sg_copy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf, len);
	}
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
		target_complete_cmd(cmd, SAM_STAT_GOOD);
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
	struct vaai_cdb_lun lun;
	struct vaai_cdb_args a;
	sense_reason_t ret;

	vaai_cdb_lun_get(cmd, &lun);
	ret = vaai_cdb_reason(vaai_lbas_cdb_check(cmd->t_task_cdb, &lun, &a));
	if (ret)
		return ret;
	ret = vaai_cdb_size_check(cmd, a.size, false);
	if (ret)
		return ret;
	cmd->t_task_lba = a.lba;
	cmd->execute_cmd = vaai_lbas_execute;
	return TCM_NO_SENSE;
}
