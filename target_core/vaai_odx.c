// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the token copy Windows calls ODX, SBC-4 5.9 POPULATE
 * TOKEN and 5.51 WRITE USING TOKEN (83h/10h and 83h/11h).
 *
 * POPULATE TOKEN makes a token for ranges of the LUN it comes to
 * (vaai_odx_token.c); WRITE USING TOKEN copies what a token stands for into
 * ranges of the LUN it comes to, on the EXTENDED COPY engine (vaai_copy.c),
 * or zeroes them for the block device zero ROD token.  The token's source
 * LUN must be mapped to the nexus that uses it, as a CSCD must be for
 * EXTENDED COPY.  Both record their outcome for RECEIVE ROD TOKEN
 * INFORMATION (vaai_rrti.c), and both finish before they return status.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"

#define VAAI_ODX_OFFSET_FIELD	8	/* OFFSET INTO ROD */

/* A command's parameter list and what it says, with its outcome's record. */
struct vaai_odx_cmd {
	struct se_cmd *cmd;
	struct vaai_dev *vdev;
	u8 *p;				/* the list as it came */
	u32 len;
	struct vaai_odx_list l;
	struct vaai_copy_status *st;
};

static void vaai_odx_cmd_free(struct vaai_odx_cmd *oc)
{
	if (oc->st)
		vaai_copy_status_free(oc->st);
	kfree_sensitive(oc->p);		/* it may hold a token */
	kfree(oc);
}

static struct vaai_odx_cmd *vaai_odx_cmd_alloc(struct se_cmd *cmd, u8 sa)
{
	struct vaai_odx_cmd *oc = kzalloc(sizeof(*oc), GFP_KERNEL);

	if (!oc)
		return NULL;
	oc->cmd = cmd;
	oc->vdev = to_vaai_dev(cmd->se_dev);
	oc->len = get_unaligned_be32(&cmd->t_task_cdb[10]);
	oc->p = kmalloc(max_t(u32, oc->len, 1), GFP_KERNEL);
	oc->st = kzalloc(sizeof(*oc->st), GFP_KERNEL);
	if (!oc->p || !oc->st) {
		vaai_odx_cmd_free(oc);
		return NULL;
	}
	vaai_copy_status_init(oc->st, cmd);
	oc->st->sa = sa;
	oc->st->list_id = get_unaligned_be32(&cmd->t_task_cdb[6]);
	oc->st->listed = true;
	oc->st->hold = true;
	return oc;
}

/* The parameter list, checked by parse against the command's LUN. */
static struct vaai_fault vaai_odx_list_get(struct vaai_odx_cmd *oc,
		struct vaai_fault (*parse)(const u8 *p, u32 len,
					   const struct vaai_odx_lun *lun,
					   struct vaai_odx_list *l))
{
	struct se_cmd *cmd = oc->cmd;
	struct se_device *dev = cmd->se_dev;
	const struct vaai_odx_lun lun = {
		.nr_blocks = dev->transport->get_blocks(dev) + 1,
		.block_size = dev->dev_attrib.block_size,
	};

	if (sg_copy_to_buffer(cmd->t_data_sg, cmd->t_data_nents, oc->p,
			      oc->len) != oc->len)
		return vaai_fault_length();
	return parse(oc->p, oc->len, &lun, &oc->l);
}

/*
 * List the operation for RECEIVE ROD TOKEN INFORMATION; the status then
 * belongs to the device's list.  0, or why not (-EBUSY: its list identifier
 * is in use), answered by vaai_odx_list_refused() once the caller has let go
 * of all it holds: the command is not ours after its answer.
 */
static int vaai_odx_list_add(struct vaai_odx_cmd *oc)
{
	int ret = vaai_copy_status_add(oc->vdev, oc->st);

	if (ret == -EBUSY && oc->st->sa == VAAI_SA_WRITE_USING_TOKEN)
		atomic64_inc(&oc->vdev->stats.clone_failed);
	return ret;
}

