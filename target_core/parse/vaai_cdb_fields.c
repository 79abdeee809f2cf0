// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the CDB fields of the commands this backend parses
 * itself, checked in the order the parsers always have: reserved and
 * unsupported bits, then lengths, then the LBA range.
 */
#include "vaai_parse.h"

/* WRITE SAME CDB byte 1 */
#define VAAI_WS_NDOB		0x01	/* WRITE SAME (16) only */
#define VAAI_WS_LBDATA		0x02	/* obsolete */
#define VAAI_WS_PBDATA		0x04	/* obsolete */
#define VAAI_WS_UNMAP		0x08
#define VAAI_WS_ANCHOR		0x10

#define VAAI_VERIFY_VRPROTECT	0xe0	/* CDB byte 1 */

#define VAAI_UNMAP_ANCHOR	0x01	/* CDB byte 1 */
#define VAAI_XCOPY_SA_LID1	0x00

static enum vaai_cdb_err vaai_cdb_range(const struct vaai_cdb_lun *lun,
					u64 lba, u64 nolb)
{
	if (!vaai_lba_range_ok(lun->nr_blocks, lba, nolb))
		return VAAI_CDB_LBA_OUT_OF_RANGE;
	return VAAI_CDB_OK;
}

/*
 * LBA and length where SBC-4's 10-, 12- and 16-byte CDBs keep them; the
 * group code (opcode bits 7:5, SPC-4 4.2.5.1) gives the size.
 */
static void vaai_cdb_lba_len(const u8 *cdb, struct vaai_cdb_args *a)
{
	switch (cdb[0] >> 5) {
	case 4:		/* 16 bytes */
		a->lba = get_unaligned_be64(&cdb[2]);
		a->nolb = get_unaligned_be32(&cdb[10]);
		break;
	case 5:		/* 12 bytes */
		a->lba = get_unaligned_be32(&cdb[2]);
		a->nolb = get_unaligned_be32(&cdb[6]);
		break;
	default:	/* 10 bytes */
		a->lba = get_unaligned_be32(&cdb[2]);
		a->nolb = get_unaligned_be16(&cdb[7]);
		break;
	}
}

/*
 * The blocks a write-like command carries as data-out, bounded as a WRITE
 * is by the maximum transfer length; 0 blocks is no error, but the LBA must
 * exist.
 */
static enum vaai_cdb_err vaai_cdb_write_blocks(const struct vaai_cdb_lun *lun,
					       struct vaai_cdb_args *a)
{
	if (a->nolb > lun->hw_max_sectors)
		return VAAI_CDB_INVALID_FIELD;
	a->size = a->nolb * lun->block_size;
	return vaai_cdb_range(lun, a->lba, a->nolb ? a->nolb : 1);
}

/* COMPARE AND WRITE, SBC-4 5.3: 0 blocks is no error; LBA must exist. */
enum vaai_cdb_err vaai_caw_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				     struct vaai_cdb_args *a)
{
	a->lba = get_unaligned_be64(&cdb[2]);
	a->nolb = cdb[13];
	a->size = 2 * a->nolb * lun->block_size;
	/* No protection information: WRPROTECT must be 0. */
	if (cdb[1] & VAAI_WRPROTECT)
		return VAAI_CDB_INVALID_FIELD;
	if ((cdb[1] & (VAAI_DPO | VAAI_FUA)) && !lun->dpofua)
		return VAAI_CDB_INVALID_FIELD;
	if (a->nolb > VAAI_CAW_MAX_BLOCKS)
		return VAAI_CDB_INVALID_FIELD;
	return vaai_cdb_range(lun, a->lba, a->nolb ? a->nolb : 1);
}

/* WRITE SAME (10) and (16), SBC-4 5.49 and 5.50. */
enum vaai_cdb_err vaai_ws_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				    struct vaai_cdb_args *a)
{
	u8 flags = cdb[1];
	bool ndob = false;

	if (cdb[0] == WRITE_SAME_16) {
		a->lba = get_unaligned_be64(&cdb[2]);
		a->nolb = get_unaligned_be32(&cdb[10]);
		ndob = flags & VAAI_WS_NDOB;
	} else {
		a->lba = get_unaligned_be32(&cdb[2]);
		a->nolb = get_unaligned_be16(&cdb[7]);
		flags &= ~VAAI_WS_NDOB;
		if (cdb[1] & VAAI_WS_NDOB)
			return VAAI_CDB_INVALID_FIELD;
	}
	a->size = ndob ? 0 : lun->block_size;

