// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: EXTENDED COPY (LID1), SPC-4 6.4 (VMware's full copy).
 *
 * The parameter list is a 16-byte header, CSCD descriptors (32-byte
 * identification descriptors, 0xE4), segment descriptors (block to block,
 * 0x02) and no inline data.  All of it is checked, and every CSCD resolved,
 * before the copy starts, so a list that is refused has written nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>
#include <scsi/scsi_common.h>
#include <asm/unaligned.h>

#include "vaai_xcopy.h"

#define VAAI_XCOPY_SA_LID1	0x00

/* Additional sense codes (SPC-4 annex D) the parser answers with. */
#define ASC_PARAM_LIST_LENGTH	0x1a	/* PARAMETER LIST LENGTH ERROR */
#define ASC_LBA_OUT_OF_RANGE	0x21
#define ASC_INVALID_PARAM	0x26	/* INVALID FIELD IN PARAMETER LIST, and: */
#define ASCQ_TOO_MANY_CSCDS	0x06
#define ASCQ_BAD_CSCD_TYPE	0x07
#define ASCQ_TOO_MANY_SEGS	0x08
#define ASCQ_BAD_SEG_TYPE	0x09
#define ASCQ_INEXACT_SEGMENT	0x0a
#define ASCQ_INLINE_TOO_LONG	0x0b
#define ASC_COPY_TARGET		0x0d
#define ASCQ_NOT_REACHABLE	0x02	/* COPY TARGET DEVICE NOT REACHABLE */
#define ASC_OP_IN_PROGRESS	0x00
#define ASCQ_OP_IN_PROGRESS	0x16

static const struct vaai_xerr vaai_xerr_length = {
	ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH, 0x00, -1, -1
};

static struct vaai_xerr vaai_xerr_field(u8 asc, u8 ascq, int field, int bit)
{
	return (struct vaai_xerr){ ILLEGAL_REQUEST, asc, ascq, field, bit };
}

static struct vaai_xerr vaai_xerr_copy(u8 ascq)
{
	return (struct vaai_xerr){ COPY_ABORTED, ASC_COPY_TARGET, ascq, -1, -1 };
}

#define VAAI_XERR_OK	((struct vaai_xerr){ 0 })

/* Header, SPC-4 6.4.3.2: list identifier, usage, and the three lengths. */
static struct vaai_xerr vaai_xcopy_header(struct vaai_xcopy *xc, const u8 *p,
					  u32 len, u32 *cscd_len, u32 *seg_len)
{
	u8 usage = (p[1] >> 3) & 0x3;
	u64 inline_len = get_unaligned_be32(&p[12]);

	*cscd_len = get_unaligned_be16(&p[2]);
	*seg_len = get_unaligned_be32(&p[8]);
	if (VAAI_XCOPY_HDR_LEN + (u64)*cscd_len + *seg_len + inline_len > len)
		return vaai_xerr_length;
	if (inline_len)		/* MAXIMUM INLINE DATA LENGTH is 0 */
		return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_INLINE_TOO_LONG, 12, -1);
	if (usage != VAAI_LID_HOLD && usage != VAAI_LID_NO_HOLD &&
	    usage != VAAI_LID_NONE)
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, 1, 4);
	if (usage == VAAI_LID_NONE && p[0])
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, 0, -1);
	xc->status->list_id = p[0];
	xc->status->hold = usage == VAAI_LID_HOLD;
	xc->status->listed = usage != VAAI_LID_NONE;
	return VAAI_XERR_OK;
}

/* CSCD descriptors, SPC-4 6.4.5: each resolved to a LUN of this nexus. */
static struct vaai_xerr vaai_xcopy_cscds(struct vaai_xcopy *xc, const u8 *p,
					 u32 off, u32 len)
{
	u32 end = off + len;

	for (; off < end; off += VAAI_XCOPY_CSCD_LEN) {
		const u8 *d = p + off;
		struct vaai_cscd *c;

		if (d[0] != VAAI_CSCD_ID)
			return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_BAD_CSCD_TYPE,
					       off, -1);
		if (end - off < VAAI_XCOPY_CSCD_LEN)
			return vaai_xerr_length;
		if (xc->nr_cscds == VAAI_XCOPY_MAX_CSCDS)
			return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_TOO_MANY_CSCDS,
					       2, -1);
		/* LU ID TYPE other than 00b: not a LUN we can name */
		if (d[1] & 0xc0)
			return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 1, 7);
		/* NUL set: a null device, which we do not emulate */
		if (d[1] & 0x20)
			return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 1, 5);
		/* only block devices (PERIPHERAL DEVICE TYPE 0) */
		if (d[1] & 0x1f)
			return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 1, 4);
		c = &xc->cscd[xc->nr_cscds];
		if (vaai_cscd_resolve(xc->cmd, d, c))
			return vaai_xerr_copy(ASCQ_NOT_REACHABLE);
		xc->nr_cscds++;
		/* DISK BLOCK LENGTH, bytes 29-31, is the LUN's block size */
		if (get_unaligned_be24(&d[29]) != c->vdev->dev.dev_attrib.block_size)
			return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 29, -1);
	}
	return VAAI_XERR_OK;
}

