// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: REPORT SUPPORTED OPERATION CODES, SPC-4 6.35.
 *
 * LIO core (6.1) does not implement it.  The table lists every command a
 * vaai LUN accepts, that is every CDB that reaches an execute function,
 * whether our own parsers pick it or LIO's sbc_parse_cdb() and
 * spc_parse_cdb() do; a command that a device attribute turns off is listed
 * only while the attribute lets it through.  The dispatcher asks the same
 * table which service actions an opcode has (vaai_opcodes_sa_enabled()).
 *
 * CDB USAGE DATA (SPC-4 6.35.3) is what the parsers look at: a bit is 1 when
 * some configuration of the LUN acts on it, 0 when it is ignored or when
 * every non-zero value is refused (treated as reserved).  The service
 * action field holds the service action.  CONTROL is 0: LIO core looks at
 * none of it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/* CDB byte 2 */
#define VAAI_RSOC_RCTD		0x80
#define VAAI_RSOC_OPTIONS	0x07
/* REPORTING OPTIONS */
#define VAAI_RSOC_ALL		0x0	/* all_commands */
#define VAAI_RSOC_OP		0x1	/* one opcode without service actions */
#define VAAI_RSOC_OP_SA		0x2	/* one opcode and service action */
#define VAAI_RSOC_OP_ANY	0x3	/* either (SPC-4r37, SPC-5) */

/* one_command byte 1: CTDP and SUPPORT */
#define VAAI_RSOC_CTDP		0x80
#define VAAI_RSOC_NOT_SUPPORTED	0x01
#define VAAI_RSOC_SUPPORTED	0x03	/* in conformance with a standard */
/* all_commands command descriptor, byte 5 */
#define VAAI_RSOC_DESC_CTDP	0x02
#define VAAI_RSOC_DESC_SERVACTV	0x01

#define VAAI_RSOC_HDR_LEN	4
#define VAAI_RSOC_DESC_LEN	8
#define VAAI_RSOC_CTD_LEN	12	/* command timeouts descriptor, 6.35.4 */
#define VAAI_RSOC_MAX_CDB	16

/* LIO keeps the ALUA access type as INQUIRY's TPGS bits: 10b, explicit. */
#define VAAI_TPGS_EXPLICIT	0x20

/*
 * Command timeouts, in seconds: the time to wait before asking how a
 * command is getting on, and the time to wait for it at all.
 */
enum vaai_opc_tmo {
	VAAI_TMO_QUICK,		/* answered from memory */
	VAAI_TMO_IO,		/* at most VAAI_MAX_IO_BYTES of the medium */
	VAAI_TMO_LONG,		/* a whole WRITE SAME, UNMAP, copy or flush */
};

static const struct {
	u32 nominal;
	u32 recommended;
} vaai_opc_tmo[] = {
	[VAAI_TMO_QUICK]	= { 1, 10 },
	[VAAI_TMO_IO]		= { 1, 30 },
	/* up to VAAI_MAX_WRITE_SAME_BYTES zeroed the slow way */
	[VAAI_TMO_LONG]		= { 10, 120 },
};

struct vaai_opc {
	const u8 *usage;	/* CDB USAGE DATA; usage[0] is the opcode */
	u8 cdb_len;
	u8 tmo;			/* enum vaai_opc_tmo */
	bool sa;		/* usage[1] bits 4:0 are a service action */
	bool (*enabled)(struct se_cmd *cmd);	/* NULL: always */
};

static bool vaai_opc_caw(struct se_cmd *cmd)
{
	return cmd->se_dev->dev_attrib.emulate_caw;
}

static bool vaai_opc_tpu(struct se_cmd *cmd)
{
	return cmd->se_dev->dev_attrib.emulate_tpu;
}

static bool vaai_opc_3pc(struct se_cmd *cmd)
{
	return cmd->se_dev->dev_attrib.emulate_3pc;
}

static bool vaai_opc_pr(struct se_cmd *cmd)
{
	return cmd->se_dev->dev_attrib.emulate_pr;
}