static void vaai_odx_list_refused(struct se_cmd *cmd, int ret)
{
	/* the CDB's LIST IDENTIFIER (byte 6) is in use */
	struct vaai_fault in_use = vaai_fault_param(VAAI_ASC_OPERATION_IN_PROGRESS,
						    6, -1);

	in_use.in_cdb = true;
	vaai_metrics_refused(cmd);
	if (ret == -EBUSY)
		vaai_cmd_complete_fault(cmd, &in_use);
	else
		vaai_cmd_done_reason(cmd, TCM_OUT_OF_RESOURCES);
}

/*
 * Answer with a refusal, nothing done; the operation is not listed.  A
 * WRITE USING TOKEN refused counts as a failed clone, as EXTENDED COPY does
 * (here, and where it is write protected, meets a reservation or finds its
 * list identifier in use).
 */
static sense_reason_t vaai_odx_refuse(struct vaai_odx_cmd *oc,
				      struct vaai_fault f)
{
	struct se_cmd *cmd = oc->cmd;

	if (oc->st->sa == VAAI_SA_WRITE_USING_TOKEN)
		atomic64_inc(&oc->vdev->stats.clone_failed);
	vaai_metrics_refused(cmd);
	vaai_odx_cmd_free(oc);
	vaai_cmd_complete_fault(cmd, &f);
	return TCM_NO_SENSE;
}

static sense_reason_t vaai_odx_pt_execute(struct se_cmd *cmd)
{
	struct vaai_odx_cmd *oc = vaai_odx_cmd_alloc(cmd, VAAI_SA_POPULATE_TOKEN);
	struct vaai_copy_status *st;
	struct vaai_dev *vdev;
	struct vaai_fault f;
	enum vaai_asc code;
	u8 status, key;
	u32 type;
	int ret;

	if (!oc)
		return TCM_OUT_OF_RESOURCES;
	f = vaai_odx_list_get(oc, vaai_odx_pt_parse);
	if (f.key)
		return vaai_odx_refuse(oc, f);
	/* a persistent token where the store cannot share extents */
	type = vaai_odx_token_type(oc->vdev, oc->l.rod_type);
	if (!type)
		return vaai_odx_refuse(oc, vaai_fault_field(8, -1));
	ret = vaai_odx_list_add(oc);
	if (ret) {
		vaai_odx_cmd_free(oc);
		vaai_odx_list_refused(cmd, ret);
		return TCM_NO_SENSE;
	}
	st = oc->st;			/* the list's now */
	oc->st = NULL;
	vdev = oc->vdev;

	ret = vaai_odx_token_create(vdev, &oc->l, type, st->initiator,
				    st->token);
	if (ret == -ENOSPC || ret == -ENOBUFS) {
		/* too many tokens; no room for what the token would hold */
		code = ret == -ENOSPC ? VAAI_ASC_NO_ROOM_FOR_ROD_TOKEN :
					VAAI_ASC_NO_ROOM_FOR_ROD;
		vaai_copy_status_answer(cmd, st, SAM_STAT_CHECK_CONDITION,
					ILLEGAL_REQUEST, code, NULL);
	} else if (ret) {
		status = vaai_copy_errno_sense(ret, &key, &code);
		vaai_copy_status_answer(cmd, st, status, key, code, NULL);
	} else {
		atomic64_set(&st->bytes_done, oc->l.blocks *
			     vdev->dev.dev_attrib.block_size);
		atomic64_inc(&vdev->stats.odx_tokens);
		vaai_copy_status_answer(cmd, st, SAM_STAT_GOOD, 0, 0, NULL);
	}
	vaai_odx_cmd_free(oc);
	return TCM_NO_SENSE;
}

/* Why a token cannot be used: INVALID TOKEN OPERATION and the cause. */
static struct vaai_fault vaai_odx_token_fault(enum vaai_asc code)
{
	return vaai_fault_param(code, -1, -1);
}

/*
 * The token's source, as CSCD 0: a LUN of this nexus, of the very device
 * that made the token, still holding every range of it at the same block
 * size.
 */
