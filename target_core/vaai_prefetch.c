// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: PRE-FETCH (10) and (16), SBC-4.
 *
 * The blocks are read into the cache the LUN's READs are served from: the
 * page cache of a file store read through it (attrib/io_mode buffered, or
 * auto with the write cache on).  The block store and a file read with
 * direct I/O have no such cache, and a cache holds only so much: for
 * blocks that do not all fit SBC-4 gives GOOD, for blocks that are now in
 * the cache CONDITION MET.  IMMED 1 is answered as IMMED 0 is, once the
 * blocks are in: then the status is one they earned (the kernel's own
 * readahead hint reads only as far as the readahead window).  The medium
 * is not changed either way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <scsi/scsi_proto.h>

#include "vaai.h"

/* What one PRE-FETCH may claim of the cache: what one READ may transfer. */
#define VAAI_PREFETCH_MAX_BYTES	VAAI_MAX_IO_BYTES

static void vaai_prefetch_work(struct vaai_io *io)
{
	struct se_cmd *cmd = io->cmd;
	size_t len = min_t(size_t, io->len, VAAI_PREFETCH_MAX_BYTES);
	int ret;

	ret = io->vdev->store->prefetch(io->vdev, io->pos, len);
	if (ret < 0 && ret != -EOPNOTSUPP) {
		vaai_io_done(io, ret);
		return;
	}
	vaai_io_finish(io);
	vaai_cmd_done(cmd, !ret && len == io->len ?
			    SAM_STAT_CONDITION_MET : SAM_STAT_GOOD);
}

static sense_reason_t vaai_prefetch_execute(struct se_cmd *cmd)
{
	if (!to_vaai_dev(cmd->se_dev)->store->prefetch) {
		vaai_cmd_done(cmd, SAM_STAT_GOOD);
		return TCM_NO_SENSE;
	}
	return vaai_execute_blocks(cmd, vaai_prefetch_work, false, false, false);
}

sense_reason_t vaai_prefetch_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_prefetch_cdb_check, VAAI_XFER_IN, false,
			      vaai_prefetch_execute);
}
