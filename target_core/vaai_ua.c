// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: unit attentions this backend raises for every I_T
 * nexus of a device (SAM-5 5.14): the thin-provisioning soft threshold
 * (vaai_threshold.c) and a capacity change (vaai_store_resize()).
 *
 * LIO core does not export its unit attention queue, so each condition is
 * kept here, with the sessions already told, and reported from
 * vaai_parse_cdb(): the command that receives it is not performed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <scsi/scsi_proto.h>

#include "vaai.h"

static sense_reason_t vaai_ua_capacity_execute(struct se_cmd *cmd)
{
	/* SBC-4 4.6 */
	vaai_cmd_complete_ua(cmd, VAAI_ASC_CAPACITY_DATA_HAS_CHANGED);
	return TCM_NO_SENSE;
}

static sense_reason_t vaai_ua_soft_threshold_execute(struct se_cmd *cmd)
{
	/* SBC-4 4.7.3.8: THIN PROVISIONING SOFT THRESHOLD REACHED */
	vaai_cmd_complete_ua(cmd, VAAI_ASC_SOFT_THRESHOLD_REACHED);
	return TCM_NO_SENSE;
}

static sense_reason_t (*const vaai_ua_execute[VAAI_UA_NR])(struct se_cmd *) = {
	[VAAI_UA_CAPACITY]		= vaai_ua_capacity_execute,
	[VAAI_UA_SOFT_THRESHOLD]	= vaai_ua_soft_threshold_execute,
};

void vaai_ua_init(struct vaai_dev *vdev)
{
	unsigned int i;

	for (i = 0; i < VAAI_UA_NR; i++)
		spin_lock_init(&vdev->ua[i].lock);
}

/* Every I_T nexus is to be told again.  Any context. */
void vaai_ua_raise(struct vaai_dev *vdev, enum vaai_ua_kind kind)
{
	struct vaai_ua *ua = &vdev->ua[kind];
	unsigned long flags;

	spin_lock_irqsave(&ua->lock, flags);
	ua->nr_told = 0;
	WRITE_ONCE(ua->pending, true);
	spin_unlock_irqrestore(&ua->lock, flags);
}

/* The condition is gone before every nexus heard of it. */
void vaai_ua_withdraw(struct vaai_dev *vdev, enum vaai_ua_kind kind)
{
	WRITE_ONCE(vdev->ua[kind].pending, false);
}

/* Is cmd's nexus still to be told?  Then it is counted as told. */
static bool vaai_ua_tell(struct vaai_ua *ua, struct se_cmd *cmd)
{
	unsigned long flags;
	unsigned int i;
	bool tell;

	spin_lock_irqsave(&ua->lock, flags);
	tell = ua->pending;
	for (i = 0; tell && i < ua->nr_told; i++)
		if (ua->told[i] == cmd->se_sess)
			tell = false;
	if (tell) {
		ua->told[ua->nr_told++] = cmd->se_sess;
		/* Past this many nexuses, stop rather than grow. */
		if (ua->nr_told == ARRAY_SIZE(ua->told))
			WRITE_ONCE(ua->pending, false);
	}
	spin_unlock_irqrestore(&ua->lock, flags);
	return tell;
}

/*
 * From parse: answer cmd with the first condition its nexus has not been
 * told of, instead of performing it.  SAM-5 5.14: INQUIRY, REPORT LUNS and
 * REQUEST SENSE do not report a unit attention.
 */
bool vaai_ua_report(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	unsigned int i;

	switch (cmd->t_task_cdb[0]) {
	case INQUIRY:
	case REPORT_LUNS:
	case REQUEST_SENSE:
		return false;
	}
	for (i = 0; i < VAAI_UA_NR; i++) {
		if (likely(!READ_ONCE(vdev->ua[i].pending)))
			continue;
		if (vaai_ua_tell(&vdev->ua[i], cmd)) {
			cmd->execute_cmd = vaai_ua_execute[i];
			return true;
		}
	}
	return false;
}
