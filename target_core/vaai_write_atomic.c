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
#include <linux/log2.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/*
 * The device's units in blocks of the LUN (all 0 when it has none), read
 * from its queue at each command, so that a device whose limits change is
 * never sent a write it would refuse.  Where untorn writes may not cross a
 * boundary, the alignment is the maximum (a power of two that divides the
 * boundary), so no write the Block Limits page allows crosses one.
 */
void vaai_write_atomic_limits(struct se_cmd *cmd, struct vaai_cdb_lun *lun)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	u32 bs = lun->block_size;
	u32 umin, umax, boundary;
	bool units;

	lun->atomic_max = lun->atomic_align = lun->atomic_gran = 0;
	lun->atomic_boundary = 0;
	/* a closed store has none (vaai_online.c) */
	if (!vaai_store_get(vdev))
		return;
	units = vdev->store == &vaai_bdev_ops &&
		vaai_bdev_atomic_units(vdev->bdev.bdev, &umin, &umax, &boundary);
	vaai_store_put(vdev);
	if (!units)
		return;
	/* one bio of page-sized segments (vaai_bdev.c), what the fabric carries */
	umax = min_t(u32, umax, BIO_MAX_VECS * PAGE_SIZE);
	if (boundary)
		umax = min(umax, boundary);
	if (umax < bs || umin > umax)
		return;
	lun->atomic_max = min(umax / bs, vaai_cmd_max_transfer(cmd));
	lun->atomic_max = rounddown_pow_of_two(lun->atomic_max);
	lun->atomic_gran = max(umin / bs, 1U);
	lun->atomic_align = boundary ? lun->atomic_max : lun->atomic_gran;
	lun->atomic_boundary = boundary / bs;
	if (lun->atomic_max < lun->atomic_gran)
		lun->atomic_max = lun->atomic_align = lun->atomic_gran = 0;
}

bool vaai_write_atomic_supported(struct se_cmd *cmd)
{
	struct vaai_cdb_lun lun = { .block_size = cmd->se_dev->dev_attrib.block_size };

	vaai_write_atomic_limits(cmd, &lun);
	return lun.atomic_max;
}

/* vaai_execute_rw() sends it as one untorn bio (vaai_bdev.c) */
sense_reason_t vaai_write_atomic_parse(struct se_cmd *cmd)
{
	/* atomic_max 0 refuses every length but 0: say not supported first */
	if (!vaai_write_atomic_supported(cmd))
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	return vaai_write_parse(cmd, vaai_write_atomic_cdb_check,
				cmd->t_task_cdb[1] & VAAI_FUA ? SCF_FUA : 0);
}
