// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the one place an errno becomes a SCSI status and sense.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <scsi/scsi_proto.h>
#include <linux/string.h>
#include <linux/scatterlist.h>

#include "vaai.h"

/* A sense key and what it is about. */
struct vaai_sense {
	u8 key;
	enum vaai_asc code;
};

/* SPC-4 4.5.6, table 28 (sense keys); the codes, vaai_sense_codes.h. */
static const struct vaai_sense vaai_sense_no_space = {
	DATA_PROTECT, VAAI_ASC_SPACE_ALLOCATION_FAILED
};
static const struct vaai_sense vaai_sense_write_protected = {
	DATA_PROTECT, VAAI_ASC_WRITE_PROTECTED
};
static const struct vaai_sense vaai_sense_write_error = {
	MEDIUM_ERROR, VAAI_ASC_WRITE_ERROR
};
static const struct vaai_sense vaai_sense_read_error = {
	MEDIUM_ERROR, VAAI_ASC_UNRECOVERED_READ_ERROR
};
static const struct vaai_sense vaai_sense_aborted = {
	ABORTED_COMMAND, VAAI_ASC_NO_ADDITIONAL_SENSE
};
static const struct vaai_sense vaai_sense_copy_failed = {
	COPY_ABORTED, VAAI_ASC_THIRD_PARTY_DEVICE_FAILURE
};
static const struct vaai_sense vaai_sense_copy_unreachable = {
	COPY_ABORTED, VAAI_ASC_COPY_TARGET_NOT_REACHABLE
};
static const struct vaai_sense vaai_sense_token_cancelled = {
	ILLEGAL_REQUEST, VAAI_ASC_TOKEN_CANCELLED
};

/*
 * Descriptor-format sense when an LBA may not fit the 32-bit INFORMATION
 * field of fixed format (SPC-4 4.5.1); the same rule LIO core applies.
 */
static bool vaai_sense_desc_format(struct se_device *dev)
{
	return dev->transport->get_blocks(dev) > U32_MAX;
}

static const struct vaai_sense *vaai_errno_sense(int err, bool write)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return &vaai_sense_no_space;
	case -EROFS:
	case -EPERM:
	case -EACCES:
		return &vaai_sense_write_protected;
	case -EINTR:		/* stopped by an abort or a session going away */
		return &vaai_sense_aborted;
	default:
		return write ? &vaai_sense_write_error : &vaai_sense_read_error;
	}
}

/* Sense data for dev in buf (TRANSPORT_SENSE_BUFFER bytes); its length. */
u8 vaai_sense_fill(struct se_device *dev, u8 *buf, u8 key, enum vaai_asc code)
{
	return vaai_sense_build(buf, TRANSPORT_SENSE_BUFFER,
				vaai_sense_desc_format(dev), key,
				vaai_asc(code), vaai_ascq(code));
}

/* CHECK CONDITION with sense data built in buf (TRANSPORT_SENSE_BUFFER). */
void vaai_cmd_complete_sense_data(struct se_cmd *cmd, u8 *buf)
{
	transport_copy_sense_to_cmd(cmd, buf);
	vaai_cmd_done(cmd, SAM_STAT_CHECK_CONDITION);
}

/*
 * CHECK CONDITION for a refusal, pointing at the field in error unless
 * f->byte < 0 (SPC-4 4.5.2.4.2: SKSV; C/D = 1 in the CDB, 0 in the
 * parameter list; BPV when a bit is named).
 */
void vaai_cmd_complete_fault(struct se_cmd *cmd, const struct vaai_fault *f)
{
	u8 buf[TRANSPORT_SENSE_BUFFER] = {};

	vaai_sense_build_fault(buf, sizeof(buf),
			       vaai_sense_desc_format(cmd->se_dev), f);
	vaai_cmd_complete_sense_data(cmd, buf);
}

/* CHECK CONDITION with our own sense and no field pointer. */
static void vaai_cmd_complete_sense(struct se_cmd *cmd, const struct vaai_sense *s)
{
	const struct vaai_fault f = vaai_fault_sense(s->key, s->code, -1, -1);

	vaai_cmd_complete_fault(cmd, &f);
}

