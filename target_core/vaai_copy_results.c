// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: RECEIVE COPY RESULTS (SPC-4 6.18) for EXTENDED COPY
 * (LID1): COPY STATUS, FAILED SEGMENT DETAILS and OPERATING PARAMETERS;
 * and the list of copies they, and RECEIVE ROD TOKEN INFORMATION for the
 * token commands (vaai_rrti.c), answer from.
 *
 * A copy sent with a list identifier is listed on the device it was sent
 * to while it runs; with LIST ID USAGE 00b its outcome stays listed after
 * it ends, for the I_T nexus that sent it, until that nexus reads it: a
 * success through COPY STATUS, a failure through FAILED SEGMENT DETAILS.
 * At most VAAI_XCOPY_MAX_LISTED copies are listed per device; the finished
 * one listed first makes room for a new one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"

#define VAAI_RCR_COPY_STATUS	0x00
#define VAAI_RCR_OP_PARAMS	0x03
#define VAAI_RCR_FAILED_SEGS	0x04
#define VAAI_RCR_ROD_TOKEN_INFO	0x07

#define VAAI_RCR_STATUS_LEN	12
#define VAAI_RCR_OP_PARAMS_LEN	46	/* 44 + two descriptor type codes */
#define VAAI_RCR_FAILED_LEN	60	/* before the sense data */

void vaai_copies_init(struct vaai_copies *cp)
{
	spin_lock_init(&cp->lock);
	INIT_LIST_HEAD(&cp->list);
	atomic_set(&cp->nr_running, 0);
	mutex_init(&cp->clone);
}

/* The device is going away: nothing runs on it any more. */
void vaai_copies_free(struct vaai_copies *cp)
{
	struct vaai_copy_status *st, *tmp;

	list_for_each_entry_safe(st, tmp, &cp->list, node)
		vaai_copy_status_free(st);
	INIT_LIST_HEAD(&cp->list);
	cp->nr_listed = 0;
}

static void vaai_copies_drop(struct vaai_copies *cp, struct vaai_copy_status *st)
{
	list_del(&st->node);
	cp->nr_listed--;
	vaai_copy_status_free(st);
}

/* It may hold a token: wipe it before the memory goes back. */
void vaai_copy_status_free(struct vaai_copy_status *st)
{
	kfree_sensitive(st);
}

void vaai_copy_status_init(struct vaai_copy_status *st, struct se_cmd *cmd)
{
	const struct se_session *sess = cmd->se_sess;

	st->sess = sess;
	if (sess && sess->se_node_acl)
		strscpy(st->initiator, sess->se_node_acl->initiatorname,
			sizeof(st->initiator));
	st->isid = sess ? sess->sess_bin_isid : 0;
	st->state = VAAI_COPY_RUNNING;
	st->start_ns = vaai_metrics_start(to_vaai_dev(cmd->se_dev));
}

/*
 * The copy of this nexus with list_id.  EXTENDED COPY (LID1) and the token
 * commands number their lists apart: each is reported by its own command.
 */
static struct vaai_copy_status *vaai_copies_find(struct vaai_copies *cp,
						 const struct se_session *sess,
						 u32 list_id, bool token)
{
	const char *initiator = sess && sess->se_node_acl ?
				sess->se_node_acl->initiatorname : "";
	u64 isid = sess ? sess->sess_bin_isid : 0;
	struct vaai_copy_status *st;

	list_for_each_entry(st, &cp->list, node)
		if (st->sess == sess && st->list_id == list_id &&
		    (st->sa != VAAI_SA_XCOPY_LID1) == token &&
		    st->isid == isid && !strcmp(st->initiator, initiator))
			return st;
	return NULL;
}

/*
 * List a starting copy.  -EBUSY: one with its list identifier is running
 * for this nexus (SPC-4 6.4.3.2); -ENOSPC: the list is full of running ones.
 */
int vaai_copy_status_add(struct vaai_dev *vdev, struct vaai_copy_status *st)
{
	struct vaai_copies *cp = &vdev->copies;
	struct vaai_copy_status *old;
	int ret = 0;

	spin_lock(&cp->lock);
	old = vaai_copies_find(cp, st->sess, st->list_id,
			       st->sa != VAAI_SA_XCOPY_LID1);
	if (old && old->state == VAAI_COPY_RUNNING) {
		ret = -EBUSY;
		goto out;
	}
	if (old)
		vaai_copies_drop(cp, old);
	if (cp->nr_listed >= VAAI_XCOPY_MAX_LISTED) {
		list_for_each_entry(old, &cp->list, node)
			if (old->state != VAAI_COPY_RUNNING)
				break;
		if (list_entry_is_head(old, &cp->list, node)) {
			ret = -ENOSPC;
			goto out;
		}
		vaai_copies_drop(cp, old);
	}
	list_add_tail(&st->node, &cp->list);
	cp->nr_listed++;
out:
	spin_unlock(&cp->lock);
	return ret;
}