/* SET TARGET PORT GROUPS: LIO refuses it unless the port group allows it. */
static bool vaai_opc_explicit_alua(struct se_cmd *cmd)
{
	struct t10_alua_tg_pt_gp *gp;
	bool ret;

	if (!cmd->se_lun)
		return false;
	rcu_read_lock();
	gp = rcu_dereference(cmd->se_lun->lun_tg_pt_gp);
	ret = gp && (gp->tg_pt_gp_alua_access_type & VAAI_TPGS_EXPLICIT);
	rcu_read_unlock();
	return ret;
}

/* REPORT REFERRALS: LIO refuses it until an LBA map is configured. */
static bool vaai_opc_referrals(struct se_cmd *cmd)
{
	return !list_empty(&cmd->se_dev->t10_alua.lba_map_list);
}

#define VAAI_OPC_ENTRY(_sa, _tmo, _enabled, ...)			\
	{								\
		.usage = (const u8[]){ __VA_ARGS__ },			\
		.cdb_len = sizeof((const u8[]){ __VA_ARGS__ }) +	\
			   BUILD_BUG_ON_ZERO(sizeof((const u8[]){	\
				__VA_ARGS__ }) > VAAI_RSOC_MAX_CDB),	\
		.tmo = VAAI_TMO_##_tmo,					\
		.sa = _sa,						\
		.enabled = _enabled,					\
	}
#define VAAI_OPC(tmo, enabled, ...)	VAAI_OPC_ENTRY(false, tmo, enabled, __VA_ARGS__)
#define VAAI_OPC_SA(tmo, enabled, ...)	VAAI_OPC_ENTRY(true, tmo, enabled, __VA_ARGS__)
/* A 16-, 32- or 64-bit field the parser reads. */
#define F16	0xff, 0xff
#define F32	F16, F16
#define F64	F32, F32

/*
 * Byte 1 of READ/WRITE (10/12/16) and WRITE AND VERIFY: RDPROTECT/WRPROTECT
 * (LIO's sbc_check_prot() honours it with a fabric that carries protection
 * information), DPO and FUA (sbc_check_dpofua(); bit 3 of WRITE AND VERIFY
 * too).  BYTCHK of WRITE AND VERIFY is ignored: LIO only writes.
 */
#define RW	0xf8
/* VERIFY: BYTCHK; VRPROTECT is ignored (LIO) or refused (vaai_verify.c). */
#define VFY	0x06

