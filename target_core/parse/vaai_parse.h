/* SPDX-License-Identifier: GPL-2.0 */
/*
 * target_core_vaai: the pure parsing and validation code.
 *
 * Everything declared here takes plain inputs (a buffer and its length, the
 * LUN's capacity in blocks, its block size and limits) and neither sleeps,
 * allocates nor looks at a se_cmd: the same files build into the module and
 * into the host-side tests and fuzzers (tests/parsers, tests/fuzz), which
 * include tests/fuzz/kcompat/ instead of the kernel's headers.
 */
#ifndef VAAI_PARSE_H
#define VAAI_PARSE_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/types.h>
#include <scsi/scsi_proto.h>
#else
#include "kcompat.h"
#endif
#include "../compat.h"
#include "vaai_sense_codes.h"

/* Opcodes scsi_proto.h does not name. */
#ifndef PRE_FETCH_16
#define PRE_FETCH_16			0x90
#endif
#ifndef WRITE_ATOMIC_16
#define WRITE_ATOMIC_16			0x9c
#endif
#ifndef ORWRITE_16
#define ORWRITE_16			0x8b
#endif

/* COMPARE AND WRITE: the Block Limits byte allows no more. */
#define VAAI_CAW_MAX_BLOCKS		255

/* An additional sense code and its qualifier, as ASC << 8 | ASCQ. */
#define VAAI_ASC_ENUM(name, asc, ascq)	VAAI_ASC_##name = (asc) << 8 | (ascq),
enum vaai_asc {
	VAAI_ASC_LIST(VAAI_ASC_ENUM)
};
#undef VAAI_ASC_ENUM

static inline u8 vaai_asc(enum vaai_asc code)
{
	return code >> 8;
}

static inline u8 vaai_ascq(enum vaai_asc code)
{
	return code & 0xff;
}

/*
 * A refusal: the sense to answer with, and the field at fault for the
 * sense-key specific field pointer (SPC-4 4.5.2.4.2).  key 0: no refusal.
 */
struct vaai_fault {
	u8 key, asc, ascq;
	bool in_cdb;		/* C/D: the field is in the CDB */
	int byte;		/* -1: no field pointer */
	int bit;		/* -1: the whole byte */
};

#define VAAI_FAULT_NONE	((struct vaai_fault){ 0 })

/* [lba, lba + nolb) lies inside nr_blocks blocks (nolb 0: lba does). */
static inline bool vaai_lba_range_ok(u64 nr_blocks, u64 lba, u64 nolb)
{
	return lba < nr_blocks && nolb <= nr_blocks - lba;
}

/* This sense, pointing at a parameter list's byte unless byte < 0. */
static inline struct vaai_fault vaai_fault_sense(u8 key, enum vaai_asc code,
						 int byte, int bit)
{
	return (struct vaai_fault){ key, vaai_asc(code), vaai_ascq(code),
				    false, byte, bit };
}

static inline struct vaai_fault vaai_fault_param(enum vaai_asc code, int byte,
						 int bit)
{
	return vaai_fault_sense(ILLEGAL_REQUEST, code, byte, bit);
}

/* INVALID FIELD IN PARAMETER LIST, at byte (and bit, unless -1). */
static inline struct vaai_fault vaai_fault_field(int byte, int bit)
{
	return vaai_fault_param(VAAI_ASC_INVALID_FIELD_IN_PARAMETER_LIST,
				byte, bit);
}

/* PARAMETER LIST LENGTH ERROR: the list is shorter than it says. */
static inline struct vaai_fault vaai_fault_length(void)
{
	return vaai_fault_param(VAAI_ASC_PARAMETER_LIST_LENGTH_ERROR, -1, -1);
}

static inline struct vaai_fault vaai_fault_cdb(int byte, int bit)
{
	struct vaai_fault f = vaai_fault_param(VAAI_ASC_INVALID_FIELD_IN_CDB,
					       byte, bit);

	f.in_cdb = true;
	return f;
}

/* vaai_sense_data.c: sense data, SPC-4 4.5 */
#define VAAI_SENSE_DESC_LEN		8	/* descriptor format header */
#define VAAI_SENSE_FIXED_LEN		18
#define VAAI_SENSE_INFO_DESC_LEN	12	/* information descriptor */
#define VAAI_SENSE_SKS_DESC_LEN		8	/* sense-key specific descriptor */
u32 vaai_sense_build(u8 *buf, u32 size, bool desc, u8 key, u8 asc, u8 ascq);
u32 vaai_sense_build_fault(u8 *buf, u32 size, bool desc,
			   const struct vaai_fault *f);
