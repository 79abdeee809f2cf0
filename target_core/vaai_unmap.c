// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: UNMAP, SBC-4 5.32.
 *
 * The whole parameter list is checked before anything is deallocated: a
 * list with one bad descriptor unmaps nothing.  Descriptors may overlap and
 * come in any order (SBC-4 5.32.2); a descriptor of zero blocks is no error.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

struct vaai_unmap_req {
	struct vaai_unmap_span span;
	struct vaai_unmap_range range[];
};

static void vaai_unmap_work(struct vaai_io *io)
{
	struct vaai_unmap_req *req = io->buf;
	struct vaai_unmap_span *span = &req->span;
	struct vaai_dev *vdev = io->vdev;
	u32 bs = vdev->dev.dev_attrib.block_size;
	unsigned int i;
	int ret = 0;

	if (span->nr)
		vaai_io_lock(io, span->first * bs, (span->end - span->first) * bs,
			     false);
	for (i = 0; i < span->nr && !ret; i++)
		ret = vdev->store->unmap(vdev, (loff_t)req->range[i].lba * bs,
					 (loff_t)req->range[i].nolb * bs);
	if (!ret && span->nr)
		ret = vaai_dev_sync_if_write_through(vdev, span->first * bs,
						     (span->end - span->first) * bs);

	if (ret) {
		atomic64_inc(&vdev->stats.unmap_failed);
	} else {
		atomic64_inc(&vdev->stats.unmap);
		atomic64_add(span->blocks, &vdev->stats.unmap_blocks);
		io->len = (size_t)span->blocks * bs;	/* what it deallocated */
	}
	kfree(req);
	vaai_io_done(io, ret);
}

static void vaai_unmap_refuse(struct se_cmd *cmd, const struct vaai_fault *f)
{
	atomic64_inc(&to_vaai_dev(cmd->se_dev)->stats.unmap_failed);
	vaai_metrics_refused(cmd);
	vaai_cmd_complete_fault(cmd, f);
}

/*
 * Check the parameter list in buf (len bytes) and collect its ranges in
 * *reqp.  Returns 0, -ENOMEM, or 1 with the offending field in *f.
 */
static int vaai_unmap_collect(struct se_cmd *cmd, const u8 *buf, u32 len,
			      struct vaai_unmap_req **reqp, struct vaai_fault *f)
{
	struct se_dev_attrib *da = &cmd->se_dev->dev_attrib;
	const struct vaai_unmap_limits lim = {
		.nr_blocks = cmd->se_dev->transport->get_blocks(cmd->se_dev) + 1,
		.max_descs = da->max_unmap_block_desc_count,
		.max_lbas = da->max_unmap_lba_count,
	};
	struct vaai_unmap_req *req;
	unsigned int nr;

	*f = vaai_unmap_list_check(buf, len, &lim, &nr);
	if (f->key)
		return 1;
	req = kmalloc(struct_size(req, range, nr), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	*f = vaai_unmap_list_collect(buf, nr, &lim, &req->span, req->range);
	if (f->key) {
		kfree(req);
		return 1;
	}
	*reqp = req;
	return 0;
}

static sense_reason_t vaai_unmap_execute(struct se_cmd *cmd)
{
	u32 len = get_unaligned_be16(&cmd->t_task_cdb[7]);
	struct vaai_unmap_req *req = NULL;
	struct vaai_fault f;
	struct vaai_io *io;
	u8 *buf;
	int ret;

	/* SBC-4 5.32.1: an empty list is no error; a short header is. */
	if (!len) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	if (len < VAAI_UNMAP_HDR_LEN)
		return TCM_PARAMETER_LIST_LENGTH_ERROR;

	buf = transport_kmap_data_sg(cmd);
	if (!buf)
		return TCM_OUT_OF_RESOURCES;
	ret = vaai_unmap_collect(cmd, buf, len, &req, &f);
	/* Unmapped before any completion: the command is not ours after. */
	transport_kunmap_data_sg(cmd);
	if (ret < 0)
		return TCM_OUT_OF_RESOURCES;
	if (ret > 0) {
		vaai_unmap_refuse(cmd, &f);
		return TCM_NO_SENSE;
	}

	io = vaai_io_alloc(cmd);
	if (!io) {
		kfree(req);
		return TCM_OUT_OF_RESOURCES;
	}
	io->buf = req;
	io->write = true;
	/* Deallocation is metadata work: done here, as LIO core does its own. */
	vaai_unmap_work(io);
	return TCM_NO_SENSE;
}

sense_reason_t vaai_unmap_parse(struct se_cmd *cmd)
{
	struct vaai_cdb_args a;

	/* SBC-4 5.32.1: without LBPU the command is not supported. */
	if (!cmd->se_dev->dev_attrib.emulate_tpu)
		return TCM_UNSUPPORTED_SCSI_OPCODE;
	return vaai_cdb_accept(cmd, vaai_unmap_cdb_check(cmd->t_task_cdb, &a),
			       &a, VAAI_XFER_LIST, true, vaai_unmap_execute);
}