static struct vaai_fault vaai_odx_source(struct vaai_odx_cmd *oc,
					 struct vaai_xcopy *xc,
					 const struct vaai_odx_src *src)
{
	struct vaai_cscd *c = &xc->cscd[0];
	struct se_device *dev;
	unsigned int i;
	u64 nr_blocks;

	xc->list.nr_cscds = 1;
	if (vaai_cscd_resolve_src(oc->cmd, src, c))
		return vaai_odx_token_fault(VAAI_ASC_INVALID_TOKEN_OPERATION);
	dev = &c->vdev->dev;
	nr_blocks = dev->transport->get_blocks(dev) + 1;
	if (dev->dev_attrib.block_size != src->block_size)
		return vaai_odx_token_fault(VAAI_ASC_TOKEN_REVOKED);
	for (i = 0; i < src->nr; i++)
		if (!vaai_lba_range_ok(nr_blocks, src->range[i].lba,
				       src->range[i].nolb))
			return vaai_odx_token_fault(VAAI_ASC_TOKEN_REVOKED);
	c->info.nr_blocks = nr_blocks;
	c->info.block_size = src->block_size;
	c->info.src = true;
	return VAAI_FAULT_NONE;
}

/*
 * Between LUNs of different block sizes a segment may start or end inside
 * a block of the larger: fine for a store that addresses smaller blocks
 * (files, 512-byte devices), not for a device of 4096-byte sectors.
 */
static bool vaai_odx_aligned(const struct vaai_xcopy *xc)
{
	u32 src_min = max(xc->cscd[0].vdev->min_block, 1U);
	u32 dst_min = max(xc->cscd[1].vdev->min_block, 1U);
	unsigned int i;

	for (i = 0; i < xc->list.nr_segs; i++) {
		const struct vaai_xseg *s = &xc->list.seg[i];

		if (!IS_ALIGNED(s->src_pos, src_min) ||
		    !IS_ALIGNED(s->dst_pos, dst_min) ||
		    !IS_ALIGNED(s->len, src_min) || !IS_ALIGNED(s->len, dst_min))
			return false;
	}
	return true;
}

/* The segments from the token's bytes onto our ranges, CSCD 1 ours. */
static struct vaai_fault vaai_odx_segments(struct vaai_odx_cmd *oc,
					   struct vaai_xcopy *xc,
					   const struct vaai_odx_src *src)
{
	struct vaai_cscd *c = &xc->cscd[1];
	u32 bs = oc->cmd->se_dev->dev_attrib.block_size;
	u64 want = oc->l.blocks * bs, skip, bytes;

	/* OFFSET INTO ROD, in our blocks, must leave some of the token */
	if (oc->l.offset >= div_u64(src->bytes + bs - 1, bs))
		return vaai_fault_field(VAAI_ODX_OFFSET_FIELD, -1);
	skip = oc->l.offset * bs;
	if (vaai_cscd_own(oc->cmd, c))
		return vaai_fault_sense(COPY_ABORTED,
					VAAI_ASC_COPY_TARGET_NOT_REACHABLE, -1, -1);
	xc->list.nr_cscds = 2;
	c->info.nr_blocks = oc->cmd->se_dev->transport->get_blocks(oc->cmd->se_dev) + 1;
	c->info.block_size = bs;
	c->info.dst = true;
	xc->list.nr_segs = vaai_odx_map(src->range, src->nr, src->block_size,
					skip, oc->l.range, oc->l.nr, bs,
					xc->list.seg, VAAI_XCOPY_MAX_SEGS, &bytes);
	/* 64 ranges a side make at most 127 segments */
	WARN_ON_ONCE(xc->list.nr_segs == VAAI_XCOPY_MAX_SEGS);
	if (!vaai_odx_aligned(xc))
		return vaai_fault_field(VAAI_ODX_WUT_HDR_LEN - 2, -1);
	xc->underrun = bytes < want;
	oc->st->partial = !xc->underrun && src->bytes - skip > bytes;
	return VAAI_FAULT_NONE;
}

/* Find the token, its source and the segments: what the copy needs. */
static struct vaai_fault vaai_odx_take(struct vaai_odx_cmd *oc,
				       struct vaai_xcopy *xc,
				       struct vaai_odx_src *src)
{
	struct vaai_fault f;

	unsigned int i;