static const struct vaai_opc vaai_opcs[] = {
	/* LIO core's SPC emulation (spc_parse_cdb()) */
	VAAI_OPC(QUICK, NULL, TEST_UNIT_READY, 0, 0, 0, 0, 0),
	/* DESC=1 is refused */
	VAAI_OPC(QUICK, NULL, REQUEST_SENSE, 0, 0, 0, 0xff, 0),
	/* EVPD, PAGE CODE; vaai_vpd.c reads the same */
	VAAI_OPC(QUICK, NULL, INQUIRY, 0x01, 0xff, F16, 0),
	/* PF; SP is ignored */
	VAAI_OPC(QUICK, NULL, MODE_SELECT, 0x10, 0, 0, 0xff, 0),
	VAAI_OPC(QUICK, NULL, MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, F16, 0),
	/* DBD (and LLBAA), PC and PAGE CODE, SUBPAGE CODE */
	VAAI_OPC(QUICK, NULL, MODE_SENSE, 0x08, 0xff, 0xff, 0xff, 0),
	VAAI_OPC(QUICK, NULL, MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, F16, 0),
	/* SPC-2 reservations: third-party and extent bits are ignored */
	VAAI_OPC(QUICK, vaai_opc_pr, RESERVE, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, vaai_opc_pr, RELEASE, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, vaai_opc_pr, RESERVE_10, 0, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC(QUICK, vaai_opc_pr, RELEASE_10, 0, 0, 0, 0, 0, 0, F16, 0),
	/* READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS */
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_IN, 0x00, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_IN, 0x01, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_IN, 0x02, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_IN, 0x03, 0, 0, 0, 0, 0, F16, 0),
	/*
	 * REGISTER, RESERVE, RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT,
	 * REGISTER AND IGNORE EXISTING KEY, REGISTER AND MOVE; SCOPE and TYPE
	 * matter to RESERVE, RELEASE and the PREEMPTs.
	 */
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x00, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x01, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x02, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x03, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x04, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x05, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x06, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_pr, PERSISTENT_RESERVE_OUT, 0x07, 0, 0, 0, F32, 0),
	VAAI_OPC(QUICK, NULL, REPORT_LUNS, 0, 0, 0, 0, 0, F32, 0, 0),
	/* PARAMETER DATA FORMAT */
	VAAI_OPC_SA(QUICK, NULL, MAINTENANCE_IN, 0xe0 | MI_REPORT_TARGET_PGS,
		    0, 0, 0, 0, F32, 0, 0),
	/* RCTD, REPORTING OPTIONS; this file */
	VAAI_OPC_SA(QUICK, NULL, MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES,
		    0x87, 0xff, F16, F32, 0, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_explicit_alua, MAINTENANCE_OUT, MO_SET_TARGET_PGS,
		    0, 0, 0, 0, F32, 0, 0),

	/* LIO core's SBC emulation (sbc_parse_cdb()), data through vaai_rw.c */
	VAAI_OPC(QUICK, NULL, REZERO_UNIT, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, NULL, SEEK_6, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, NULL, SEEK_10, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* IMMED and START must be 1, the rest 0 */
	VAAI_OPC(QUICK, NULL, START_STOP, 0x01, 0, 0, 0x01, 0),
	/* PMI; the LBA must be 0 */
	VAAI_OPC(QUICK, NULL, READ_CAPACITY, 0, 0, 0, 0, 0, 0, 0, 0x01, 0),
	VAAI_OPC_SA(QUICK, NULL, SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_referrals, SERVICE_ACTION_IN_16, SAI_REPORT_REFERRALS,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	/* 21-bit LBA, TRANSFER LENGTH */
	VAAI_OPC(IO, NULL, READ_6, 0x1f, 0xff, 0xff, 0xff, 0),
	VAAI_OPC(IO, NULL, WRITE_6, 0x1f, 0xff, 0xff, 0xff, 0),
	VAAI_OPC(IO, NULL, READ_10, RW, F32, 0, F16, 0),
	VAAI_OPC(IO, NULL, WRITE_10, RW, F32, 0, F16, 0),
	VAAI_OPC(IO, NULL, WRITE_VERIFY, RW, F32, 0, F16, 0),
	VAAI_OPC(IO, NULL, READ_12, RW, F32, F32, 0, 0),
	VAAI_OPC(IO, NULL, WRITE_12, RW, F32, F32, 0, 0),
	VAAI_OPC(IO, NULL, READ_16, RW, F64, F32, 0, 0),
	VAAI_OPC(IO, NULL, WRITE_16, RW, F64, F32, 0, 0),
	VAAI_OPC(IO, NULL, WRITE_VERIFY_16, RW, F64, F32, 0, 0),
	/* IMMED is ignored: the flush is always waited for */
	VAAI_OPC(LONG, NULL, SYNCHRONIZE_CACHE, 0, F32, 0, F16, 0),
	VAAI_OPC(LONG, NULL, SYNCHRONIZE_CACHE_16, 0, F64, F32, 0, 0),

	/* Ours (vaai_cdb_handlers[]); VERIFY without BYTCHK is LIO's */
	VAAI_OPC(IO, NULL, VERIFY, VFY, F32, 0, F16, 0),
	VAAI_OPC(IO, NULL, VERIFY_12, VFY, F32, F32, 0, 0),
	VAAI_OPC(IO, NULL, VERIFY_16, VFY, F64, F32, 0, 0),
	/* FUA; WRPROTECT is refused, DPO ignored */
	VAAI_OPC(IO, vaai_opc_caw, COMPARE_AND_WRITE, 0x08, F64, 0, 0, 0, 0xff, 0, 0),
	/* UNMAP (NDOB); ANCHOR and the obsolete PBDATA/LBDATA are refused */
	VAAI_OPC(LONG, NULL, WRITE_SAME, 0x08, F32, 0, F16, 0),
	VAAI_OPC(LONG, NULL, WRITE_SAME_16, 0x09, F64, F32, 0, 0),
	/* ANCHOR is refused */
	VAAI_OPC(LONG, vaai_opc_tpu, UNMAP, 0, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(IO, NULL, SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS,
		    F64, F32, 0, 0),
	/* EXTENDED COPY (LID1) */
	VAAI_OPC_SA(LONG, vaai_opc_3pc, EXTENDED_COPY, 0x00,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	/* COPY STATUS, OPERATING PARAMETERS, FAILED SEGMENT DETAILS */
	VAAI_OPC_SA(QUICK, vaai_opc_3pc, RECEIVE_COPY_RESULTS, 0x00,
		    0xff, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_3pc, RECEIVE_COPY_RESULTS, 0x03,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, vaai_opc_3pc, RECEIVE_COPY_RESULTS, 0x04,
		    0xff, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
};

#undef VFY
#undef RW
#undef F64
#undef F32
#undef F16

static bool vaai_opc_enabled(struct se_cmd *cmd, const struct vaai_opc *o)
{
	return !o->enabled || o->enabled(cmd);
}

static u8 vaai_opc_sa(const struct vaai_opc *o)
{
	return o->usage[1] & 0x1f;
}

/* The entry for opcode op, and service action sa when match_sa. */
static const struct vaai_opc *vaai_opc_find(u8 op, bool match_sa, u16 sa)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vaai_opcs); i++) {
		const struct vaai_opc *o = &vaai_opcs[i];

		if (o->usage[0] == op && (!match_sa || vaai_opc_sa(o) == sa))
			return o;
	}
	return NULL;
}

/*
 * The CDB's opcode has service actions and some of them are enabled: an
 * unknown one is a bad field, not an unknown command.
 */
bool vaai_opcodes_sa_enabled(struct se_cmd *cmd)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vaai_opcs); i++) {
		const struct vaai_opc *o = &vaai_opcs[i];

		if (o->usage[0] == cmd->t_task_cdb[0] && o->sa &&
		    vaai_opc_enabled(cmd, o))
			return true;
	}
	return false;
}

