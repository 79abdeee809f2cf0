// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: CDB parsing and dispatch.
 *
 * The commands this backend implements itself are found in a table and
 * parsed by their own file; everything else goes to LIO's sbc_parse_cdb()
 * with our execute hooks, which validates it and picks the execute function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

static struct vaai_exec_ops vaai_ops = {
	.execute_rw		= vaai_execute_rw_online,
	.execute_sync_cache	= vaai_execute_sync_cache_online,
};

/*
 * The commands we parse ourselves, indexed by operation code: the lookup
 * every CDB makes, READ and WRITE included, is one load.  An opcode with no
 * parse function is LIO core's; one opcode has one entry, so service
 * actions of one opcode share its match and parse.  A command that reads
 * or writes the store runs with it held (vaai_online.c).
 */
struct vaai_cdb_handler {
	/* the rest of the CDB says it is ours; NULL: the opcode does */
	bool (*match)(const u8 *cdb);
	sense_reason_t (*parse)(struct se_cmd *cmd);
	bool store;
};

static bool vaai_cdb_is_get_lba_status(const u8 *cdb)
{
	return (cdb[1] & 0x1f) == SAI_GET_LBA_STATUS;
}

/* MAINTENANCE IN: REPORT SUPPORTED OPERATION CODES, REPORT TARGET PORT GROUPS */
static bool vaai_cdb_is_maint_in_ours(const u8 *cdb)
{
	return vaai_opcodes_match(cdb) || vaai_rtpg_match(cdb);
}

static sense_reason_t vaai_maint_in_parse(struct se_cmd *cmd)
{
	if (vaai_rtpg_match(cmd->t_task_cdb))
		return vaai_rtpg_parse(cmd);
	return vaai_opcodes_parse(cmd);
}

static const struct vaai_cdb_handler vaai_cdb_handlers[256] = {
	[INQUIRY]		= { vaai_vpd_match,	vaai_vpd_parse },
	[COMPARE_AND_WRITE]	= { NULL,		vaai_caw_parse, true },
	[VERIFY]		= { NULL,		vaai_verify_parse, true },
	[VERIFY_12]		= { NULL,		vaai_verify_parse, true },
	[VERIFY_16]		= { NULL,		vaai_verify_parse, true },
	[WRITE_VERIFY]		= { NULL,		vaai_write_verify_parse, true },
	[WRITE_VERIFY_12]	= { NULL,		vaai_write_verify_parse, true },
	[WRITE_VERIFY_16]	= { NULL,		vaai_write_verify_parse, true },
	[ORWRITE_16]		= { NULL,		vaai_orwrite_parse, true },
	[WRITE_ATOMIC_16]	= { NULL,		vaai_write_atomic_parse, true },
	[PRE_FETCH]		= { NULL,		vaai_prefetch_parse, true },
	[PRE_FETCH_16]		= { NULL,		vaai_prefetch_parse, true },
	[WRITE_SAME]		= { NULL,		vaai_ws_parse, true },
	[WRITE_SAME_16]		= { NULL,		vaai_ws_parse, true },
	[UNMAP]			= { NULL,		vaai_unmap_parse, true },
	[SERVICE_ACTION_IN_16]	= { vaai_cdb_is_get_lba_status,
				    vaai_lba_status_parse, true },
	[EXTENDED_COPY]		= { NULL,		vaai_xcopy_parse, true },
	[RECEIVE_COPY_RESULTS]	= { NULL,		vaai_rcr_parse },
	[MAINTENANCE_IN]	= { vaai_cdb_is_maint_in_ours,
				    vaai_maint_in_parse },
};

static const struct vaai_cdb_handler *vaai_cdb_lookup(const u8 *cdb)
{
	const struct vaai_cdb_handler *h = &vaai_cdb_handlers[cdb[0]];

	if (!h->parse || (h->match && !h->match(cdb)))
		return NULL;
	return h;
}

/*
 * The limits LIO core reports in the Block Limits VPD page are in logical
 * blocks; they follow the block size, which may change until the LUN is
 * exported.  The parsers read the same dev_attrib fields.
 */