	/* No protection information: WRPROTECT must be 0 (SBC-4 5.49). */
	if (flags & VAAI_WRPROTECT)
		return VAAI_CDB_INVALID_FIELD;
	/* No ANC_SUP in the LBP VPD page; LBDATA/PBDATA are obsolete. */
	if (flags & (VAAI_WS_ANCHOR | VAAI_WS_PBDATA | VAAI_WS_LBDATA))
		return VAAI_CDB_INVALID_FIELD;
	if ((flags & VAAI_WS_UNMAP) && !lun->tpws)
		return VAAI_CDB_INVALID_FIELD;
	/* WSNZ is set in the Block Limits VPD page: 0 is not "to the end". */
	if (!a->nolb || a->nolb > lun->max_write_same_len)
		return VAAI_CDB_INVALID_FIELD;
	return vaai_cdb_range(lun, a->lba, a->nolb);
}

/* VERIFY (10), (12) and (16), SBC-4 5.33; a->size: the data-out. */
enum vaai_cdb_err vaai_verify_cdb_check(const u8 *cdb,
					const struct vaai_cdb_lun *lun,
					struct vaai_cdb_args *a)
{
	u8 bytchk = VAAI_VERIFY_BYTCHK(cdb[1]);
	enum vaai_cdb_err err;

	vaai_cdb_lba_len(cdb, a);
	a->size = 0;
	/* No protection information; BYTCHK 10b is reserved. */
	if ((cdb[1] & VAAI_VERIFY_VRPROTECT) || bytchk == 0x2)
		return VAAI_CDB_INVALID_FIELD;
	if ((cdb[1] & VAAI_DPO) && !lun->dpofua)
		return VAAI_CDB_INVALID_FIELD;
	/* The compared range is bounded like a transfer. */
	if (bytchk && a->nolb > lun->hw_max_sectors)
		return VAAI_CDB_INVALID_FIELD;
	err = vaai_cdb_range(lun, a->lba, a->nolb ? a->nolb : 1);
	if (err)
		return err;
	if (bytchk == VAAI_BYTCHK_ALL)
		a->size = a->nolb * lun->block_size;
	else if (bytchk == VAAI_BYTCHK_ONE_BLOCK && a->nolb)
		a->size = lun->block_size;
	return VAAI_CDB_OK;
}

/*
 * WRITE AND VERIFY (10), (12) and (16) (SBC-4): a write, bounded like one.
 * BYTCHK 00b and 01b are taken (the data is what gets written, so there is
 * nothing more to compare); 10b is reserved and 11b, one block for all, not
 * supported.  Bit 3 is reserved.
 */
enum vaai_cdb_err vaai_write_verify_cdb_check(const u8 *cdb,
					      const struct vaai_cdb_lun *lun,
					      struct vaai_cdb_args *a)
{
	vaai_cdb_lba_len(cdb, a);
	a->size = 0;
	if (cdb[1] & (VAAI_WRPROTECT | VAAI_FUA))
		return VAAI_CDB_INVALID_FIELD;
	if (VAAI_VERIFY_BYTCHK(cdb[1]) > VAAI_BYTCHK_ALL)
		return VAAI_CDB_INVALID_FIELD;
	if ((cdb[1] & VAAI_DPO) && !lun->dpofua)
		return VAAI_CDB_INVALID_FIELD;
	return vaai_cdb_write_blocks(lun, a);
}

/*
 * WRITE ATOMIC (16) (SBC-4 5.48): written whole or not at all.  The LBAs
 * are checked first, as for any write; then the atomic limits: the LBA a
 * multiple of the alignment, the length of the granularity, at most the
 * maximum, and no ATOMIC BOUNDARY (we report no boundary sizes).  0 blocks
 * is no error, wherever it starts.  With atomic_max 0 the command is not
 * supported: the caller does not get here.  Where the store's untorn
 * writes may not cross a boundary (lun->atomic_boundary), none that would
 * is sent (the kernel reports an alignment that keeps writes inside one).
 */
enum vaai_cdb_err vaai_write_atomic_cdb_check(const u8 *cdb,
					      const struct vaai_cdb_lun *lun,
					      struct vaai_cdb_args *a)
{
	enum vaai_cdb_err err;
	u64 last;