u32 vaai_sense_set_info(u8 *buf, u32 size, u64 info);
u32 vaai_sense_set_csi(u8 *buf, u32 size, u64 csi);

/* vaai_unmap_list.c: the UNMAP parameter list, SBC-4 5.32.2 */
#define VAAI_UNMAP_HDR_LEN		8
#define VAAI_UNMAP_DESC_LEN		16

struct vaai_unmap_limits {
	u64 nr_blocks;		/* capacity */
	u32 max_descs;		/* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	u32 max_lbas;		/* MAXIMUM UNMAP LBA COUNT */
};

struct vaai_unmap_range {
	u64 lba;
	u32 nolb;
};

/* What an accepted list deallocates. */
struct vaai_unmap_span {
	unsigned int nr;	/* ranges, descriptors of 0 blocks left out */
	u64 blocks;		/* their sum */
	u64 first, end;		/* span of all ranges, in blocks */
};

struct vaai_fault vaai_unmap_list_check(const u8 *buf, u32 len,
					const struct vaai_unmap_limits *lim,
					unsigned int *nr);
struct vaai_fault vaai_unmap_list_collect(const u8 *buf, unsigned int nr,
					  const struct vaai_unmap_limits *lim,
					  struct vaai_unmap_span *span,
					  struct vaai_unmap_range *range);

/* vaai_xcopy_list.c: the EXTENDED COPY (LID1) parameter list, SPC-4 6.4 */
/* What we enforce, and report in OPERATING PARAMETERS and VPD 0x8F. */
#define VAAI_XCOPY_MAX_CSCDS		32
#define VAAI_XCOPY_MAX_SEGS		256
#define VAAI_XCOPY_HDR_LEN		16
#define VAAI_XCOPY_CSCD_LEN		32
#define VAAI_XCOPY_SEG_B2B_LEN		28
#define VAAI_XCOPY_MAX_DESC_LEN		(VAAI_XCOPY_MAX_CSCDS * VAAI_XCOPY_CSCD_LEN + \
					 VAAI_XCOPY_MAX_SEGS * VAAI_XCOPY_SEG_B2B_LEN)
/* NUMBER OF BLOCKS is 16 bits: 65535 blocks of 4 KiB fit. */
#define VAAI_XCOPY_MAX_SEG_BYTES	(256U << 20)

/* Descriptor type codes (SPC-4 6.4.5.1, 6.4.6.1). */
#define VAAI_CSCD_ID			0xe4	/* identification descriptor */
#define VAAI_SEG_B2B			0x02	/* block device to block device */

/* LIST ID USAGE, parameter list byte 1 bits 4:3 (SPC-4 6.4.3.2). */
#define VAAI_LID_HOLD			0
#define VAAI_LID_NO_HOLD		2
#define VAAI_LID_NONE			3

/* A CSCD descriptor's LUN, as the segments are checked against it. */
struct vaai_cscd_info {
	u64 nr_blocks;
	u32 block_size;			/* not 0 */
	bool readonly;			/* no writes through this nexus */
	bool src, dst;			/* some segment reads / writes it */
};

/* One block-to-block segment, in bytes. */
struct vaai_xseg {
	u16 src, dst;			/* CSCD indexes */
	loff_t src_pos, dst_pos, len;
};

/*
 * The LUN the identification descriptor desc (the list's idx-th CSCD)
 * names, if the nexus may reach it; NULL if not.  The module resolves it
 * among the nexus's LUNs (vaai_cscd.c), the host tests among fakes.
 */
typedef struct vaai_cscd_info *(*vaai_cscd_resolve_t)(void *ctx,
						     const u8 *desc,
						     unsigned int idx);

struct vaai_xcopy_list {
	u8 list_id;
	bool listed;			/* has a list identifier */
	bool hold;			/* ... and is kept once done */
	unsigned int nr_cscds, nr_segs;
	struct vaai_cscd_info *cscd[VAAI_XCOPY_MAX_CSCDS];
	struct vaai_xseg seg[VAAI_XCOPY_MAX_SEGS];
};

struct vaai_fault vaai_xcopy_list_parse(const u8 *p, u32 len,
					struct vaai_xcopy_list *xl,
					vaai_cscd_resolve_t resolve, void *ctx);