/*
 * The sense a copy that ended in CHECK CONDITION is answered with, in buf
 * (TRANSPORT_SENSE_BUFFER bytes): INFORMATION where info is given, and for
 * an EXTENDED COPY that failed while copying, COMMAND-SPECIFIC INFORMATION
 * set to the segments it completed, which is the number of the one that
 * failed (SPC-4 6.4.1; RECEIVE COPY RESULTS' SEGMENTS PROCESSED says the
 * same).  Its length.
 */
static u8 vaai_copy_sense(struct se_device *dev, const struct vaai_copy_status *st,
			  u8 *buf, u8 key, enum vaai_asc code, const u64 *info)
{
	u8 len = vaai_sense_fill(dev, buf, key, code);

	if (info)
		len = vaai_sense_set_info(buf, TRANSPORT_SENSE_BUFFER, *info) ?: len;
	if (st->sa == VAAI_SA_XCOPY_LID1)
		len = vaai_sense_set_csi(buf, TRANSPORT_SENSE_BUFFER,
					 READ_ONCE(st->segs_done)) ?: len;
	return len;
}

/* The copy ended: st belongs to the list now, or is freed. */
static void vaai_copy_status_end(struct vaai_dev *vdev,
				 struct vaai_copy_status *st, u8 status,
				 const u8 *sense, u8 sense_len)
{
	struct vaai_copies *cp = &vdev->copies;

	st->scsi_status = status;
	memcpy(st->sense, sense, sense_len);
	st->sense_len = sense_len;
	if (!st->listed) {
		vaai_copy_status_free(st);
		return;
	}
	spin_lock(&cp->lock);
	st->state = status == SAM_STAT_GOOD ? VAAI_COPY_DONE : VAAI_COPY_FAILED;
	if (!st->hold)
		vaai_copies_drop(cp, st);
	spin_unlock(&cp->lock);
}

/*
 * A copy command's end: st records the outcome, then cmd is answered the
 * same way, so RECEIVE COPY RESULTS and RECEIVE ROD TOKEN INFORMATION tell
 * what the command was told.
 */
void vaai_copy_status_answer(struct se_cmd *cmd, struct vaai_copy_status *st,
			     u8 status, u8 key, enum vaai_asc code,
			     const u64 *info)
{
	u8 sense[TRANSPORT_SENSE_BUFFER] = {};
	u8 len = 0;

	if (status == SAM_STAT_CHECK_CONDITION)
		len = vaai_copy_sense(cmd->se_dev, st, sense, key, code, info);
	vaai_metrics_done(to_vaai_dev(cmd->se_dev), vaai_op_of(cmd), st->start_ns,
			  atomic64_read(&st->bytes_done), status != SAM_STAT_GOOD);
	vaai_copy_status_end(to_vaai_dev(cmd->se_dev), st, status, sense, len);
	if (status != SAM_STAT_CHECK_CONDITION)
		vaai_cmd_done(cmd, status);
	else
		vaai_cmd_complete_sense_data(cmd, sense);
}

/*
 * Held results go once reported: unless the allocation length cut the
 * answer short (SPC-4 6.18.1), so that a host can ask again for all of it.
 */
static bool vaai_rcr_reported(struct se_cmd *cmd, u32 len)
{
	return cmd->data_length >= len;
}

/* TRANSFER COUNT in the smallest unit it fits in 32 bits with (SPC-4 6.18.3). */
static void vaai_rcr_transfer_count(u64 bytes, u8 *unit, u8 *count)
{
	u8 u = 0;

	while (bytes > U32_MAX) {
		bytes >>= 10;
		u++;
	}
	*unit = u;
	put_unaligned_be32(bytes, count);
}

/*
 * Answer from the copy of this nexus with list_id (CDB byte 2 on): fill()
 * writes the reply into buf under the list's lock and returns its length;
 * *done says the copy's outcome is in it, which ends the listing once the
 * reply reaches the host whole.
 */
sense_reason_t vaai_copy_answer(struct se_cmd *cmd, u32 list_id, bool token,
				u8 *buf, vaai_copy_fill_t fill)
{
	struct vaai_copies *cp = &to_vaai_dev(cmd->se_dev)->copies;
	u32 bs = cmd->se_dev->dev_attrib.block_size;
	struct vaai_copy_status *st;
	bool done = false;
	u32 len;

	spin_lock(&cp->lock);
	st = vaai_copies_find(cp, cmd->se_sess, list_id, token);
	if (!st) {
		spin_unlock(&cp->lock);
		/* no copy of this nexus has that LIST IDENTIFIER */
		vaai_cmd_complete_bad_cdb(cmd, 2, -1);
		return TCM_NO_SENSE;
	}
	len = fill(st, buf, bs, &done);
	if (done && vaai_rcr_reported(cmd, len))
		vaai_copies_drop(cp, st);
	spin_unlock(&cp->lock);

	vaai_cmd_complete_data(cmd, buf, len);
	return TCM_NO_SENSE;
}

