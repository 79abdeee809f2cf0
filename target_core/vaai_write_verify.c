// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: WRITE AND VERIFY (10), (12) and (16), SBC-4.
 *
 * The blocks are written through to the medium whatever the write cache,
 * and GOOD means the store took them there: what verifying the medium
 * asks.  With BYTCHK 01b the data to compare is the data just written, so
 * there is nothing more to do.  All three are ours, so that every one
 * checks its fields alike: LIO core knows only (10) and (16), takes them
 * for plain writes and accepts FUA in their reserved bit 3.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <scsi/scsi_proto.h>

#include "vaai.h"

static sense_reason_t vaai_write_verify_execute(struct se_cmd *cmd)
{
	return vaai_execute_rw(cmd, cmd->t_data_sg, cmd->t_data_nents,
			       DMA_TO_DEVICE);
}

sense_reason_t vaai_write_verify_parse(struct se_cmd *cmd)
{
	struct vaai_cdb_lun lun;
	struct vaai_cdb_args a;
	sense_reason_t ret;

	vaai_cdb_lun_get(cmd, &lun);
	ret = vaai_cdb_accept(cmd, vaai_write_verify_cdb_check(cmd->t_task_cdb,
							       &lun, &a),
			      &a, true, vaai_write_verify_execute);
	/* an LBA-addressed data transfer, as LIO core marks a WRITE */
	if (!ret)
		cmd->se_cmd_flags |= SCF_SCSI_DATA_CDB | SCF_FUA;
	return ret;
}
