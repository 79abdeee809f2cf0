// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: REPORT SUPPORTED OPERATION CODES, SPC-4 6.35.
 *
 * LIO core (6.1) does not implement it.  The table (vaai_opcodes_data.c)
 * lists every command a vaai LUN accepts, that is every CDB that reaches an
 * execute function, whether our own parsers pick it or LIO's
 * sbc_parse_cdb() and spc_parse_cdb() do; a command that a device attribute
 * turns off is listed only while the attribute lets it through: this file
 * says which are on.  The dispatcher asks the same table which service
 * actions an opcode has (vaai_opcodes_sa_enabled()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/* LIO keeps the ALUA access type as INQUIRY's TPGS bits: 10b, explicit. */
#define VAAI_TPGS_EXPLICIT	0x20

/* SET TARGET PORT GROUPS: LIO refuses it unless the port group allows it. */
static bool vaai_opc_explicit_alua(struct se_cmd *cmd)
{
	struct t10_alua_tg_pt_gp *gp;
	bool ret;

	if (!cmd->se_lun)
		return false;
	rcu_read_lock();
	gp = rcu_dereference(cmd->se_lun->lun_tg_pt_gp);
	ret = gp && (gp->tg_pt_gp_alua_access_type & VAAI_TPGS_EXPLICIT);
	rcu_read_unlock();
	return ret;
}

/* REPORT REFERRALS: LIO refuses it until an LBA map is configured. */
static bool vaai_opc_referrals(struct se_cmd *cmd)
{
	return !list_empty(&cmd->se_dev->t10_alua.lba_map_list);
}

/* The VAAI_OPC_* features enabled for cmd's LUN, seen through cmd. */
static u32 vaai_opcodes_features(struct se_cmd *cmd)
{
	struct se_dev_attrib *da = &cmd->se_dev->dev_attrib;

	return (da->emulate_caw ? VAAI_OPC_CAW : 0) |
	       (da->emulate_tpu ? VAAI_OPC_TPU : 0) |
	       (da->emulate_3pc ? VAAI_OPC_3PC : 0) |
	       (da->emulate_pr ? VAAI_OPC_PR : 0) |
	       (vaai_opc_explicit_alua(cmd) ? VAAI_OPC_ALUA : 0) |
	       (vaai_opc_referrals(cmd) ? VAAI_OPC_REFERRALS : 0) |
	       (vaai_dpofua(da) ? VAAI_OPC_DPOFUA : 0) |
	       (vaai_write_atomic_supported(cmd) ? VAAI_OPC_ATOMIC : 0);
}

/*
 * The CDB's opcode has service actions and some of them are enabled: an
 * unknown one is a bad field, not an unknown command.
 */
bool vaai_opcodes_sa_enabled(struct se_cmd *cmd)
{
	return vaai_opcodes_sa_listed(cmd->t_task_cdb[0],
				      vaai_opcodes_features(cmd));
}

static void vaai_opcodes_put(void *ctx, const void *buf, u32 len, u32 off)
{
	struct se_cmd *cmd = ctx;

	sg_pcopy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf, len, off);
}

static sense_reason_t vaai_opcodes_execute(struct se_cmd *cmd)
{
	const struct vaai_opcodes_out out = {
		.alloc_len = cmd->data_length,
		.put = vaai_opcodes_put,
		.ctx = cmd,
	};
	struct vaai_fault f;
	u32 len;

	f = vaai_opcodes_report(cmd->t_task_cdb, vaai_opcodes_features(cmd),
				&out, &len);
	if (f.key)
		vaai_cmd_complete_fault(cmd, &f);
	else
		vaai_cmd_done_len(cmd, SAM_STAT_GOOD, len);
	return TCM_NO_SENSE;
}

bool vaai_opcodes_match(const u8 *cdb)
{
	return cdb[0] == MAINTENANCE_IN &&
	       (cdb[1] & 0x1f) == MI_REPORT_SUPPORTED_OPERATION_CODES;
}

sense_reason_t vaai_opcodes_parse(struct se_cmd *cmd)
{
	sense_reason_t ret;

	ret = vaai_cdb_size_check(cmd, get_unaligned_be32(&cmd->t_task_cdb[6]),
				  false);
	if (ret)
		return ret;
	cmd->execute_cmd = vaai_opcodes_execute;
	return TCM_NO_SENSE;
}