	xc->tok = vaai_odx_token_take(oc->l.token, src);
	if (IS_ERR(xc->tok)) {
		int ret = PTR_ERR(xc->tok);

		xc->tok = NULL;
		if (ret == -ETIME)
			return vaai_odx_token_fault(VAAI_ASC_TOKEN_EXPIRED);
		if (ret == -ECANCELED)
			return vaai_odx_token_fault(VAAI_ASC_TOKEN_CANCELLED);
		return vaai_odx_token_fault(VAAI_ASC_TOKEN_UNKNOWN);
	}
	f = vaai_odx_source(oc, xc, src);
	if (f.key)
		return f;
	/* a persistent token's bytes are in its file, range after range */
	xc->tok_file = src->file;
	for (i = 0; src->file && i < src->nr; i++)
		src->range[i].lba = div_u64(src->foff[i], src->block_size);
	return vaai_odx_segments(oc, xc, src);
}

/* Another initiator's reservation on the source or on us. */
static bool vaai_odx_reserved(struct vaai_xcopy *xc)
{
	return vaai_cscd_reserved(xc->cmd, &xc->cscd[0]) ||
	       vaai_cscd_reserved(xc->cmd, &xc->cscd[1]);
}

static void vaai_odx_xcopy_free(struct vaai_xcopy *xc)
{
	vaai_cscd_release(xc);
	if (xc->tok)
		vaai_odx_token_put(xc->tok);
	kvfree(xc);
}

/* Start the copy, or answer why not. */
static sense_reason_t vaai_odx_copy_start(struct vaai_odx_cmd *oc,
					  struct vaai_xcopy *xc)
{
	struct vaai_copies *cp = &oc->vdev->copies;
	struct se_cmd *cmd = oc->cmd;
	int ret;

	if (vaai_odx_reserved(xc)) {
		atomic64_inc(&oc->vdev->stats.clone_failed);
		vaai_metrics_refused(cmd);
		vaai_odx_xcopy_free(xc);
		vaai_odx_cmd_free(oc);
		return TCM_RESERVATION_CONFLICT;
	}
	if (atomic_inc_return(&cp->nr_running) > VAAI_XCOPY_MAX_RUNNING) {
		atomic_dec(&cp->nr_running);
		vaai_metrics_refused(cmd);
		vaai_odx_xcopy_free(xc);
		vaai_odx_cmd_free(oc);
		return TCM_OUT_OF_RESOURCES;
	}
	ret = vaai_odx_list_add(oc);
	if (ret) {
		atomic_dec(&cp->nr_running);
		vaai_odx_xcopy_free(xc);
		vaai_odx_cmd_free(oc);
		vaai_odx_list_refused(cmd, ret);
		return TCM_NO_SENSE;
	}
	xc->status = oc->st;		/* the list's, ended by the engine */
	oc->st = NULL;
	/* DEL_TKN: used, once nothing can refuse the command any more */
	if (oc->l.del_tkn)
		vaai_odx_token_delete(xc->tok);
	vaai_odx_cmd_free(oc);
	vaai_copy_start(xc);
	return TCM_NO_SENSE;
}

/*
 * The block device zero ROD token (SBC-4 5.51): zero the ranges as WRITE
 * SAME would, one after another, off the fabric's thread.
 */
static void vaai_odx_zero_work(struct vaai_io *io)
{
	struct vaai_odx_cmd *oc = io->buf;
	struct vaai_copy_status *st = oc->st;
	struct vaai_dev *vdev = io->vdev;
	struct se_cmd *cmd = io->cmd;
	u32 bs = vdev->dev.dev_attrib.block_size;
	enum vaai_asc code;
	u8 status, key;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < oc->l.nr && !ret; i++) {
		io->pos = oc->l.range[i].lba * bs;
		io->len = (size_t)oc->l.range[i].nolb * bs;
		vaai_io_lock(io, io->pos, io->len, false);
		ret = vaai_ws_zero(io);
		if (!ret)
			ret = vaai_dev_sync_if_write_through(vdev, io->pos, io->len);
		vaai_io_unlock(io);
		if (!ret)
			atomic64_add(io->len, &st->bytes_done);
	}
	if (ret) {
		atomic64_inc(&vdev->stats.zero_failed);
	} else {
		atomic64_inc(&vdev->stats.zero);
		atomic64_add(oc->l.blocks, &vdev->stats.zero_blocks);
		vaai_tp_check(vdev);
	}
	oc->st = NULL;			/* the list's */
	vaai_odx_cmd_free(oc);
	vaai_io_finish(io);

	status = vaai_copy_errno_sense(ret, &key, &code);
	vaai_copy_status_answer(cmd, st, status, key, code, NULL);
}

