// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the Third-party Copy VPD page (8Fh, SPC-4 7.8.17),
 * which tells a host what EXTENDED COPY and the token copy can do here.
 * Every figure in it is a limit vaai_xcopy.c or vaai_odx.c enforces; LIO
 * core does not have this page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>

#include "vaai_xcopy.h"

#define VAAI_VPD_TPC_MAX	1024

/* Third-party copy descriptor types (SPC-4 7.8.17.1, SBC-4 6.6.6). */
#define VAAI_TPC_ROD_LIMITS	0x0000
#define VAAI_TPC_COMMANDS	0x0001
#define VAAI_TPC_PARAMS		0x0004
#define VAAI_TPC_DESCRIPTORS	0x0008
#define VAAI_TPC_CSCD_IDS	0x000c
#define VAAI_TPC_ROD_FEATURES	0x0106
#define VAAI_TPC_ROD_TYPES	0x0108
#define VAAI_TPC_GENERAL	0x8001

/* Supported ROD Types descriptor: TOKEN_IN, TOKEN_OUT */
#define VAAI_ROD_TOKEN_IN	0x02
#define VAAI_ROD_TOKEN_OUT	0x01
#define VAAI_ROD_TYPE_DESC_LEN	64
/* ROD Token Features: the block device part's length, and its own */
#define VAAI_ROD_BLOCK_DESC_LEN	48

/*
 * Supported Commands: EXTENDED COPY (LID1), POPULATE TOKEN and WRITE USING
 * TOKEN, and the RECEIVE COPY RESULTS service actions vaai_copy_results.c
 * answers (RECEIVE ROD TOKEN INFORMATION among them), as opcode, count,
 * actions.
 */
static const u8 vaai_tpc_commands[] = {
	EXTENDED_COPY, 3, 0x00, 0x10, 0x11,
	RECEIVE_COPY_RESULTS, 4, 0x00, 0x03, 0x04, 0x07,
};

/* Start a descriptor of len data bytes at off; the offset after it, padded. */
static unsigned int vaai_tpc_desc(u8 *buf, unsigned int off, u16 type,
				  unsigned int len)
{
	len = round_up(len, 4);
	put_unaligned_be16(type, &buf[off]);
	put_unaligned_be16(len, &buf[off + 2]);
	return off + 4 + len;
}

/*
 * Block Device ROD Token Limits (SBC-4 6.6.6.2).  Windows reads this one
 * descriptor of the page, and only where it comes first.
 */
static unsigned int vaai_tpc_rod_limits(u8 *buf, unsigned int off, u32 bs)
{
	unsigned int d = off + 4;

	off = vaai_tpc_desc(buf, off, VAAI_TPC_ROD_LIMITS, 0x20);
	put_unaligned_be16(VAAI_ODX_MAX_RANGES, &buf[d + 6]);
	put_unaligned_be32(VAAI_ODX_MAX_TIMEOUT, &buf[d + 8]);
	put_unaligned_be32(VAAI_ODX_DEFAULT_TIMEOUT, &buf[d + 12]);
	put_unaligned_be64(VAAI_ODX_MAX_TOKEN_BYTES / bs, &buf[d + 16]);
	put_unaligned_be64(VAAI_ODX_OPT_TOKEN_BYTES / bs, &buf[d + 24]);
	return off;
}

/* ROD Token Features (SPC-4 7.8.17.10): no remote tokens; the sizes. */
static unsigned int vaai_tpc_rod_features(u8 *buf, unsigned int off)
{
	unsigned int d = off + 4, b;

	off = vaai_tpc_desc(buf, off, VAAI_TPC_ROD_FEATURES,
			    44 + VAAI_ROD_BLOCK_DESC_LEN);
	/* REMOTE TOKENS 0: tokens are ours alone */
	put_unaligned_be32(1, &buf[d + 12]);		/* MINIMUM TOKEN LIFETIME */
	put_unaligned_be32(VAAI_ODX_MAX_TIMEOUT, &buf[d + 16]);
	put_unaligned_be32(VAAI_ODX_MAX_TIMEOUT, &buf[d + 20]);
	put_unaligned_be16(VAAI_ROD_BLOCK_DESC_LEN, &buf[d + 42]);
	b = d + 44;				/* block device (type 0) */
	put_unaligned_be16(VAAI_ROD_BLOCK_DESC_LEN - 4, &buf[b + 2]);
	put_unaligned_be16(1, &buf[b + 6]);	/* granularity: any block */
	put_unaligned_be64(VAAI_ODX_MAX_TOKEN_BYTES, &buf[b + 8]);
	put_unaligned_be64(VAAI_ODX_OPT_TOKEN_BYTES, &buf[b + 16]);
	put_unaligned_be64(VAAI_ODX_OPT_TOKEN_BYTES, &buf[b + 24]);
	put_unaligned_be64(VAAI_ODX_OPT_TOKEN_BYTES, &buf[b + 32]);
	return off;
}