	a->lba = get_unaligned_be64(&cdb[2]);
	a->nolb = get_unaligned_be16(&cdb[12]);
	a->size = a->nolb * lun->block_size;
	/* No protection information: WRPROTECT must be 0. */
	if (cdb[1] & VAAI_WRPROTECT)
		return VAAI_CDB_INVALID_FIELD;
	if ((cdb[1] & (VAAI_DPO | VAAI_FUA)) && !lun->dpofua)
		return VAAI_CDB_INVALID_FIELD;
	err = vaai_cdb_range(lun, a->lba, a->nolb ? a->nolb : 1);
	if (err)
		return err;
	if (get_unaligned_be16(&cdb[10]) || a->nolb > lun->atomic_max)
		return VAAI_CDB_INVALID_FIELD;
	if (!a->nolb)			/* nothing to write: no error */
		return VAAI_CDB_OK;
	/* the limits are powers of two (block layer units over a block size) */
	if (a->nolb & (lun->atomic_gran - 1))
		return VAAI_CDB_INVALID_FIELD;
	if (a->lba & (lun->atomic_align - 1))
		return VAAI_CDB_INVALID_FIELD;
	if (lun->atomic_boundary) {
		last = a->lba + a->nolb - 1;
		if ((a->lba ^ last) & ~((u64)lun->atomic_boundary - 1))
			return VAAI_CDB_INVALID_FIELD;
	}
	return VAAI_CDB_OK;
}

/*
 * ORWRITE (16) (SBC-4): a write, bounded like one; FUA_NV is obsolete and
 * ignored, as the group number is.
 */
enum vaai_cdb_err vaai_orwrite_cdb_check(const u8 *cdb,
					 const struct vaai_cdb_lun *lun,
					 struct vaai_cdb_args *a)
{
	vaai_cdb_lba_len(cdb, a);
	a->size = 0;
	/* No protection information: ORPROTECT must be 0. */
	if (cdb[1] & VAAI_WRPROTECT)
		return VAAI_CDB_INVALID_FIELD;
	if ((cdb[1] & (VAAI_DPO | VAAI_FUA)) && !lun->dpofua)
		return VAAI_CDB_INVALID_FIELD;
	return vaai_cdb_write_blocks(lun, a);
}

/*
 * PRE-FETCH (10) and (16) (SBC-4): PREFETCH LENGTH 0 is every
 * block from the LBA to the last (at most what a->nolb holds; the command
 * is a hint).  The group number is ignored.
 */
enum vaai_cdb_err vaai_prefetch_cdb_check(const u8 *cdb,
					  const struct vaai_cdb_lun *lun,
					  struct vaai_cdb_args *a)
{
	enum vaai_cdb_err err;

	vaai_cdb_lba_len(cdb, a);
	a->size = 0;
	err = vaai_cdb_range(lun, a->lba, a->nolb ? a->nolb : 1);
	if (err)
		return err;
	if (!a->nolb)
		a->nolb = min_t(u64, lun->nr_blocks - a->lba, U32_MAX);
	return VAAI_CDB_OK;
}

/* GET LBA STATUS, SBC-4 5.8.1: a starting LBA past the last one is out. */
enum vaai_cdb_err vaai_lbas_cdb_check(const u8 *cdb, const struct vaai_cdb_lun *lun,
				      struct vaai_cdb_args *a)
{
	a->lba = get_unaligned_be64(&cdb[2]);
	a->nolb = 0;
	a->size = get_unaligned_be32(&cdb[10]);	/* ALLOCATION LENGTH */
	return vaai_cdb_range(lun, a->lba, 1);
}

/* UNMAP, SBC-4 5.32.1: no ANC_SUP in the LBP VPD page. */
enum vaai_cdb_err vaai_unmap_cdb_check(const u8 *cdb, struct vaai_cdb_args *a)
{
	*a = (struct vaai_cdb_args){ .size = get_unaligned_be16(&cdb[7]) };
	if (cdb[1] & VAAI_UNMAP_ANCHOR)
		return VAAI_CDB_INVALID_FIELD;
	return VAAI_CDB_OK;
}

/* EXTENDED COPY, SPC-4 6.4.1: LID1 only, a list we can hold. */
enum vaai_cdb_err vaai_xcopy_cdb_check(const u8 *cdb, struct vaai_cdb_args *a)
{
	*a = (struct vaai_cdb_args){ .size = get_unaligned_be32(&cdb[10]) };
	if ((cdb[1] & 0x1f) != VAAI_XCOPY_SA_LID1)
		return VAAI_CDB_INVALID_FIELD;
	if (a->size > VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN)
		return VAAI_CDB_LIST_LENGTH;
	return VAAI_CDB_OK;
}