static void vaai_opc_put_timeouts(u8 *p, const struct vaai_opc *o)
{
	put_unaligned_be16(VAAI_RSOC_CTD_LEN - 2, &p[0]);
	put_unaligned_be32(vaai_opc_tmo[o->tmo].nominal, &p[4]);
	put_unaligned_be32(vaai_opc_tmo[o->tmo].recommended, &p[8]);
}

/* Parameter data at off, as far as the allocation length reaches. */
static void vaai_opcodes_put(struct se_cmd *cmd, const void *buf, u32 len,
			     u32 off)
{
	if (off >= cmd->data_length)
		return;
	sg_pcopy_from_buffer(cmd->t_data_sg, cmd->t_data_nents, buf,
			     min(len, cmd->data_length - off), off);
}

static void vaai_opcodes_done(struct se_cmd *cmd, u32 len)
{
	target_complete_cmd_with_length(cmd, SAM_STAT_GOOD,
					min(len, cmd->data_length));
}

/* SPC-4 6.35.2: one command descriptor per enabled entry. */
static void vaai_opcodes_report_all(struct se_cmd *cmd, bool rctd)
{
	u32 off = VAAI_RSOC_HDR_LEN;
	u8 hdr[VAAI_RSOC_HDR_LEN];
	int i;

	for (i = 0; i < ARRAY_SIZE(vaai_opcs); i++) {
		const struct vaai_opc *o = &vaai_opcs[i];
		u8 d[VAAI_RSOC_DESC_LEN + VAAI_RSOC_CTD_LEN] = {};
		u32 len = VAAI_RSOC_DESC_LEN;

		if (!vaai_opc_enabled(cmd, o))
			continue;
		d[0] = o->usage[0];
		if (o->sa) {
			put_unaligned_be16(vaai_opc_sa(o), &d[2]);
			d[5] |= VAAI_RSOC_DESC_SERVACTV;
		}
		put_unaligned_be16(o->cdb_len, &d[6]);
		if (rctd) {
			d[5] |= VAAI_RSOC_DESC_CTDP;
			vaai_opc_put_timeouts(&d[len], o);
			len += VAAI_RSOC_CTD_LEN;
		}
		vaai_opcodes_put(cmd, d, len, off);
		off += len;
	}
	put_unaligned_be32(off - VAAI_RSOC_HDR_LEN, hdr);
	vaai_opcodes_put(cmd, hdr, sizeof(hdr), 0);
	vaai_opcodes_done(cmd, off);
}