/*
 * vaai_odx_list.c: the token copy (ODX) parameter lists, SBC-4 5.9 POPULATE
 * TOKEN and 5.51 WRITE USING TOKEN, and the ROD token's header, SPC-4
 * 6.6.  What we enforce is what the Third-party Copy VPD page reports.
 */
#define VAAI_ODX_MAX_RANGES		64	/* MAXIMUM RANGE DESCRIPTORS */
#define VAAI_ODX_RANGE_LEN		16
#define VAAI_ODX_PT_HDR_LEN		16
#define VAAI_ODX_WUT_HDR_LEN		536
#define VAAI_ODX_TOKEN_LEN		512
#define VAAI_ODX_TOKEN_OFF		16	/* in the WRITE USING TOKEN list */
/* ROD TOKEN LENGTH of a 512-byte token: the bytes after the field */
#define VAAI_ODX_TOKEN_BODY		(VAAI_ODX_TOKEN_LEN - 8)
/* MAXIMUM TOKEN TRANSFER SIZE, and OPTIMAL TRANSFER COUNT, in bytes */
#define VAAI_ODX_MAX_TOKEN_BYTES	(1ULL << 30)
#define VAAI_ODX_OPT_TOKEN_BYTES	(64ULL << 20)
/* Inactivity timeouts, seconds */
#define VAAI_ODX_DEFAULT_TIMEOUT	60
#define VAAI_ODX_MAX_TIMEOUT		3600
/* ROD TYPE values (SPC-4 table 117; SBC-4 for the zero token) */
#define VAAI_ROD_TYPE_AUR		0x00010000	/* access upon reference */
#define VAAI_ROD_TYPE_PIT_DEFAULT	0x00800000	/* point in time copy: */
#define VAAI_ROD_TYPE_PIT_VULNERABLE	0x00800001	/* ... change vulnerable */
#define VAAI_ROD_TYPE_PIT_PERSISTENT	0x00800002	/* ... persistent */
#define VAAI_ROD_TYPE_PIT_ANY		0x0080ffff	/* ... any of them */
#define VAAI_ROD_TYPE_ZERO		0xffff0001	/* block device zero ROD token */

struct vaai_odx_range {
	u64 lba;
	u32 nolb;
};

/* What the limits are checked against: the LUN the command came to. */
struct vaai_odx_lun {
	u64 nr_blocks;
	u32 block_size;			/* not 0 */
};

/* An accepted list. */
struct vaai_odx_list {
	bool immed;
	bool rtv, del_tkn;		/* POPULATE TOKEN; WRITE USING TOKEN */
	u32 timeout;			/* seconds, the default filled in */
	u32 rod_type;			/* POPULATE TOKEN: asked for; 0: ours */
	u64 offset;			/* WRITE USING TOKEN: OFFSET INTO ROD */
	const u8 *token;		/* ... and where its token is */
	u64 blocks;			/* sum of the ranges */
	unsigned int nr;		/* ranges, those of 0 blocks left out */
	struct vaai_odx_range range[VAAI_ODX_MAX_RANGES];
};

struct vaai_fault vaai_odx_pt_parse(const u8 *p, u32 len,
				    const struct vaai_odx_lun *lun,
				    struct vaai_odx_list *l);
struct vaai_fault vaai_odx_wut_parse(const u8 *p, u32 len,
				     const struct vaai_odx_lun *lun,
				     struct vaai_odx_list *l);
/* A ROD token's header: its ROD TYPE if it is one we take. */
struct vaai_fault vaai_odx_token_check(const u8 *tok, u32 *rod_type);

/*
 * The bytes a token represents (its ranges, in blocks of src_bs, one after
 * another) from byte skip on, laid over the destination's ranges (blocks of
 * dst_bs), as segments from CSCD 0 to CSCD 1.  Fills at most max segments;
 * returns how many, and *bytes how much they move: all of the destination
 * ranges, or less where the token runs out (whole destination blocks only).
 */
unsigned int vaai_odx_map(const struct vaai_odx_range *src, unsigned int nr_src,
			  u32 src_bs, u64 skip,
			  const struct vaai_odx_range *dst, unsigned int nr_dst,
			  u32 dst_bs, struct vaai_xseg *seg, unsigned int max,
			  u64 *bytes);

/*
 * vaai_cdb_fields.c: CDB fields of the commands we parse.  LIO core builds
 * the sense for each outcome (vaai_cdb_reason() in vaai_cdb.c).
 */