void vaai_dev_set_limits(struct vaai_dev *vdev)
{
	struct se_dev_attrib *da = &vdev->dev.dev_attrib;
	u32 bs = da->block_size ? da->block_size : da->hw_block_size;
	u32 unit = vdev->unmap_unit;

	vdev->limits_bs = bs;
	da->hw_max_sectors = VAAI_MAX_IO_BYTES / bs;
	da->max_write_same_len = VAAI_MAX_WRITE_SAME_BYTES / bs;
	if (!unit)
		return;
	/* SBC-4 6.6.4: VMFS-6 needs a granularity that divides 1 MiB. */
	if (unit < bs)
		unit = bs;
	if (unit > VAAI_UNMAP_UNIT_BYTES || VAAI_UNMAP_UNIT_BYTES % unit)
		unit = bs;
	da->unmap_granularity = unit / bs;
	da->unmap_granularity_alignment = 0;
	da->max_unmap_lba_count = VAAI_MAX_UNMAP_BLOCKS;
	da->max_unmap_block_desc_count = VAAI_MAX_UNMAP_DESCS;
}

/*
 * The transfer the fabric announced against the one the CDB describes, for
 * the commands we parse ourselves (SAM-5 5.4.3; LIO core does the same for
 * the commands it parses).  Data-in: transfer what fits, report a residual.
 * Data-out: a data CDB must carry exactly its data, a control CDB at least
 * its parameter list.
 */
sense_reason_t vaai_cdb_size_check(struct se_cmd *cmd, u32 size, bool data_cdb)
{
	if (cmd->unknown_data_length) {
		cmd->data_length = size;
		return TCM_NO_SENSE;
	}
	if (size == cmd->data_length)
		return TCM_NO_SENSE;

	if (cmd->data_direction == DMA_TO_DEVICE) {
		if (data_cdb)
			return TCM_INVALID_FIELD_IN_COMMAND_IU;
		if (size > cmd->data_length)
			return TCM_PARAMETER_LIST_LENGTH_ERROR;
	}
	if (size > cmd->data_length) {
		cmd->se_cmd_flags |= SCF_OVERFLOW_BIT;
		cmd->residual_count = size - cmd->data_length;
	} else {
		cmd->se_cmd_flags |= SCF_UNDERFLOW_BIT;
		cmd->residual_count = cmd->data_length - size;
		if (cmd->data_direction == DMA_FROM_DEVICE)
			cmd->data_length = size;
	}
	return TCM_NO_SENSE;
}

/*
 * The same for a command that carries size bytes of data-out (its data, or
 * its parameter list): the initiator must also send them our way.  An
 * initiator may announce any direction; a WRITE SAME that received no
 * block, say, must not be taken for zeros.
 */
sense_reason_t vaai_cdb_data_out_check(struct se_cmd *cmd, u32 size,
				       bool data_cdb)
{
	if (size && !cmd->unknown_data_length &&
	    cmd->data_direction != DMA_TO_DEVICE)
		return data_cdb ? TCM_INVALID_FIELD_IN_COMMAND_IU :
				  TCM_PARAMETER_LIST_LENGTH_ERROR;
	return vaai_cdb_size_check(cmd, size, data_cdb);
}

/*
 * The tail of every parse of a command whose CDB a vaai_cdb_fields.c check
 * read into *a: the check's verdict, the transfer of a->size bytes as xfer
 * says, write protection for a command that writes, then what execute
 * works on.
 */
sense_reason_t vaai_cdb_accept(struct se_cmd *cmd, enum vaai_cdb_err err,
			       const struct vaai_cdb_args *a,
			       enum vaai_xfer xfer, bool write,
			       sense_reason_t (*execute)(struct se_cmd *cmd))
{
	sense_reason_t ret = vaai_cdb_reason(err);

	if (ret)
		return ret;
	if (xfer == VAAI_XFER_IN)
		ret = vaai_cdb_size_check(cmd, a->size, false);
	else
		ret = vaai_cdb_data_out_check(cmd, a->size,
					      xfer == VAAI_XFER_BLOCKS);
	if (ret)
		return ret;
	if (write && vaai_cmd_write_protected(cmd))
		return TCM_WRITE_PROTECTED;
	cmd->t_task_lba = a->lba;
	cmd->t_task_nolb = a->nolb;
	cmd->execute_cmd = execute;
	return TCM_NO_SENSE;
}

