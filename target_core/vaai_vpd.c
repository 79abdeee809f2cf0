// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the VPD pages we answer ourselves; LIO core answers the
 * rest of INQUIRY.
 *
 * Block Limits (B0h, SBC-4 6.6.4): LIO core hard-codes MAXIMUM COMPARE AND
 * WRITE LENGTH to 1; ours is what vaai_caw.c accepts.
 * Logical Block Provisioning (B2h, SBC-4 6.6.6): LIO core leaves
 * PROVISIONING TYPE at 0 ("not known or fully provisioned"), so a host that
 * reads it cannot tell our LUN is thin.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>
#include <target/target_core_fabric.h>

#include "vaai.h"

#define VAAI_VPD_BL		0xb0
#define VAAI_VPD_BL_LEN		64
#define VAAI_VPD_LBP		0xb2
#define VAAI_VPD_LBP_LEN	8

/* Byte 5 */
#define VAAI_LBP_LBPU		0x80
#define VAAI_LBP_LBPWS		0x40
#define VAAI_LBP_LBPWS10	0x20
#define VAAI_LBP_LBPRZ_ZEROS	0x04	/* LBPRZ field (bits 4:2) = 001b */
/* Byte 6, PROVISIONING TYPE */
#define VAAI_LBP_THIN		0x02

static void vaai_vpd_complete(struct se_cmd *cmd, const u8 *buf, u32 size)
{
	u32 len = min_t(u32, cmd->data_length, size);

	sg_copy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf, len);
	target_complete_cmd_with_length(cmd, SAM_STAT_GOOD, len);
}

static sense_reason_t vaai_vpd_bl_execute(struct se_cmd *cmd)
{
	struct se_device *dev = cmd->se_dev;
	struct se_dev_attrib *da = &dev->dev_attrib;
	u8 buf[VAAI_VPD_BL_LEN] = {};
	u32 mtl = 0;

	buf[0] = dev->transport->get_device_type(dev);
	buf[1] = VAAI_VPD_BL;
	put_unaligned_be16(VAAI_VPD_BL_LEN - 4, &buf[2]);
	buf[4] = 0x01;					/* WSNZ */
	if (da->emulate_caw)
		buf[5] = VAAI_CAW_MAX_BLOCKS;
	put_unaligned_be16(1, &buf[6]);			/* OPTIMAL TRANSFER LENGTH GRANULARITY */
	/* A fabric that caps its scatterlists caps the transfer too. */
	if (cmd->se_tfo->max_data_sg_nents)
		mtl = cmd->se_tfo->max_data_sg_nents * PAGE_SIZE / da->block_size;
	put_unaligned_be32(min_not_zero(mtl, da->hw_max_sectors), &buf[8]);
	put_unaligned_be32(da->optimal_sectors, &buf[12]);
	if (da->emulate_tpu) {
		put_unaligned_be32(da->max_unmap_lba_count, &buf[20]);
		put_unaligned_be32(da->max_unmap_block_desc_count, &buf[24]);
		put_unaligned_be32(da->unmap_granularity, &buf[28]);
		put_unaligned_be32(da->unmap_granularity_alignment, &buf[32]);
		if (da->unmap_granularity_alignment)
			buf[32] |= 0x80;			/* UGAVALID */
	}
	put_unaligned_be64(da->max_write_same_len, &buf[36]);

	vaai_vpd_complete(cmd, buf, sizeof(buf));
	return TCM_NO_SENSE;
}

static sense_reason_t vaai_vpd_lbp_execute(struct se_cmd *cmd)
{
	struct se_dev_attrib *da = &cmd->se_dev->dev_attrib;
	u8 buf[VAAI_VPD_LBP_LEN] = {};

	buf[0] = cmd->se_dev->transport->get_device_type(cmd->se_dev);
	buf[1] = VAAI_VPD_LBP;
	put_unaligned_be16(VAAI_VPD_LBP_LEN - 4, &buf[2]);
	if (da->emulate_tpu)
		buf[5] |= VAAI_LBP_LBPU;
	if (da->emulate_tpws)
		buf[5] |= VAAI_LBP_LBPWS | VAAI_LBP_LBPWS10;
	if (da->unmap_zeroes_data)
		buf[5] |= VAAI_LBP_LBPRZ_ZEROS;
	if (da->emulate_tpu || da->emulate_tpws)
		buf[6] = VAAI_LBP_THIN;

	vaai_vpd_complete(cmd, buf, sizeof(buf));
	return TCM_NO_SENSE;
}

/* INQUIRY with EVPD set and a page we build; false: LIO core's. */
bool vaai_vpd_match(const u8 *cdb)
{
	return (cdb[1] & 0x01) &&
	       (cdb[2] == VAAI_VPD_BL || cdb[2] == VAAI_VPD_LBP);
}

sense_reason_t vaai_vpd_parse(struct se_cmd *cmd)
{
	sense_reason_t ret;

	ret = vaai_cdb_size_check(cmd, get_unaligned_be16(&cmd->t_task_cdb[3]),
				  false);
	if (ret)
		return ret;
	cmd->execute_cmd = cmd->t_task_cdb[2] == VAAI_VPD_BL ?
			   vaai_vpd_bl_execute : vaai_vpd_lbp_execute;
	return TCM_NO_SENSE;
}