enum vaai_cdb_err {
	VAAI_CDB_OK,
	VAAI_CDB_INVALID_FIELD,		/* INVALID FIELD IN CDB */
	VAAI_CDB_LBA_OUT_OF_RANGE,	/* LOGICAL BLOCK ADDRESS OUT OF RANGE */
	VAAI_CDB_LIST_LENGTH,		/* PARAMETER LIST LENGTH ERROR */
};

/* What the CDB checks know of the LUN. */
struct vaai_cdb_lun {
	u64 nr_blocks;
	u32 block_size;
	u32 max_write_same_len;		/* blocks */
	u32 hw_max_sectors;		/* blocks */
	bool tpws;			/* WRITE SAME with UNMAP enabled */
	bool dpofua;			/* DPO and FUA bits accepted */
	/* WRITE ATOMIC (16), in blocks, powers of two; atomic_max 0: none */
	u32 atomic_max;			/* MAXIMUM ATOMIC TRANSFER LENGTH */
	u32 atomic_align;		/* ATOMIC ALIGNMENT */
	u32 atomic_gran;		/* ATOMIC TRANSFER LENGTH GRANULARITY */
	u32 atomic_boundary;		/* none may cross a multiple of it; 0: none */
};

/* CDB byte 1 of the writes, COMPARE AND WRITE, WRITE SAME and VERIFY */
#define VAAI_WRPROTECT			0xe0
#define VAAI_DPO			0x10
#define VAAI_FUA			0x08

/* A CDB's fields once they pass. */
struct vaai_cdb_args {
	u64 lba;
	u32 nolb;
	u32 size;			/* data-out or allocation length it describes */
};

/* VERIFY's BYTCHK, CDB byte 1 bits 2:1 (SBC-4 5.33) */
#define VAAI_VERIFY_BYTCHK(b1)		(((b1) >> 1) & 0x3)
#define VAAI_BYTCHK_ALL			0x1	/* the blocks to compare */
#define VAAI_BYTCHK_ONE_BLOCK		0x3	/* one block, for all */

