// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: CDB parsing and dispatch.
 *
 * Commands this backend does not implement itself go to LIO's
 * sbc_parse_cdb() with our sbc_ops, which validates them and picks the
 * execute function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "vaai.h"

static struct sbc_ops vaai_sbc_ops = {
	.execute_rw		= vaai_execute_rw,
	.execute_sync_cache	= vaai_execute_sync_cache,
};

sense_reason_t vaai_parse_cdb(struct se_cmd *cmd)
{
	return sbc_parse_cdb(cmd, &vaai_sbc_ops);
}
