// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: EXTENDED COPY (LID1), SPC-4 6.4 (VMware's full copy).
 *
 * The parameter list is checked whole by vaai_xcopy_list.c, which asks
 * vaai_xcopy_resolve() for the LUN each CSCD descriptor names, before the
 * copy starts, so a list that is refused has written nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"


/* The list's idx-th CSCD descriptor, resolved to a LUN of this nexus. */
static struct vaai_cscd_info *vaai_xcopy_resolve(void *ctx, const u8 *desc,
						 unsigned int idx)
{
	struct vaai_xcopy *xc = ctx;
	struct vaai_cscd *c = &xc->cscd[idx];
	struct se_device *dev;

	if (vaai_cscd_resolve(xc->cmd, desc, c))
		return NULL;
	dev = &c->vdev->dev;
	c->info.nr_blocks = dev->transport->get_blocks(dev) + 1;
	c->info.block_size = dev->dev_attrib.block_size;
	return &c->info;
}

static struct vaai_fault vaai_xcopy_parse_list(struct vaai_xcopy *xc,
					       const u8 *p, u32 len)
{
	struct vaai_fault f;

	f = vaai_xcopy_list_parse(p, len, &xc->list, vaai_xcopy_resolve, xc);
	xc->status->list_id = xc->list.list_id;
	xc->status->hold = xc->list.hold;
	xc->status->listed = xc->list.listed;
	return f;
}

static void vaai_xcopy_free(struct vaai_xcopy *xc)
{
	vaai_cscd_release(xc);
	if (xc->status)
		vaai_copy_status_free(xc->status);
	kvfree(xc);
}

/* Refuse the list: nothing has been read or written. */
static void vaai_xcopy_refuse(struct vaai_xcopy *xc, struct vaai_fault f)
{
	struct se_cmd *cmd = xc->cmd;

	atomic64_inc(&xc->vdev->stats.clone_failed);
	vaai_metrics_refused(cmd);
	vaai_xcopy_free(xc);
	vaai_cmd_complete_fault(cmd, &f);
}

/* A CSCD another initiator has reserved against us. */
static bool vaai_xcopy_reserved(struct vaai_xcopy *xc)
{
	unsigned int i;

	for (i = 0; i < xc->list.nr_cscds; i++)
		if (vaai_cscd_reserved(xc->cmd, &xc->cscd[i]))
			return true;
	return false;
}

static sense_reason_t vaai_xcopy_execute(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	u32 len = get_unaligned_be32(&cmd->t_task_cdb[10]);
	sense_reason_t reason = TCM_OUT_OF_RESOURCES;
	struct vaai_xcopy *xc;
	struct vaai_fault f;
	u8 *list;
	int ret;

	if (!len) {		/* not an error (SPC-4 6.4.1) */
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	xc = kvzalloc(sizeof(*xc), GFP_KERNEL);
	if (!xc)
		return TCM_OUT_OF_RESOURCES;
	xc->cmd = cmd;
	xc->vdev = vdev;
	xc->status = kzalloc(sizeof(*xc->status), GFP_KERNEL);
	list = kmalloc(len, GFP_KERNEL);
	if (!xc->status || !list) {
		kfree(list);
		goto out_free;
	}
	vaai_copy_status_init(xc->status, cmd);

	if (sg_copy_to_buffer(cmd->t_data_sg, cmd->t_data_nents, list, len) != len)
		f = vaai_fault_length();
	else
		f = vaai_xcopy_parse_list(xc, list, len);
	kfree(list);
	if (f.key)
		goto out_refuse;
	if (vaai_xcopy_reserved(xc)) {
		atomic64_inc(&vdev->stats.clone_failed);
		reason = TCM_RESERVATION_CONFLICT;
		goto out_free;
	}
	if (atomic_inc_return(&vdev->copies.nr_running) > VAAI_XCOPY_MAX_RUNNING)
		goto out_running;
	if (xc->status->listed) {
		ret = vaai_copy_status_add(vdev, xc->status);
		if (ret == -EBUSY) {
			/* that list identifier is running: OPERATION IN PROGRESS */
			atomic_dec(&vdev->copies.nr_running);
			f = vaai_fault_param(VAAI_ASC_OPERATION_IN_PROGRESS, 0, -1);
			goto out_refuse;
		}
		if (ret)
			goto out_running;
	}
	vaai_copy_start(xc);
	return TCM_NO_SENSE;

out_running:
	atomic_dec(&vdev->copies.nr_running);
out_free:
	vaai_metrics_refused(cmd);
	vaai_xcopy_free(xc);
	return reason;
out_refuse:
	vaai_xcopy_refuse(xc, f);
	return TCM_NO_SENSE;
}

/* EXTENDED COPY is ours in every service action: LIO core must not run it. */
sense_reason_t vaai_xcopy_parse(struct se_cmd *cmd)
{
	struct vaai_cdb_args a;

	if (!cmd->se_dev->dev_attrib.emulate_3pc)
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	switch (cmd->t_task_cdb[1] & 0x1f) {
	case VAAI_SA_POPULATE_TOKEN:
	case VAAI_SA_WRITE_USING_TOKEN:
		return vaai_odx_parse(cmd);
	}
	/* write protection is each copy target's, checked as it is resolved */
	return vaai_cdb_accept(cmd, vaai_xcopy_cdb_check(cmd->t_task_cdb, &a),
			       &a, VAAI_XFER_LIST, false, vaai_xcopy_execute);
}
