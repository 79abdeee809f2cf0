// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: RECEIVE ROD TOKEN INFORMATION (SPC-4 6.19, 84h/07h):
 * how a POPULATE TOKEN or WRITE USING TOKEN of this I_T nexus ended, and
 * the token a POPULATE TOKEN made.  A finished operation is told once, as
 * RECEIVE COPY RESULTS tells EXTENDED COPY's (vaai_copy_results.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"

#define VAAI_RRTI_HDR_LEN	32	/* before the sense data */
#define VAAI_RRTI_TOKEN_DESC	(2 + VAAI_ODX_TOKEN_LEN)
#define VAAI_RRTI_MAX_LEN	(VAAI_RRTI_HDR_LEN + TRANSPORT_SENSE_BUFFER + \
				 4 + VAAI_RRTI_TOKEN_DESC)

/* COPY OPERATION STATUS (SPC-4 6.19.2) */
#define VAAI_RRTI_DONE		0x01
#define VAAI_RRTI_FAILED	0x02
#define VAAI_RRTI_PARTIAL	0x03	/* done, part of the token unused */
#define VAAI_RRTI_RUNNING	0x11	/* in progress, in the foreground */
/* ESTIMATED STATUS UPDATE DELAY of a finished operation */
#define VAAI_RRTI_NO_UPDATE	0xfffffffe
/* TRANSFER COUNT UNITS: logical blocks of the copy manager's LUN */
#define VAAI_RRTI_UNIT_BLOCKS	0xf1

static u8 vaai_rrti_status(const struct vaai_copy_status *st)
{
	switch (st->state) {
	case VAAI_COPY_RUNNING:
		return VAAI_RRTI_RUNNING;
	case VAAI_COPY_DONE:
		return st->partial ? VAAI_RRTI_PARTIAL : VAAI_RRTI_DONE;
	}
	return VAAI_RRTI_FAILED;
}

static u32 vaai_rrti_fill(const struct vaai_copy_status *st, u8 *buf, u32 bs,
			  bool *done)
{
	u8 state = READ_ONCE(st->state);
	u32 off = VAAI_RRTI_HDR_LEN;

	buf[4] = st->sa;		/* RESPONSE TO SERVICE ACTION */
	buf[5] = vaai_rrti_status(st);
	if (state == VAAI_COPY_RUNNING) {
		put_unaligned_be32(1000, &buf[8]);	/* ask again in 1 s */
	} else {
		put_unaligned_be32(VAAI_RRTI_NO_UPDATE, &buf[8]);
		buf[12] = st->scsi_status;
		buf[13] = st->sense_len;
		buf[14] = st->sense_len;
		memcpy(&buf[off], st->sense, st->sense_len);
		off += st->sense_len;
	}
	buf[15] = VAAI_RRTI_UNIT_BLOCKS;
	put_unaligned_be64(div_u64(atomic64_read(&st->bytes_done), bs), &buf[16]);
	/* ROD TOKEN DESCRIPTORS LENGTH, then 2 reserved bytes and the token */
	if (st->sa == VAAI_SA_POPULATE_TOKEN && state == VAAI_COPY_DONE) {
		put_unaligned_be32(VAAI_RRTI_TOKEN_DESC, &buf[off]);
		memcpy(&buf[off + 4 + 2], st->token, VAAI_ODX_TOKEN_LEN);
		off += VAAI_RRTI_TOKEN_DESC;
	}
	off += 4;
	put_unaligned_be32(off - 4, &buf[0]);
	*done = state != VAAI_COPY_RUNNING;
	return off;
}

sense_reason_t vaai_rrti_execute(struct se_cmd *cmd)
{
	u8 *buf = kzalloc(VAAI_RRTI_MAX_LEN, GFP_KERNEL);
	sense_reason_t ret;

	if (!buf)
		return TCM_OUT_OF_RESOURCES;
	ret = vaai_copy_answer(cmd, get_unaligned_be32(&cmd->t_task_cdb[2]),
			       true, buf, vaai_rrti_fill);
	kfree_sensitive(buf);
	return ret;
}