typedef enum vaai_cdb_err (*vaai_cdb_check_t)(const u8 *cdb,
					      const struct vaai_cdb_lun *lun,
					      struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_caw_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				     struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_ws_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				    struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_verify_cdb_check(const u8 *cdb,
					const struct vaai_cdb_lun *lun,
					struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_write_atomic_cdb_check(const u8 *cdb,
					      const struct vaai_cdb_lun *lun,
					      struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_write_verify_cdb_check(const u8 *cdb,
					      const struct vaai_cdb_lun *lun,
					      struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_orwrite_cdb_check(const u8 *cdb,
					 const struct vaai_cdb_lun *lun,
					 struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_prefetch_cdb_check(const u8 *cdb,
					  const struct vaai_cdb_lun *lun,
					  struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_lbas_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				      struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_unmap_cdb_check(const u8 *cdb, struct vaai_cdb_args *a);
enum vaai_cdb_err vaai_xcopy_cdb_check(const u8 *cdb, struct vaai_cdb_args *a);

/* vaai_miscompare.c: where data differs, for MISCOMPARE's INFORMATION */
size_t vaai_diff_bytes(const u8 *a, const u8 *b, size_t n);
size_t vaai_diff_pattern(const u8 *block, u32 bs, size_t phase,
			 const u8 *data, size_t n);

/* vaai_lba_status_data.c: GET LBA STATUS parameter data, SBC-4 5.8.2 */
#define VAAI_LBAS_HDR_LEN		8
#define VAAI_LBAS_DESC_LEN		16
/* Bounded work per command, whatever the allocation length says. */
#define VAAI_LBAS_MAX_DESCS		1024
/* The longest reply, and all a reply buffer ever needs. */
#define VAAI_LBAS_MAX_LEN \
	(VAAI_LBAS_HDR_LEN + VAAI_LBAS_MAX_DESCS * VAAI_LBAS_DESC_LEN)

/*
 * The store's provisioning state at byte pos: *mapped, and the length in
 * bytes (at most len) of the extent in that state; or a negative errno.
 */
typedef loff_t (*vaai_lbas_map_t)(void *ctx, loff_t pos, loff_t len,
				  bool *mapped);

struct vaai_lbas_req {
	u64 lba;			/* STARTING LOGICAL BLOCK ADDRESS */
	u64 nr_blocks;			/* capacity */
	u32 block_size;
	u32 alloc_len;			/* ALLOCATION LENGTH */
};

int vaai_lbas_reply_build(const struct vaai_lbas_req *req, u8 *buf,
			  vaai_lbas_map_t map, void *ctx, u32 *len);

/* vaai_rtpg_data.c: REPORT TARGET PORT GROUPS parameter data, SPC-4 6.36 */
#define VAAI_RTPG_HDR_LEN		4
#define VAAI_RTPG_EXT_HDR_LEN		8
#define VAAI_RTPG_GROUP_LEN		8
#define VAAI_RTPG_PORT_LEN		4
/* PARAMETER DATA FORMAT, CDB byte 1 bits 7-5 */
#define VAAI_RTPG_FORMAT(cdb)		((cdb)[1] >> 5)
#define VAAI_RTPG_FMT_LENGTH_ONLY	0x0
#define VAAI_RTPG_FMT_EXTENDED		0x1

struct vaai_rtpg_group {
	u16 id;
	u8 state;			/* ASYMMETRIC ACCESS STATE */
	u8 supported;			/* T_SUP ... AO_SUP */
	u8 status;			/* STATUS CODE */
	bool pref;
};

struct vaai_rtpg_out {
	u8 *buf;
	u32 cap;			/* bytes of buf */
	u32 len;			/* of the parameter data so far */
	u32 group;			/* where the group begun last starts */
	u8 nr_ports;			/* of that group */
};

enum vaai_cdb_err vaai_rtpg_cdb_check(const u8 *cdb,
				      const struct vaai_cdb_lun *lun,
				      struct vaai_cdb_args *a);
void vaai_rtpg_begin(struct vaai_rtpg_out *o, u8 *buf, u32 cap, bool ext,
		     u8 trans_secs);
void vaai_rtpg_group(struct vaai_rtpg_out *o, const struct vaai_rtpg_group *g);
void vaai_rtpg_port(struct vaai_rtpg_out *o, u16 rtpi);
void vaai_rtpg_group_end(struct vaai_rtpg_out *o);
u32 vaai_rtpg_end(struct vaai_rtpg_out *o);

/* vaai_opcodes_data.c: REPORT SUPPORTED OPERATION CODES, SPC-4 6.35 */
/* What a command of the table needs enabled on the LUN to be listed. */
#define VAAI_OPC_CAW			BIT(0)	/* emulate_caw */
#define VAAI_OPC_TPU			BIT(1)	/* emulate_tpu */
#define VAAI_OPC_3PC			BIT(2)	/* emulate_3pc */
#define VAAI_OPC_PR			BIT(3)	/* emulate_pr */
#define VAAI_OPC_ALUA			BIT(4)	/* explicit ALUA on the port group */
#define VAAI_OPC_REFERRALS		BIT(5)	/* an LBA map is configured */
#define VAAI_OPC_DPOFUA			BIT(6)	/* DPO and FUA bits accepted */
#define VAAI_OPC_ATOMIC			BIT(7)	/* WRITE ATOMIC (16): untorn writes */

/* Where parameter data goes: alloc_len bytes, put at byte offsets. */
struct vaai_opcodes_out {
	u32 alloc_len;
	void (*put)(void *ctx, const void *buf, u32 len, u32 off);
	void *ctx;
};

bool vaai_opcodes_sa_listed(u8 op, u32 features);
struct vaai_fault vaai_opcodes_report(const u8 *cdb, u32 features,
				      const struct vaai_opcodes_out *out,
				      u32 *len);

/* vaai_range_queue.c: LBA range locks, the queue without its lock and waits */
struct vaai_range {
	struct list_head node;
	loff_t start, end;		/* bytes, end exclusive */
	bool excl;
};

struct vaai_range_queue {
	struct list_head list;		/* granted and waiting, in arrival order */
	unsigned int nr_excl;		/* exclusive requests queued */
};

void vaai_range_queue_init(struct vaai_range_queue *q);
bool vaai_range_conflicts(const struct vaai_range *a, const struct vaai_range *b);
bool vaai_range_grantable(const struct vaai_range_queue *q,
			  const struct vaai_range *r);
bool vaai_range_queue_would_wait(const struct vaai_range_queue *q,
				 loff_t start, loff_t end, bool excl);
bool vaai_range_queue_add(struct vaai_range_queue *q, struct vaai_range *r,
			  loff_t start, loff_t end, bool excl);
bool vaai_range_queue_del(struct vaai_range_queue *q, struct vaai_range *r);

#endif /* VAAI_PARSE_H */
