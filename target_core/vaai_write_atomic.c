// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: WRITE ATOMIC (16), SBC-4 5.48: the blocks are written
 * whole or not at all, where the store can promise that.
 *
 * A block device that makes untorn writes (REQ_ATOMIC: NVMe's atomic write
 * units, SCSI's own WRITE ATOMIC) gets each command as one such bio; the
 * Block Limits VPD page (vaai_vpd.c) reports the device's units in our
 * blocks.  A file store cannot: the kernel takes an untorn file write
 * (RWF_ATOMIC) only from a user-space buffer (generic_atomic_write_valid()
 * wants ITER_UBUF), never from a module's pages, so a file LUN, an older
 * kernel or a device without the units reports none and the command is not
 * supported there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/* The device's units in blocks of the LUN (all 0 when it has none). */
void vaai_write_atomic_limits(struct vaai_dev *vdev, struct vaai_cdb_lun *lun)
{
	u32 bs = lun->block_size;
	u32 max;

	lun->atomic_max = lun->atomic_align = lun->atomic_gran = 0;
	lun->atomic_boundary = 0;
	if (vdev->store != &vaai_bdev_ops || vdev->atomic_max < bs)
		return;
	/* one bio of page-sized segments (vaai_bdev.c) */
	max = min_t(u32, vdev->atomic_max, BIO_MAX_VECS * PAGE_SIZE);
	lun->atomic_max = min(max / bs, lun->hw_max_sectors);
	lun->atomic_gran = max(vdev->atomic_min / bs, 1U);
	lun->atomic_align = lun->atomic_gran;
	lun->atomic_boundary = vdev->atomic_boundary / bs;
}

bool vaai_write_atomic_supported(struct se_cmd *cmd)
{
	struct vaai_cdb_lun lun;

	vaai_cdb_lun_get(cmd, &lun);
	return lun.atomic_max;
}

/* vaai_execute_rw() sends it as one untorn bio (vaai_bdev.c) */
sense_reason_t vaai_write_atomic_parse(struct se_cmd *cmd)
{
	if (!vaai_write_atomic_supported(cmd))
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	return vaai_write_parse(cmd, vaai_write_atomic_cdb_check,
				cmd->t_task_cdb[1] & VAAI_FUA ? SCF_FUA : 0);
}