/* LBA range of one side of a segment, inside that LUN, in bytes. */
static struct vaai_xerr vaai_xcopy_side(struct vaai_cscd *c, u64 lba, u64 bytes,
					int field, loff_t *pos)
{
	struct se_device *dev = &c->vdev->dev;
	u32 bs = dev->dev_attrib.block_size;

	if (!vaai_dev_range_ok(dev, lba, bytes / bs))
		return vaai_xerr_field(ASC_LBA_OUT_OF_RANGE, 0x00, field, -1);
	*pos = lba * bs;
	return VAAI_XERR_OK;
}

/* Block device to block device segment, SPC-4 6.4.6.5. */
static struct vaai_xerr vaai_xcopy_b2b(struct vaai_xcopy *xc, const u8 *d,
				       u32 off, struct vaai_xseg *s)
{
	struct vaai_cscd *src, *dst;
	u32 sbs, dbs, nblocks;
	struct vaai_xerr e;
	u64 bytes;

	if (get_unaligned_be16(&d[2]) != VAAI_XCOPY_SEG_B2B_LEN - 4)
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 2, -1);
	s->src = get_unaligned_be16(&d[4]);
	s->dst = get_unaligned_be16(&d[6]);
	if (s->src >= xc->nr_cscds)
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 4, -1);
	if (s->dst >= xc->nr_cscds)
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 6, -1);
	src = &xc->cscd[s->src];
	dst = &xc->cscd[s->dst];
	if (dst->readonly)
		return vaai_xerr_copy(ASCQ_NOT_REACHABLE);
	src->src = true;
	dst->dst = true;

	/* DC: NUMBER OF BLOCKS counts destination blocks, else source ones */
	sbs = src->vdev->dev.dev_attrib.block_size;
	dbs = dst->vdev->dev.dev_attrib.block_size;
	nblocks = get_unaligned_be16(&d[10]);
	bytes = (u64)nblocks * (d[1] & 0x02 ? dbs : sbs);
	if (bytes % sbs || bytes % dbs)
		return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_INEXACT_SEGMENT,
				       off + 10, -1);
	/* cannot trigger with 16-bit counts of 4 KiB blocks; keeps it true */
	if (bytes > VAAI_XCOPY_MAX_SEG_BYTES)
		return vaai_xerr_field(ASC_INVALID_PARAM, 0x00, off + 10, -1);

	e = vaai_xcopy_side(src, get_unaligned_be64(&d[12]), bytes, off + 12,
			    &s->src_pos);
	if (e.key)
		return e;
	e = vaai_xcopy_side(dst, get_unaligned_be64(&d[20]), bytes, off + 20,
			    &s->dst_pos);
	s->len = bytes;
	return e;
}

static struct vaai_xerr vaai_xcopy_segs(struct vaai_xcopy *xc, const u8 *p,
					u32 off, u32 len)
{
	u32 end = off + len;

	while (off < end) {
		const u8 *d = p + off;
		struct vaai_xerr e;

		if (d[0] != VAAI_SEG_B2B)
			return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_BAD_SEG_TYPE,
					       off, -1);
		if (end - off < VAAI_XCOPY_SEG_B2B_LEN)
			return vaai_xerr_length;
		if (xc->nr_segs == VAAI_XCOPY_MAX_SEGS)
			return vaai_xerr_field(ASC_INVALID_PARAM, ASCQ_TOO_MANY_SEGS,
					       8, -1);
		e = vaai_xcopy_b2b(xc, d, off, &xc->seg[xc->nr_segs]);
		if (e.key)
			return e;
		xc->nr_segs++;
		off += VAAI_XCOPY_SEG_B2B_LEN;
	}
	return VAAI_XERR_OK;
}

