// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: CDB parsing and dispatch.
 *
 * Commands this backend does not implement itself go to LIO's
 * sbc_parse_cdb() with our sbc_ops, which validates them and picks the
 * execute function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <scsi/scsi_proto.h>

#include "vaai.h"

static struct sbc_ops vaai_sbc_ops = {
	.execute_rw		= vaai_execute_rw,
	.execute_sync_cache	= vaai_execute_sync_cache,
};

/*
 * SBC-4 5.40: FUA asks that the write reach the medium before completion.
 * With the write cache disabled every write already does (SBC-4 4.15), so
 * the bit asks for nothing more; LIO core would refuse it as an invalid CDB
 * field, failing hosts that set it regardless of WCE.
 */
static void vaai_cdb_drop_redundant_fua(struct se_cmd *cmd)
{
	u8 *cdb = cmd->t_task_cdb;

	if (cmd->se_dev->dev_attrib.emulate_write_cache)
		return;
	switch (cdb[0]) {
	case WRITE_10:
	case WRITE_12:
	case WRITE_16:
		cdb[1] &= ~0x08;
		break;
	}
}

sense_reason_t vaai_parse_cdb(struct se_cmd *cmd)
{
	vaai_cdb_drop_redundant_fua(cmd);
	return sbc_parse_cdb(cmd, &vaai_sbc_ops);
}
