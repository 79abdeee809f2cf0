// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: REPORT SUPPORTED OPERATION CODES, SPC-4 6.35: the table
 * of every command a vaai LUN accepts and the parameter data built from
 * it.  Which of the LUN's features are on comes in as VAAI_OPC_* bits
 * (vaai_opcodes.c); the data goes out through a callback, as far as the
 * ALLOCATION LENGTH reaches.
 *
 * CDB USAGE DATA (SPC-4 6.35.3) is what the parsers look at: a bit is 1 when
 * some configuration of the LUN acts on it, 0 when it is ignored or when
 * every non-zero value is refused (treated as reserved).  The service
 * action field holds the service action.  CONTROL is 0: LIO core looks at
 * none of it.  DPO and FUA are 1 only while they are accepted
 * (VAAI_OPC_DPOFUA, MODE SENSE's DPOFUA bit).
 */
#include "vaai_parse.h"

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
	bool dpofua;		/* usage[1] has DPO and FUA: VAAI_OPC_DPOFUA */
	u8 needs;		/* VAAI_OPC_*: listed only if all are enabled */
};

/* CDB byte 1, where a command has them */
#define VAAI_RSOC_DPO		0x10
#define VAAI_RSOC_FUA		0x08

#define VAAI_OPC_ENTRY(_sa, _df, _tmo, _needs, ...)			\
	{								\
		.usage = (const u8[]){ __VA_ARGS__ },			\
		.cdb_len = sizeof((const u8[]){ __VA_ARGS__ }) +	\
			   BUILD_BUG_ON_ZERO(sizeof((const u8[]){	\
				__VA_ARGS__ }) > VAAI_RSOC_MAX_CDB),	\
		.tmo = VAAI_TMO_##_tmo,					\
		.sa = _sa,						\
		.dpofua = _df,						\
		.needs = _needs,					\
	}
#define VAAI_OPC(tmo, needs, ...)	VAAI_OPC_ENTRY(false, false, tmo, needs, __VA_ARGS__)
#define VAAI_OPC_SA(tmo, needs, ...)	VAAI_OPC_ENTRY(true, false, tmo, needs, __VA_ARGS__)
/* An opcode whose DPO and FUA bits are usable only with VAAI_OPC_DPOFUA */
#define VAAI_OPC_DF(tmo, needs, ...)	VAAI_OPC_ENTRY(false, true, tmo, needs, __VA_ARGS__)
/* A 16-, 32- or 64-bit field the parser reads. */
#define F16	0xff, 0xff
#define F32	F16, F16
#define F64	F32, F32

/*
 * Byte 1 of READ/WRITE (10/12/16): RDPROTECT/WRPROTECT (LIO's
 * sbc_check_prot() honours it with a fabric that carries protection
 * information), DPO and FUA (sbc_check_dpofua()).
 */
#define RW	0xf8
/* VERIFY: DPO, BYTCHK; VRPROTECT is refused (vaai_verify.c). */
#define VFY	0x16
/* WRITE AND VERIFY: DPO, BYTCHK 01b; WRPROTECT and BYTCHK 1xb refused. */
#define WAV	0x12

