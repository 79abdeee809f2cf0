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
 * Supported VPD Pages (00h, SPC-4 7.8.14): LIO core's list, plus the
 * Third-party Copy page (8Fh, vaai_vpd_tpc.c) it does not have.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <scsi/scsi_proto.h>
#include <target/target_core_fabric.h>

#include "vaai.h"

#define VAAI_VPD_SUPPORTED	0x00
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

/* MAXIMUM TRANSFER LENGTH: ours, or less where the fabric caps its lists. */
u32 vaai_cmd_max_transfer(struct se_cmd *cmd)
{
	struct se_dev_attrib *da = &cmd->se_dev->dev_attrib;
	u32 mtl = 0;

	if (cmd->se_tfo->max_data_sg_nents)
		mtl = cmd->se_tfo->max_data_sg_nents * PAGE_SIZE / da->block_size;
	return min_not_zero(mtl, da->hw_max_sectors);
}

static sense_reason_t vaai_vpd_bl_execute(struct se_cmd *cmd)
{
	struct se_device *dev = cmd->se_dev;
	struct se_dev_attrib *da = &dev->dev_attrib;
	u8 buf[VAAI_VPD_BL_LEN] = {};
	u32 mtl = vaai_cmd_max_transfer(cmd);
	struct vaai_cdb_lun lun;

	buf[0] = dev->transport->get_device_type(dev);
	buf[1] = VAAI_VPD_BL;
	put_unaligned_be16(VAAI_VPD_BL_LEN - 4, &buf[2]);
	buf[4] = 0x01;					/* WSNZ */
	if (da->emulate_caw)
		buf[5] = VAAI_CAW_MAX_BLOCKS;
	put_unaligned_be16(1, &buf[6]);			/* OPTIMAL TRANSFER LENGTH GRANULARITY */
	put_unaligned_be32(mtl, &buf[8]);
	/*
	 * No more than the maximum (SBC-4 6.6.4): LIO core sets the optimum
	 * once, in blocks of the size then; a larger block size or a fabric
	 * that caps its scatterlists lowers the maximum under it.
	 */
	put_unaligned_be32(min(da->optimal_sectors, mtl), &buf[12]);
	if (da->emulate_tpu) {
		put_unaligned_be32(da->max_unmap_lba_count, &buf[20]);
		put_unaligned_be32(da->max_unmap_block_desc_count, &buf[24]);
		put_unaligned_be32(da->unmap_granularity, &buf[28]);
		put_unaligned_be32(da->unmap_granularity_alignment, &buf[32]);
		if (da->unmap_granularity_alignment)
			buf[32] |= 0x80;			/* UGAVALID */
	}
	put_unaligned_be64(da->max_write_same_len, &buf[36]);
	/* WRITE ATOMIC (16): no boundary sizes (bytes 56-63 stay 0) */
	lun.block_size = da->block_size;
	vaai_write_atomic_limits(cmd, &lun);
	put_unaligned_be32(lun.atomic_max, &buf[44]);
	put_unaligned_be32(lun.atomic_align, &buf[48]);
	put_unaligned_be32(lun.atomic_gran, &buf[52]);

	vaai_cmd_complete_data(cmd, buf, sizeof(buf));
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
	/*
	 * THRESHOLD EXPONENT: nonzero says the LUN has provisioning thresholds,
	 * and a file store has the soft threshold (vaai_threshold.c), whose
	 * unit attention a host must not get from a LUN that says it has none.
	 * Sets of 1 MiB; the threshold itself is set in configfs, as there is
	 * no Logical Block Provisioning mode page (MODE SENSE is LIO core's).
	 */
	if (buf[6] == VAAI_LBP_THIN && to_vaai_dev(cmd->se_dev)->store == &vaai_file_ops)
		buf[4] = ilog2(SZ_1M / da->block_size);

	vaai_cmd_complete_data(cmd, buf, sizeof(buf));
	return TCM_NO_SENSE;
}

/*
 * The pages LIO core answers (spc_emulate_evpd_00 lists them), and ours, in
 * ascending order; only once the unit serial number is set, as LIO does.
 */
static sense_reason_t vaai_vpd_supported_execute(struct se_cmd *cmd)
{
	static const u8 lio_pages[] = { 0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1,
					0xb2, 0xb3 };
	struct se_device *dev = cmd->se_dev;
	u8 buf[4 + ARRAY_SIZE(lio_pages) + 1] = {};
	unsigned int i, n = 4;

	buf[0] = dev->transport->get_device_type(dev);
	buf[1] = VAAI_VPD_SUPPORTED;
	if (dev->dev_flags & DF_EMULATED_VPD_UNIT_SERIAL) {
		for (i = 0; i < ARRAY_SIZE(lio_pages); i++) {
			/* 8Fh goes between 86h and B0h */
			if (lio_pages[i] == VAAI_VPD_BL && dev->dev_attrib.emulate_3pc)
				buf[n++] = VAAI_VPD_TPC;
			buf[n++] = lio_pages[i];
		}
	}
	buf[3] = n - 4;
	vaai_cmd_complete_data(cmd, buf, n);
	return TCM_NO_SENSE;
}

static const struct {
	u8 page;
	sense_reason_t (*execute)(struct se_cmd *cmd);
} vaai_vpd_pages[] = {
	{ VAAI_VPD_SUPPORTED,	vaai_vpd_supported_execute },
	{ VAAI_VPD_TPC,		vaai_vpd_tpc_execute },
	{ VAAI_VPD_BL,		vaai_vpd_bl_execute },
	{ VAAI_VPD_LBP,		vaai_vpd_lbp_execute },
};

/* INQUIRY with EVPD set and a page we build; false: LIO core's. */
bool vaai_vpd_match(const u8 *cdb)
{
	unsigned int i;

	if (!(cdb[1] & 0x01))
		return false;
	for (i = 0; i < ARRAY_SIZE(vaai_vpd_pages); i++)
		if (vaai_vpd_pages[i].page == cdb[2])
			return true;
	return false;
}

sense_reason_t vaai_vpd_parse(struct se_cmd *cmd)
{
	unsigned int i;
	sense_reason_t ret;

	ret = vaai_cdb_size_check(cmd, get_unaligned_be16(&cmd->t_task_cdb[3]),
				  false);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(vaai_vpd_pages); i++)
		if (vaai_vpd_pages[i].page == cmd->t_task_cdb[2])
			cmd->execute_cmd = vaai_vpd_pages[i].execute;
	return TCM_NO_SENSE;
}