static struct vaai_xerr vaai_xcopy_parse_list(struct vaai_xcopy *xc,
					      const u8 *p, u32 len)
{
	u32 cscd_len, seg_len;
	struct vaai_xerr e;

	if (len < VAAI_XCOPY_HDR_LEN)
		return vaai_xerr_length;
	e = vaai_xcopy_header(xc, p, len, &cscd_len, &seg_len);
	if (!e.key)
		e = vaai_xcopy_cscds(xc, p, VAAI_XCOPY_HDR_LEN, cscd_len);
	if (!e.key)
		e = vaai_xcopy_segs(xc, p, VAAI_XCOPY_HDR_LEN + cscd_len, seg_len);
	return e;
}

static void vaai_xcopy_free(struct vaai_xcopy *xc)
{
	vaai_cscd_release(xc);
	kfree(xc->status);
	kvfree(xc);
}

/* Refuse the list: nothing has been read or written. */
static void vaai_xcopy_refuse(struct vaai_xcopy *xc, struct vaai_xerr e)
{
	struct se_cmd *cmd = xc->cmd;

	atomic64_inc(&xc->vdev->stats.clone_failed);
	vaai_xcopy_free(xc);
	vaai_cmd_complete_check(cmd, e.key, e.asc, e.ascq, e.field, e.bit);
}

/* A CSCD another initiator has reserved against us. */
static bool vaai_xcopy_reserved(struct vaai_xcopy *xc)
{
	unsigned int i;

	for (i = 0; i < xc->nr_cscds; i++)
		if (vaai_cscd_reserved(xc->cmd, &xc->cscd[i]))
			return true;
	return false;
}

static sense_reason_t vaai_xcopy_execute(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	u32 len = get_unaligned_be32(&cmd->t_task_cdb[10]);
	struct vaai_xcopy *xc;
	struct vaai_xerr e;
	u8 *list;

	if (!len) {		/* not an error (SPC-4 6.4.1) */
		target_complete_cmd(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	xc = kvzalloc(sizeof(*xc), GFP_KERNEL);
	list = kmalloc(len, GFP_KERNEL);
	if (xc)
		xc->status = kzalloc(sizeof(*xc->status), GFP_KERNEL);
	if (!xc || !list || !xc->status) {
		if (xc)
			kfree(xc->status);
		kvfree(xc);
		kfree(list);
		return TCM_OUT_OF_RESOURCES;
	}
	xc->cmd = cmd;
	xc->vdev = vdev;
	vaai_copy_status_init(xc->status, cmd->se_sess);

	if (sg_copy_to_buffer(cmd->t_data_sg, cmd->t_data_nents, list, len) != len)
		e = vaai_xerr_length;
	else
		e = vaai_xcopy_parse_list(xc, list, len);
	kfree(list);
	if (e.key) {
		vaai_xcopy_refuse(xc, e);
		return TCM_NO_SENSE;
	}
	if (vaai_xcopy_reserved(xc)) {
		atomic64_inc(&vdev->stats.clone_failed);
		vaai_xcopy_free(xc);
		return TCM_RESERVATION_CONFLICT;
	}

	if (atomic_inc_return(&vdev->copies.nr_running) > VAAI_XCOPY_MAX_RUNNING) {
		atomic_dec(&vdev->copies.nr_running);
		vaai_xcopy_free(xc);
		return TCM_OUT_OF_RESOURCES;
	}
	if (xc->status->listed) {
		int ret = vaai_copy_status_add(vdev, xc->status);

		if (ret) {
			atomic_dec(&vdev->copies.nr_running);
			if (ret == -EBUSY) {
				/* that list identifier is running: OPERATION IN PROGRESS */
				vaai_xcopy_refuse(xc, vaai_xerr_field(ASC_OP_IN_PROGRESS,
								      ASCQ_OP_IN_PROGRESS,
								      0, -1));
				return TCM_NO_SENSE;
			}
			vaai_xcopy_free(xc);
			return TCM_OUT_OF_RESOURCES;
		}
	}
	vaai_copy_start(xc);
	return TCM_NO_SENSE;
}

/* EXTENDED COPY is ours in every service action: LIO core must not run it. */
sense_reason_t vaai_xcopy_parse(struct se_cmd *cmd)
{
	u8 *cdb = cmd->t_task_cdb;
	u32 len = get_unaligned_be32(&cdb[10]);
	sense_reason_t ret;

	if (!cmd->se_dev->dev_attrib.emulate_3pc)
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	if ((cdb[1] & 0x1f) != VAAI_XCOPY_SA_LID1)
		return TCM_INVALID_CDB_FIELD;
	if (len > VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN)
		return TCM_PARAMETER_LIST_LENGTH_ERROR;
	ret = vaai_cdb_data_out_check(cmd, len, false);
	if (ret)
		return ret;
	cmd->execute_cmd = vaai_xcopy_execute;
	return TCM_NO_SENSE;
}
