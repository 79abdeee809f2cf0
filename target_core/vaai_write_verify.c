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

sense_reason_t vaai_write_verify_parse(struct se_cmd *cmd)
{
	return vaai_write_parse(cmd, vaai_write_verify_cdb_check, SCF_FUA);
}