/*
 * Supported ROD Types (SPC-4 7.8.17.11): the ones we make and take, in
 * ascending order.  Any LUN takes every type we make; this one makes a
 * persistent point-in-time token only where its store shares extents.
 * POPULATE TOKEN's requests for "point in time, default" or "any" get one of
 * the two point-in-time types: no token is of those.
 */
static unsigned int vaai_tpc_rod_types(u8 *buf, unsigned int off,
				       const struct vaai_dev *vdev)
{
	const u8 both = VAAI_ROD_TOKEN_IN | VAAI_ROD_TOKEN_OUT;
	const struct {
		u32 type;
		u8 flags;
	} types[] = {
		{ VAAI_ROD_TYPE_AUR, both },
		{ VAAI_ROD_TYPE_PIT_VULNERABLE, both },
		{ VAAI_ROD_TYPE_PIT_PERSISTENT,
		  vdev->odx.share ? both : VAAI_ROD_TOKEN_IN },
		{ VAAI_ROD_TYPE_ZERO, VAAI_ROD_TOKEN_IN },
	};
	unsigned int d = off + 4, i;

	off = vaai_tpc_desc(buf, off, VAAI_TPC_ROD_TYPES,
			    4 + ARRAY_SIZE(types) * VAAI_ROD_TYPE_DESC_LEN);
	put_unaligned_be16(ARRAY_SIZE(types) * VAAI_ROD_TYPE_DESC_LEN, &buf[d + 2]);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		u8 *t = &buf[d + 4 + i * VAAI_ROD_TYPE_DESC_LEN];

		put_unaligned_be32(types[i].type, &t[0]);
		t[4] = types[i].flags;
	}
	return off;
}

/* Supported Commands, and what EXTENDED COPY (LID1) takes. */
static unsigned int vaai_tpc_lid1(u8 *buf, unsigned int off)
{
	unsigned int d = off + 4;

	off = vaai_tpc_desc(buf, off, VAAI_TPC_COMMANDS,
			    1 + sizeof(vaai_tpc_commands));
	buf[d] = sizeof(vaai_tpc_commands);
	memcpy(&buf[d + 1], vaai_tpc_commands, sizeof(vaai_tpc_commands));

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_PARAMS, 0x1c);
	put_unaligned_be16(VAAI_XCOPY_MAX_CSCDS, &buf[d + 4]);
	put_unaligned_be16(VAAI_XCOPY_MAX_SEGS, &buf[d + 6]);
	put_unaligned_be32(VAAI_XCOPY_MAX_DESC_LEN, &buf[d + 8]);
	/* MAXIMUM INLINE DATA LENGTH: 0 */

	d = off + 4;
	off = vaai_tpc_desc(buf, off, VAAI_TPC_DESCRIPTORS, 3);
	buf[d] = 2;
	buf[d + 1] = VAAI_SEG_B2B;
	buf[d + 2] = VAAI_CSCD_ID;

	/* Supported CSCD IDs: none (no 0xF800-0xFFFF shorthand) */
	return vaai_tpc_desc(buf, off, VAAI_TPC_CSCD_IDS, 2);
}

/* General Copy Operations: how many copies at once, and how large. */
static unsigned int vaai_tpc_general(u8 *buf, unsigned int off, u32 bs)
{
	unsigned int d = off + 4;

	off = vaai_tpc_desc(buf, off, VAAI_TPC_GENERAL, 0x20);
	put_unaligned_be32(VAAI_XCOPY_MAX_RUNNING, &buf[d]);
	put_unaligned_be32(VAAI_XCOPY_MAX_RUNNING, &buf[d + 4]);
	put_unaligned_be32(VAAI_XCOPY_MAX_SEG_BYTES, &buf[d + 8]);
	buf[d + 12] = ilog2(bs);
	return off;
}

/* The descriptors in ascending order of type, the ROD token limits first. */
sense_reason_t vaai_vpd_tpc_execute(struct se_cmd *cmd)
{
	struct se_device *dev = cmd->se_dev;
	u32 bs = dev->dev_attrib.block_size;
	unsigned int off = 4;
	u8 *buf;

	if (!dev->dev_attrib.emulate_3pc)
		return TCM_INVALID_CDB_FIELD;
	buf = kzalloc(VAAI_VPD_TPC_MAX, GFP_KERNEL);
	if (!buf)
		return TCM_OUT_OF_RESOURCES;
	buf[0] = dev->transport->get_device_type(dev);
	buf[1] = VAAI_VPD_TPC;

	off = vaai_tpc_rod_limits(buf, off, bs);
	off = vaai_tpc_lid1(buf, off);
	off = vaai_tpc_rod_features(buf, off);
	off = vaai_tpc_rod_types(buf, off, to_vaai_dev(dev));
	off = vaai_tpc_general(buf, off, bs);
	if (WARN_ON_ONCE(off > VAAI_VPD_TPC_MAX)) {
		kfree(buf);
		return TCM_LOGICAL_UNIT_COMMUNICATION_FAILURE;
	}
	put_unaligned_be16(off - 4, &buf[2]);
	vaai_cmd_complete_data(cmd, buf, off);
	kfree(buf);
	return TCM_NO_SENSE;
}
