// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the Third-party Copy VPD page (8Fh, SPC-4 7.8.17),
 * which tells a host what EXTENDED COPY can do here.  Every figure in it is
 * a limit vaai_xcopy.c enforces; LIO core does not have this page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <scsi/scsi_proto.h>
#include <asm/unaligned.h>

#include "vaai_xcopy.h"

#define VAAI_VPD_TPC_MAX	128

/* Third-party copy descriptor types (SPC-4 7.8.17.1). */
#define VAAI_TPC_COMMANDS	0x0001
#define VAAI_TPC_PARAMS		0x0004
#define VAAI_TPC_DESCRIPTORS	0x0008
#define VAAI_TPC_CSCD_IDS	0x000c
#define VAAI_TPC_GENERAL	0x8001

/*
 * Supported Commands: EXTENDED COPY (LID1) and the RECEIVE COPY RESULTS
 * service actions vaai_copy_results.c answers, as opcode, count, actions.
 */
static const u8 vaai_tpc_commands[] = {
	EXTENDED_COPY, 1, 0x00,
	RECEIVE_COPY_RESULTS, 3, 0x00, 0x03, 0x04,
};

/* Start a descriptor of len data bytes at off; the offset after it, padded. */
static unsigned int vaai_tpc_desc(u8 *buf, unsigned int off, u16 type,
				  unsigned int len)
{
	len = round_up(len, 4);
	put_unaligned_be16(type, &buf[off]);
	put_unaligned_be16(len, &buf[off + 2]);
	return off + 4 + len;
}

sense_reason_t vaai_vpd_tpc_execute(struct se_cmd *cmd)
{
	struct se_device *dev = cmd->se_dev;
	u8 buf[VAAI_VPD_TPC_MAX] = {};
	unsigned int off = 4, d;

	if (!dev->dev_attrib.emulate_3pc)
		return TCM_INVALID_CDB_FIELD;
	buf[0] = dev->transport->get_device_type(dev);
	buf[1] = VAAI_VPD_TPC;

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_COMMANDS,
			    1 + sizeof(vaai_tpc_commands));
	buf[d] = sizeof(vaai_tpc_commands);
	memcpy(&buf[d + 1], vaai_tpc_commands, sizeof(vaai_tpc_commands));

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_PARAMS, 0x1c);
	put_unaligned_be16(VAAI_XCOPY_MAX_CSCDS, &buf[d + 4]);
	put_unaligned_be16(VAAI_XCOPY_MAX_SEGS, &buf[d + 6]);
	put_unaligned_be32(VAAI_XCOPY_MAX_DESC_LEN, &buf[d + 8]);
	/* MAXIMUM INLINE DATA LENGTH: 0 */

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_DESCRIPTORS, 3);
	buf[d] = 2;
	buf[d + 1] = VAAI_SEG_B2B;
	buf[d + 2] = VAAI_CSCD_ID;

	/* Supported CSCD IDs: none (no 0xF800-0xFFFF shorthand) */
	off = vaai_tpc_desc(buf, off, VAAI_TPC_CSCD_IDS, 2);

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_GENERAL, 0x20);
	put_unaligned_be32(VAAI_XCOPY_MAX_RUNNING, &buf[d]);
	put_unaligned_be32(VAAI_XCOPY_MAX_RUNNING, &buf[d + 4]);
	put_unaligned_be32(VAAI_XCOPY_MAX_SEG_BYTES, &buf[d + 8]);
	buf[d + 12] = ilog2(dev->dev_attrib.block_size);

	if (WARN_ON_ONCE(off > sizeof(buf)))
		return TCM_LOGICAL_UNIT_COMMUNICATION_FAILURE;
	put_unaligned_be16(off - 4, &buf[2]);
	vaai_cmd_complete_data(cmd, buf, off);
	return TCM_NO_SENSE;
}