static sense_reason_t vaai_odx_zero_start(struct vaai_odx_cmd *oc)
{
	struct se_cmd *cmd = oc->cmd;
	struct vaai_io *io = vaai_io_alloc(cmd);
	int ret;

	if (!io) {
		vaai_odx_cmd_free(oc);
		return TCM_OUT_OF_RESOURCES;
	}
	io->op = VAAI_OP_NONE;		/* vaai_copy_status_answer() counts it */
	ret = vaai_odx_list_add(oc);
	if (ret) {
		vaai_odx_cmd_free(oc);
		vaai_io_finish(io);
		vaai_odx_list_refused(cmd, ret);
		return TCM_NO_SENSE;
	}
	io->write = true;
	io->buf = oc;
	vaai_io_queue(io, vaai_odx_zero_work);
	return TCM_NO_SENSE;
}

static sense_reason_t vaai_odx_wut_execute(struct se_cmd *cmd)
{
	struct vaai_odx_src *src;
	struct vaai_odx_cmd *oc;
	struct vaai_xcopy *xc;
	struct vaai_fault f;
	u32 type;

	if (vaai_cmd_write_protected(cmd)) {
		atomic64_inc(&to_vaai_dev(cmd->se_dev)->stats.clone_failed);
		return TCM_WRITE_PROTECTED;
	}
	oc = vaai_odx_cmd_alloc(cmd, VAAI_SA_WRITE_USING_TOKEN);
	if (!oc)
		return TCM_OUT_OF_RESOURCES;
	f = vaai_odx_list_get(oc, vaai_odx_wut_parse);
	if (!f.key)
		f = vaai_odx_token_check(oc->l.token, &type);
	if (f.key)
		return vaai_odx_refuse(oc, f);
	if (type == VAAI_ROD_TYPE_ZERO)
		return vaai_odx_zero_start(oc);

	xc = kvzalloc(sizeof(*xc), GFP_KERNEL);
	src = kmalloc(sizeof(*src), GFP_KERNEL);
	if (!xc || !src) {
		kvfree(xc);
		kfree(src);
		vaai_odx_cmd_free(oc);
		return TCM_OUT_OF_RESOURCES;
	}
	xc->cmd = cmd;
	xc->vdev = oc->vdev;
	f = vaai_odx_take(oc, xc, src);
	kfree(src);
	if (f.key) {
		vaai_odx_xcopy_free(xc);
		return vaai_odx_refuse(oc, f);
	}
	return vaai_odx_copy_start(oc, xc);
}

static sense_reason_t vaai_odx_nothing(struct se_cmd *cmd)
{
	vaai_cmd_done(cmd, SAM_STAT_GOOD);
	return TCM_NO_SENSE;
}

/*
 * POPULATE TOKEN and WRITE USING TOKEN: the list, at most as long as its
 * 16-bit range descriptor list length allows, comes with the command.
 */
sense_reason_t vaai_odx_parse(struct se_cmd *cmd)
{
	u8 sa = cmd->t_task_cdb[1] & 0x1f;
	u32 len = get_unaligned_be32(&cmd->t_task_cdb[10]);
	u32 hdr = sa == VAAI_SA_POPULATE_TOKEN ? VAAI_ODX_PT_HDR_LEN :
						  VAAI_ODX_WUT_HDR_LEN;
	sense_reason_t ret;

	if (len > hdr + U16_MAX)
		return TCM_PARAMETER_LIST_LENGTH_ERROR;
	ret = vaai_cdb_data_out_check(cmd, len, false);
	if (ret)
		return ret;
	if (!len) {		/* not an error (SBC-4 5.9.1, 5.51.1) */
		cmd->execute_cmd = vaai_odx_nothing;
		return TCM_NO_SENSE;
	}
	cmd->execute_cmd = sa == VAAI_SA_POPULATE_TOKEN ? vaai_odx_pt_execute :
							  vaai_odx_wut_execute;
	return TCM_NO_SENSE;
}