/*
 * SPC-4 6.35.3.  Reporting option 001b asks about an opcode without
 * service actions, 010b about one with, 011b about either; asked the other
 * way, the REQUESTED OPERATION CODE is the field in error.  An opcode the
 * table does not know is not supported, whatever the option.
 */
static void vaai_opcodes_report_one(struct se_cmd *cmd, u8 opts, bool rctd)
{
	const u8 *cdb = cmd->t_task_cdb;
	u8 buf[VAAI_RSOC_HDR_LEN + VAAI_RSOC_MAX_CDB + VAAI_RSOC_CTD_LEN] = {};
	const struct vaai_opc *o = vaai_opc_find(cdb[3], false, 0);
	u32 len = VAAI_RSOC_HDR_LEN;

	if (o && ((opts == VAAI_RSOC_OP && o->sa) ||
		  (opts == VAAI_RSOC_OP_SA && !o->sa))) {
		vaai_cmd_complete_bad_cdb(cmd, 3, 7);
		return;
	}
	if (o && o->sa)
		o = vaai_opc_find(cdb[3], true, get_unaligned_be16(&cdb[4]));

	buf[1] = VAAI_RSOC_NOT_SUPPORTED;
	if (o && vaai_opc_enabled(cmd, o)) {
		buf[1] = VAAI_RSOC_SUPPORTED;
		put_unaligned_be16(o->cdb_len, &buf[2]);
		memcpy(&buf[len], o->usage, o->cdb_len);
		len += o->cdb_len;
		if (rctd) {
			buf[1] |= VAAI_RSOC_CTDP;
			vaai_opc_put_timeouts(&buf[len], o);
			len += VAAI_RSOC_CTD_LEN;
		}
	}
	vaai_opcodes_put(cmd, buf, len, 0);
	vaai_opcodes_done(cmd, len);
}

static sense_reason_t vaai_opcodes_execute(struct se_cmd *cmd)
{
	u8 opts = cmd->t_task_cdb[2] & VAAI_RSOC_OPTIONS;
	bool rctd = cmd->t_task_cdb[2] & VAAI_RSOC_RCTD;

	switch (opts) {
	case VAAI_RSOC_ALL:
		vaai_opcodes_report_all(cmd, rctd);
		break;
	case VAAI_RSOC_OP:
	case VAAI_RSOC_OP_SA:
	case VAAI_RSOC_OP_ANY:
		vaai_opcodes_report_one(cmd, opts, rctd);
		break;
	default:
		vaai_cmd_complete_bad_cdb(cmd, 2, 2);
		break;
	}
	return TCM_NO_SENSE;
}

bool vaai_opcodes_match(const u8 *cdb)
{
	return cdb[0] == MAINTENANCE_IN &&
	       (cdb[1] & 0x1f) == MI_REPORT_SUPPORTED_OPERATION_CODES;
}

sense_reason_t vaai_opcodes_parse(struct se_cmd *cmd)
{
	sense_reason_t ret;

	ret = vaai_cdb_size_check(cmd, get_unaligned_be32(&cmd->t_task_cdb[6]),
				  false);
	if (ret)
		return ret;
	cmd->execute_cmd = vaai_opcodes_execute;
	return TCM_NO_SENSE;
}