static const struct vaai_opc vaai_opcs[] = {
	/* LIO core's SPC emulation (spc_parse_cdb()) */
	VAAI_OPC(QUICK, 0, TEST_UNIT_READY, 0, 0, 0, 0, 0),
	/* DESC=1 is refused */
	VAAI_OPC(QUICK, 0, REQUEST_SENSE, 0, 0, 0, 0xff, 0),
	/* EVPD, PAGE CODE; vaai_vpd.c reads the same */
	VAAI_OPC(QUICK, 0, INQUIRY, 0x01, 0xff, F16, 0),
	/* PF; SP is ignored */
	VAAI_OPC(QUICK, 0, MODE_SELECT, 0x10, 0, 0, 0xff, 0),
	VAAI_OPC(QUICK, 0, MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, F16, 0),
	/* DBD (and LLBAA), PC and PAGE CODE, SUBPAGE CODE */
	VAAI_OPC(QUICK, 0, MODE_SENSE, 0x08, 0xff, 0xff, 0xff, 0),
	VAAI_OPC(QUICK, 0, MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, F16, 0),
	/* SPC-2 reservations: third-party and extent bits are ignored */
	VAAI_OPC(QUICK, VAAI_OPC_PR, RESERVE_6, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, VAAI_OPC_PR, RELEASE_6, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, VAAI_OPC_PR, RESERVE_10, 0, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC(QUICK, VAAI_OPC_PR, RELEASE_10, 0, 0, 0, 0, 0, 0, F16, 0),
	/* READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS */
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_IN, 0x00, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_IN, 0x01, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_IN, 0x02, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_IN, 0x03, 0, 0, 0, 0, 0, F16, 0),
	/*
	 * REGISTER, RESERVE, RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT,
	 * REGISTER AND IGNORE EXISTING KEY, REGISTER AND MOVE; SCOPE and TYPE
	 * matter to RESERVE, RELEASE and the PREEMPTs.
	 */
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x00, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x01, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x02, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x03, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x04, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x05, 0xff, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x06, 0, 0, 0, F32, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_PR, PERSISTENT_RESERVE_OUT, 0x07, 0, 0, 0, F32, 0),
	VAAI_OPC(QUICK, 0, REPORT_LUNS, 0, 0, 0, 0, 0, F32, 0, 0),
	/* PARAMETER DATA FORMAT; answered by vaai_rtpg.c */
	VAAI_OPC_SA(QUICK, 0, MAINTENANCE_IN, 0xe0 | MI_REPORT_TARGET_PGS,
		    0, 0, 0, 0, F32, 0, 0),
	/* RCTD, REPORTING OPTIONS; this file */
	VAAI_OPC_SA(QUICK, 0, MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES,
		    0x87, 0xff, F16, F32, 0, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_ALUA, MAINTENANCE_OUT, MO_SET_TARGET_PGS,
		    0, 0, 0, 0, F32, 0, 0),

	/* LIO core's SBC emulation (sbc_parse_cdb()), data through vaai_rw.c */
	VAAI_OPC(QUICK, 0, REZERO_UNIT, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, 0, SEEK_6, 0, 0, 0, 0, 0),
	VAAI_OPC(QUICK, 0, SEEK_10, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* IMMED and START must be 1, the rest 0 */
	VAAI_OPC(QUICK, 0, START_STOP, 0x01, 0, 0, 0x01, 0),
	/* PMI; the LBA must be 0 */
	VAAI_OPC(QUICK, 0, READ_CAPACITY, 0, 0, 0, 0, 0, 0, 0, 0x01, 0),
	VAAI_OPC_SA(QUICK, 0, SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_REFERRALS, SERVICE_ACTION_IN_16, SAI_REPORT_REFERRALS,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	/* 21-bit LBA, TRANSFER LENGTH */
	VAAI_OPC(IO, 0, READ_6, 0x1f, 0xff, 0xff, 0xff, 0),
	VAAI_OPC(IO, 0, WRITE_6, 0x1f, 0xff, 0xff, 0xff, 0),
	VAAI_OPC_DF(IO, 0, READ_10, RW, F32, 0, F16, 0),
	VAAI_OPC_DF(IO, 0, WRITE_10, RW, F32, 0, F16, 0),
	VAAI_OPC_DF(IO, 0, READ_12, RW, F32, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, WRITE_12, RW, F32, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, READ_16, RW, F64, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, WRITE_16, RW, F64, F32, 0, 0),
	/* IMMED is ignored: the flush is always waited for */
	VAAI_OPC(LONG, 0, SYNCHRONIZE_CACHE, 0, F32, 0, F16, 0),
	VAAI_OPC(LONG, 0, SYNCHRONIZE_CACHE_16, 0, F64, F32, 0, 0),

	/* Ours (vaai_cdb_handlers[]) */
	VAAI_OPC_DF(IO, 0, VERIFY, VFY, F32, 0, F16, 0),
	VAAI_OPC_DF(IO, 0, VERIFY_12, VFY, F32, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, VERIFY_16, VFY, F64, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, WRITE_VERIFY, WAV, F32, 0, F16, 0),
	VAAI_OPC_DF(IO, 0, WRITE_VERIFY_12, WAV, F32, F32, 0, 0),
	VAAI_OPC_DF(IO, 0, WRITE_VERIFY_16, WAV, F64, F32, 0, 0),
	/* DPO, FUA; ORPROTECT is refused, FUA_NV and the group ignored */
	VAAI_OPC_DF(IO, 0, ORWRITE_16, 0x18, F64, F32, 0, 0),
	/* DPO, FUA; WRPROTECT and an ATOMIC BOUNDARY are refused */
	VAAI_OPC_DF(IO, VAAI_OPC_ATOMIC, WRITE_ATOMIC_16, 0x18, F64, 0, 0, F16, 0, 0),
	/* IMMED; the group number is ignored */
	VAAI_OPC(IO, 0, PRE_FETCH, 0x02, F32, 0, F16, 0),
	VAAI_OPC(IO, 0, PRE_FETCH_16, 0x02, F64, F32, 0, 0),
	/* DPO, FUA; WRPROTECT is refused */
	VAAI_OPC_DF(IO, VAAI_OPC_CAW, COMPARE_AND_WRITE, 0x18, F64, 0, 0, 0, 0xff, 0, 0),
	/* UNMAP (NDOB); ANCHOR and the obsolete PBDATA/LBDATA are refused */
	VAAI_OPC(LONG, 0, WRITE_SAME, 0x08, F32, 0, F16, 0),
	VAAI_OPC(LONG, 0, WRITE_SAME_16, 0x09, F64, F32, 0, 0),
	/* ANCHOR is refused */
	VAAI_OPC(LONG, VAAI_OPC_TPU, UNMAP, 0, 0, 0, 0, 0, 0, F16, 0),
	VAAI_OPC_SA(IO, 0, SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS,
		    F64, F32, 0, 0),
	/* EXTENDED COPY (LID1) */
	VAAI_OPC_SA(LONG, VAAI_OPC_3PC, EXTENDED_COPY, 0x00,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	/* POPULATE TOKEN, WRITE USING TOKEN: LIST IDENTIFIER, the length */
	VAAI_OPC_SA(QUICK, VAAI_OPC_3PC, EXTENDED_COPY, 0x10,
		    0, 0, 0, 0, F32, F32, 0, 0),
	VAAI_OPC_SA(LONG, VAAI_OPC_3PC, EXTENDED_COPY, 0x11,
		    0, 0, 0, 0, F32, F32, 0, 0),
	/* COPY STATUS, OPERATING PARAMETERS, FAILED SEGMENT DETAILS */
	VAAI_OPC_SA(QUICK, VAAI_OPC_3PC, RECEIVE_COPY_RESULTS, 0x00,
		    0xff, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_3PC, RECEIVE_COPY_RESULTS, 0x03,
		    0, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	VAAI_OPC_SA(QUICK, VAAI_OPC_3PC, RECEIVE_COPY_RESULTS, 0x04,
		    0xff, 0, 0, 0, 0, 0, 0, 0, F32, 0, 0),
	/* RECEIVE ROD TOKEN INFORMATION */
	VAAI_OPC_SA(QUICK, VAAI_OPC_3PC, RECEIVE_COPY_RESULTS, 0x07,
		    F32, 0, 0, 0, 0, F32, 0, 0),
};

#undef VFY
#undef RW
#undef F64
#undef F32
#undef F16

static bool vaai_opc_enabled(const struct vaai_opc *o, u32 features)
{
	return (o->needs & features) == o->needs;
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
 * The opcode has service actions and some of them are enabled: an unknown
 * one is a bad field, not an unknown command.
 */
bool vaai_opcodes_sa_listed(u8 op, u32 features)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vaai_opcs); i++) {
		const struct vaai_opc *o = &vaai_opcs[i];

		if (o->usage[0] == op && o->sa && vaai_opc_enabled(o, features))
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
static void vaai_opcodes_put(const struct vaai_opcodes_out *out,
			     const void *buf, u32 len, u32 off)
{
	if (off >= out->alloc_len)
		return;
	out->put(out->ctx, buf, min(len, out->alloc_len - off), off);
}

/* SPC-4 6.35.2: one command descriptor per enabled entry. */
static u32 vaai_opcodes_report_all(const struct vaai_opcodes_out *out,
				   u32 features, bool rctd)
{
	u32 off = VAAI_RSOC_HDR_LEN;
	u8 hdr[VAAI_RSOC_HDR_LEN];
	int i;

	for (i = 0; i < ARRAY_SIZE(vaai_opcs); i++) {
		const struct vaai_opc *o = &vaai_opcs[i];
		u8 d[VAAI_RSOC_DESC_LEN + VAAI_RSOC_CTD_LEN] = {};
		u32 len = VAAI_RSOC_DESC_LEN;

		if (!vaai_opc_enabled(o, features))
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
		vaai_opcodes_put(out, d, len, off);
		off += len;
	}
	put_unaligned_be32(off - VAAI_RSOC_HDR_LEN, hdr);
	vaai_opcodes_put(out, hdr, sizeof(hdr), 0);
	return off;
}

/*
 * SPC-4 6.35.3.  Reporting option 001b asks about an opcode without
 * service actions, 010b about one with, 011b about either; asked the other
 * way, the REQUESTED OPERATION CODE is the field in error.  An opcode the
 * table does not know is not supported, whatever the option.
 */
static struct vaai_fault vaai_opcodes_report_one(const struct vaai_opcodes_out *out,
						 const u8 *cdb, u32 features,
						 u8 opts, bool rctd, u32 *total)
{
	u8 buf[VAAI_RSOC_HDR_LEN + VAAI_RSOC_MAX_CDB + VAAI_RSOC_CTD_LEN] = {};
	const struct vaai_opc *o = vaai_opc_find(cdb[3], false, 0);
	u32 len = VAAI_RSOC_HDR_LEN;

	if (o && ((opts == VAAI_RSOC_OP && o->sa) ||
		  (opts == VAAI_RSOC_OP_SA && !o->sa)))
		return vaai_fault_cdb(3, 7);
	if (o && o->sa)
		o = vaai_opc_find(cdb[3], true, get_unaligned_be16(&cdb[4]));

	buf[1] = VAAI_RSOC_NOT_SUPPORTED;
	if (o && vaai_opc_enabled(o, features)) {
		buf[1] = VAAI_RSOC_SUPPORTED;
		put_unaligned_be16(o->cdb_len, &buf[2]);
		memcpy(&buf[len], o->usage, o->cdb_len);
		if (o->dpofua && !(features & VAAI_OPC_DPOFUA))
			buf[len + 1] &= ~(VAAI_RSOC_DPO | VAAI_RSOC_FUA);
		len += o->cdb_len;
		if (rctd) {
			buf[1] |= VAAI_RSOC_CTDP;
			vaai_opc_put_timeouts(&buf[len], o);
			len += VAAI_RSOC_CTD_LEN;
		}
	}
	vaai_opcodes_put(out, buf, len, 0);
	*total = len;
	return VAAI_FAULT_NONE;
}

/*
 * The parameter data for a REPORT SUPPORTED OPERATION CODES CDB, through
 * out->put; *len: the bytes returned (cut to the allocation length).  A
 * refusal is INVALID FIELD IN CDB with its field pointer, nothing put.
 */
struct vaai_fault vaai_opcodes_report(const u8 *cdb, u32 features,
				      const struct vaai_opcodes_out *out,
				      u32 *len)
{
	u8 opts = cdb[2] & VAAI_RSOC_OPTIONS;
	bool rctd = cdb[2] & VAAI_RSOC_RCTD;
	struct vaai_fault f = VAAI_FAULT_NONE;
	u32 total;

	switch (opts) {
	case VAAI_RSOC_ALL:
		total = vaai_opcodes_report_all(out, features, rctd);
		break;
	case VAAI_RSOC_OP:
	case VAAI_RSOC_OP_SA:
	case VAAI_RSOC_OP_ANY:
		f = vaai_opcodes_report_one(out, cdb, features, opts, rctd, &total);
		break;
	default:
		return vaai_fault_cdb(2, 2);
	}
	if (!f.key)
		*len = min(total, out->alloc_len);
	return f;
}