/* What the CDB checks of vaai_cdb_fields.c know of cmd's LUN. */
static void vaai_cdb_lun_get(struct se_cmd *cmd, struct vaai_cdb_lun *lun)
{
	struct se_device *dev = cmd->se_dev;
	struct se_dev_attrib *da = &dev->dev_attrib;

	lun->nr_blocks = dev->transport->get_blocks(dev) + 1;
	lun->block_size = da->block_size;
	lun->max_write_same_len = da->max_write_same_len;
	lun->hw_max_sectors = da->hw_max_sectors;
	lun->tpws = da->emulate_tpws;
	lun->dpofua = vaai_dpofua(da);
	/* read from the device's queue only for the command that uses them */
	if (cmd->t_task_cdb[0] == WRITE_ATOMIC_16)
		vaai_write_atomic_limits(cmd, lun);
	else
		lun->atomic_max = lun->atomic_align = lun->atomic_gran =
			lun->atomic_boundary = 0;
}

/*
 * The parse of a command whose CDB check needs to know the LUN: the
 * check, then vaai_cdb_accept()'s tail.
 */
sense_reason_t vaai_cdb_parse(struct se_cmd *cmd, vaai_cdb_check_t check,
			      enum vaai_xfer xfer, bool write,
			      sense_reason_t (*execute)(struct se_cmd *cmd))
{
	struct vaai_cdb_lun lun;
	struct vaai_cdb_args a;

	vaai_cdb_lun_get(cmd, &lun);
	return vaai_cdb_accept(cmd, check(cmd->t_task_cdb, &lun, &a), &a, xfer,
			       write, execute);
}

/* The sense reason LIO core answers a failed CDB check with. */
sense_reason_t vaai_cdb_reason(enum vaai_cdb_err err)
{
	static const sense_reason_t reasons[] = {
		[VAAI_CDB_OK]			= TCM_NO_SENSE,
		[VAAI_CDB_INVALID_FIELD]	= TCM_INVALID_CDB_FIELD,
		[VAAI_CDB_LBA_OUT_OF_RANGE]	= TCM_ADDRESS_OUT_OF_RANGE,
		[VAAI_CDB_LIST_LENGTH]		= TCM_PARAMETER_LIST_LENGTH_ERROR,
	};

	return reasons[err];
}

/*
 * LIO core's REQUEST SENSE and PERSISTENT RESERVE IN answer LOGICAL UNIT
 * COMMUNICATION FAILURE when the initiator gave them no data-in buffer.
 * There is no room for anything: GOOD, with the allocation length left as
 * residual (SPC-4 4.2.5.6).
 */
static sense_reason_t vaai_execute_no_room(struct se_cmd *cmd)
{
	vaai_cmd_done_len(cmd, SAM_STAT_GOOD, 0);
	return TCM_NO_SENSE;
}

static bool vaai_cdb_core_needs_room(const u8 *cdb)
{
	switch (cdb[0]) {
	case REQUEST_SENSE:
	case PERSISTENT_RESERVE_IN:
		return true;
	}
	return false;
}

static sense_reason_t vaai_parse(struct se_cmd *cmd)
{
	const struct vaai_cdb_handler *h = vaai_cdb_lookup(cmd->t_task_cdb);
	sense_reason_t ret;

	if (h) {
		ret = h->parse(cmd);
		if (!ret && h->store)
			vaai_cmd_gate(cmd);
		return ret;
	}

	/*
	 * LIO core refuses a CDB it has no execute function for (LOG SENSE,
	 * WRITE BUFFER, ..., an unknown MAINTENANCE IN/OUT service action)
	 * as INVALID COMMAND OPERATION CODE.  An opcode that has other
	 * service actions is supported, though: its unknown ones are an
	 * invalid field, as REPORT SUPPORTED OPERATION CODES tells the host.
	 */
	ret = sbc_parse_cdb(cmd, &vaai_ops);
	if (ret == TCM_UNSUPPORTED_SCSI_OPCODE && vaai_opcodes_sa_enabled(cmd))
		return TCM_INVALID_CDB_FIELD;
	if (!ret && vaai_cdb_core_needs_room(cmd->t_task_cdb) &&
	    (cmd->data_direction != DMA_FROM_DEVICE || !cmd->data_length))
		cmd->execute_cmd = vaai_execute_no_room;
	return ret;
}

sense_reason_t vaai_parse_cdb(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	sense_reason_t ret;

	/* the store this command holds, once it comes to hold it */
	cmd->priv = NULL;
	if (unlikely(vdev->limits_bs != cmd->se_dev->dev_attrib.block_size))
		vaai_dev_set_limits(vdev);
	if (vaai_ua_report(cmd))
		return TCM_NO_SENSE;
	/* a CDB refused here is a failed command of its kind, in one place */
	ret = vaai_parse(cmd);
	if (ret)
		vaai_metrics_refused(cmd);
	return ret;
}