/* COPY STATUS (SPC-4 6.18.3); a success is told once. */
static u32 vaai_rcr_fill_status(const struct vaai_copy_status *st, u8 *buf,
				u32 bs, bool *done)
{
	put_unaligned_be32(VAAI_RCR_STATUS_LEN - 4, &buf[0]);
	buf[4] = st->state;		/* HDD 0: we hold no data */
	put_unaligned_be16(READ_ONCE(st->segs_done), &buf[5]);
	vaai_rcr_transfer_count(atomic64_read(&st->bytes_done), &buf[7], &buf[8]);
	*done = st->state == VAAI_COPY_DONE;
	return VAAI_RCR_STATUS_LEN;
}

/* FAILED SEGMENT DETAILS (SPC-4 6.18.5); a failure is told once. */
static u32 vaai_rcr_fill_failed(const struct vaai_copy_status *st, u8 *buf,
				u32 bs, bool *done)
{
	u32 len = VAAI_RCR_FAILED_LEN + st->sense_len;

	if (st->state != VAAI_COPY_FAILED)
		return 4;		/* AVAILABLE DATA 0: no failure to tell */
	put_unaligned_be32(len - 4, &buf[0]);
	buf[56] = st->scsi_status;	/* COPY COMMAND STATUS */
	put_unaligned_be16(st->sense_len, &buf[58]);
	memcpy(&buf[60], st->sense, st->sense_len);
	*done = true;
	return len;
}

static sense_reason_t vaai_rcr_copy_status(struct se_cmd *cmd)
{
	u8 buf[VAAI_RCR_STATUS_LEN] = {};

	return vaai_copy_answer(cmd, cmd->t_task_cdb[2], false, buf,
				vaai_rcr_fill_status);
}

static sense_reason_t vaai_rcr_failed_segs(struct se_cmd *cmd)
{
	u8 buf[VAAI_RCR_FAILED_LEN + TRANSPORT_SENSE_BUFFER] = {};

	return vaai_copy_answer(cmd, cmd->t_task_cdb[2], false, buf,
				vaai_rcr_fill_failed);
}

/* OPERATING PARAMETERS (SPC-4 6.18.4): the limits vaai_xcopy.c enforces. */
static sense_reason_t vaai_rcr_op_params(struct se_cmd *cmd)
{
	u8 buf[VAAI_RCR_OP_PARAMS_LEN] = {};

	put_unaligned_be32(VAAI_RCR_OP_PARAMS_LEN - 4, &buf[0]);
	buf[4] = 0x01;			/* SNLID: LIST ID USAGE 11b works */
	put_unaligned_be16(VAAI_XCOPY_MAX_CSCDS, &buf[8]);
	put_unaligned_be16(VAAI_XCOPY_MAX_SEGS, &buf[10]);
	put_unaligned_be32(VAAI_XCOPY_MAX_DESC_LEN, &buf[12]);
	put_unaligned_be32(VAAI_XCOPY_MAX_SEG_BYTES, &buf[16]);
	/* MAXIMUM INLINE DATA LENGTH, HELD DATA LIMIT, stream size: 0 */
	put_unaligned_be16(VAAI_XCOPY_MAX_RUNNING, &buf[34]);
	buf[36] = VAAI_XCOPY_MAX_RUNNING;	/* MAXIMUM CONCURRENT COPIES */
	buf[37] = ilog2(cmd->se_dev->dev_attrib.block_size);
	buf[43] = 2;			/* IMPLEMENTED DESCRIPTOR LIST LENGTH */
	buf[44] = VAAI_SEG_B2B;
	buf[45] = VAAI_CSCD_ID;

	vaai_cmd_complete_data(cmd, buf, sizeof(buf));
	return TCM_NO_SENSE;
}

sense_reason_t vaai_rcr_parse(struct se_cmd *cmd)
{
	u8 *cdb = cmd->t_task_cdb;

	if (!cmd->se_dev->dev_attrib.emulate_3pc)
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	switch (cdb[1] & 0x1f) {
	case VAAI_RCR_COPY_STATUS:
		cmd->execute_cmd = vaai_rcr_copy_status;
		break;
	case VAAI_RCR_OP_PARAMS:
		cmd->execute_cmd = vaai_rcr_op_params;
		break;
	case VAAI_RCR_FAILED_SEGS:
		cmd->execute_cmd = vaai_rcr_failed_segs;
		break;
	case VAAI_RCR_ROD_TOKEN_INFO:
		cmd->execute_cmd = vaai_rrti_execute;
		break;
	default:
		return TCM_INVALID_CDB_FIELD;
	}
	return vaai_cdb_size_check(cmd, get_unaligned_be32(&cdb[10]), false);
}