/* This sense, with INFORMATION set to info. */
static void vaai_cmd_complete_info(struct se_cmd *cmd, u8 key,
				   enum vaai_asc code, u64 info)
{
	u8 buf[TRANSPORT_SENSE_BUFFER] = {};

	vaai_sense_fill(cmd->se_dev, buf, key, code);
	vaai_sense_set_info(buf, sizeof(buf), info);
	vaai_cmd_complete_sense_data(cmd, buf);
}

/*
 * COMPARE AND WRITE found a difference (SBC-4 5.3): INFORMATION is the
 * offset of the first differing byte from the start of the verify data.
 */
void vaai_cmd_complete_miscompare(struct se_cmd *cmd, u64 offset)
{
	vaai_cmd_complete_info(cmd, MISCOMPARE, VAAI_ASC_MISCOMPARE_DURING_VERIFY,
			       offset);
}

/* UNIT ATTENTION that this backend establishes itself. */
void vaai_cmd_complete_ua(struct se_cmd *cmd, enum vaai_asc code)
{
	const struct vaai_sense s = { UNIT_ATTENTION, code };

	vaai_cmd_complete_sense(cmd, &s);
}

/* INVALID FIELD IN CDB; bit: the field's most significant bit, or -1. */
void vaai_cmd_complete_bad_cdb(struct se_cmd *cmd, u16 byte, int bit)
{
	const struct vaai_fault f = vaai_fault_cdb(byte, bit);

	vaai_cmd_complete_fault(cmd, &f);
}

/* GOOD with size bytes of data-in, cut to the allocation length. */
void vaai_cmd_complete_data(struct se_cmd *cmd, const void *buf, u32 size)
{
	u32 len = min_t(u32, cmd->data_length, size);

	sg_copy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf, len);
	vaai_cmd_done_len(cmd, SAM_STAT_GOOD, len);
}

/*
 * How an EXTENDED COPY that failed while copying is answered: the SAM
 * status, and for CHECK CONDITION the sense.  SPC-4 6.4 reports the errors
 * of a copy target as COPY ABORTED; a full thin destination stays DATA
 * PROTECT / SPACE ALLOCATION FAILED, which is what a host acts on.
 */
u8 vaai_copy_errno_sense(int err, u8 *key, enum vaai_asc *code)
{
	const struct vaai_sense *s;

	*key = 0;
	*code = VAAI_ASC_NO_ADDITIONAL_SENSE;
	switch (err) {
	case 0:
		return SAM_STAT_GOOD;
	case -ENOMEM:
		return SAM_STAT_TASK_SET_FULL;
	case -EBUSY:
		return SAM_STAT_RESERVATION_CONFLICT;
	case -EINTR:
		s = &vaai_sense_aborted;
		break;
	case -ENODEV:
		s = &vaai_sense_copy_unreachable;
		break;
	case -ECANCELED:	/* a write changed the token's ranges */
		s = &vaai_sense_token_cancelled;
		break;
	case -ENOSPC:
	case -EDQUOT:
		s = &vaai_sense_no_space;
		break;
	default:
		s = &vaai_sense_copy_failed;
		break;
	}
	*key = s->key;
	*code = s->code;
	return SAM_STAT_CHECK_CONDITION;
}

/*
 * Complete @cmd: GOOD for @err == 0, otherwise CHECK CONDITION with the sense
 * that says what went wrong.  Memory shortage is not the medium's fault: the
 * host is told TASK SET FULL and retries.
 */
void vaai_cmd_complete(struct se_cmd *cmd, int err, bool write)
{
	const struct vaai_sense *s;

	if (!err) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return;
	}
	if (err == -ENOMEM || err == -EAGAIN) {
		vaai_cmd_done_reason(cmd, TCM_OUT_OF_RESOURCES);
		return;
	}

	s = vaai_errno_sense(err, write);
	pr_err_ratelimited("%s: opcode 0x%02x lba %llu failed: %d\n",
			   cmd->se_dev->dev_group.cg_item.ci_name,
			   cmd->t_task_cdb[0], cmd->t_task_lba, err);
	vaai_cmd_complete_sense(cmd, s);
}
