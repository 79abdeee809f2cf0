// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the CDB checks (vaai_cdb_fields.c) of COMPARE AND
 * WRITE, WRITE SAME (10/16), VERIFY (10/12/16), GET LBA STATUS, UNMAP,
 * EXTENDED COPY, ORWRITE (16), PRE-FETCH (10/16) and WRITE AND VERIFY
 * (10/12/16), and REPORT SUPPORTED OPERATION CODES answered
 * (vaai_opcodes_data.c).
 *
 * Input: the command (index into cmds[]), flags (bit 0: 4096-byte blocks;
 * bit 1: WRITE SAME with UNMAP enabled; bits 7:2: the VAAI_OPC_* features
 * for REPORT SUPPORTED OPERATION CODES), capacity in blocks (be64, 0 read
 * as 1), MAXIMUM WRITE SAME LENGTH (be32), the transfer limit in blocks
 * (be32), then the CDB (16 bytes; its opcode byte is set from cmds[]).
 * An accepted GET LBA STATUS is answered (vaai_lba_status_data.c) from a fake
 * store whose extents the rest of the input gives, a byte each (bit 0:
 * mapped; bits 7:1 times 97: its length in bytes).
 */
#include "fuzz.h"

enum kind { RANGE, LBA_ONLY, LIST, REPORT };

static const struct {
	u8 opcode;
	enum kind kind;
} cmds[] = {
	{ COMPARE_AND_WRITE, RANGE }, { WRITE_SAME, RANGE },
	{ WRITE_SAME_16, RANGE }, { VERIFY, RANGE }, { VERIFY_12, RANGE },
	{ VERIFY_16, RANGE }, { SERVICE_ACTION_IN_16, LBA_ONLY },
	{ UNMAP, LIST }, { EXTENDED_COPY, LIST }, { MAINTENANCE_IN, REPORT },
	{ ORWRITE_16, RANGE }, { PRE_FETCH, RANGE }, { PRE_FETCH_16, RANGE },
	{ WRITE_VERIFY, RANGE }, { WRITE_VERIFY_12, RANGE },
	{ WRITE_VERIFY_16, RANGE }, { WRITE_ATOMIC_16, RANGE },
};

/* Parameter data of REPORT SUPPORTED OPERATION CODES lands here. */
struct report_buf {
	u8 *buf;
	u32 alloc;
	unsigned int nr_puts;
};

static void report_put(void *ctx, const void *buf, u32 len, u32 off)
{
	struct report_buf *rb = ctx;

	FUZZ_ASSERT(len && off < rb->alloc && len <= rb->alloc - off);
	memcpy(&rb->buf[off], buf, len);
	rb->nr_puts++;
}

/* Refused with a field pointer and nothing sent, or cut to the allocation. */
static void check_report(const u8 *cdb, u32 features)
{
	struct report_buf rb = { .alloc = min(get_unaligned_be32(&cdb[6]), 8192U) };
	const struct vaai_opcodes_out out = { rb.alloc, report_put, &rb };
	struct vaai_fault f;
	u32 len = U32_MAX;

	rb.buf = calloc(1, rb.alloc ?: 1);	/* exact size */
	f = vaai_opcodes_report(cdb, features, &out, &len);
	if (f.key) {
		FUZZ_ASSERT(f.in_cdb && (f.byte == 2 || f.byte == 3) && !rb.nr_puts);
		fuzz_check_sense(&f);
	} else {
		FUZZ_ASSERT(len <= rb.alloc && (len || !rb.nr_puts));
		if (!(cdb[2] & 7) && rb.alloc >= 4)
			FUZZ_ASSERT(len == min(rb.alloc,
					       get_unaligned_be32(rb.buf) + 4));
	}
	free(rb.buf);
}

static enum vaai_cdb_err check(const u8 *cdb, const struct vaai_cdb_lun *lun,
			       struct vaai_cdb_args *a)
{
	switch (cdb[0]) {
	case COMPARE_AND_WRITE:
		return vaai_caw_cdb_check(cdb, lun, a);
	case WRITE_SAME:
	case WRITE_SAME_16:
		return vaai_ws_cdb_check(cdb, lun, a);
	case SERVICE_ACTION_IN_16:
		return vaai_lbas_cdb_check(cdb, lun, a);
	case UNMAP:
		return vaai_unmap_cdb_check(cdb, a);
	case EXTENDED_COPY:
		return vaai_xcopy_cdb_check(cdb, a);
	case ORWRITE_16:
		return vaai_orwrite_cdb_check(cdb, lun, a);
	case WRITE_VERIFY:
	case WRITE_VERIFY_12:
	case WRITE_VERIFY_16:
		return vaai_write_verify_cdb_check(cdb, lun, a);
	case PRE_FETCH:
	case PRE_FETCH_16:
		return vaai_prefetch_cdb_check(cdb, lun, a);
	case WRITE_ATOMIC_16:
		return vaai_write_atomic_cdb_check(cdb, lun, a);
	default:
		return vaai_verify_cdb_check(cdb, lun, a);
	}
}

static loff_t fake_map(void *ctx, loff_t pos, loff_t len, bool *mapped)
{
	u8 b = fuzz_take(ctx, 1);
	loff_t n = (b >> 1) * 97;

	*mapped = b & 1;
	if (*mapped && !n)
		n = 1;		/* the stores never return an empty extent */
	return min(n, len);
}

/*
 * The reply holds contiguous extents from the LBA asked, inside the LUN,
 * as many whole descriptors as fit; its length counts at least one.
 */
static void check_lbas_reply(struct fuzz_in *in, const struct vaai_cdb_lun *lun,
			     const struct vaai_cdb_args *a)
{
	struct vaai_lbas_req req = {
		.lba = a->lba, .nr_blocks = lun->nr_blocks,
		.block_size = lun->block_size, .alloc_len = min(a->size, 1U << 16),
	};
	u32 i, n, len, size = max_t(u32, req.alloc_len, VAAI_LBAS_HDR_LEN);
	u8 *buf = calloc(1, size);	/* exact size: ASan sees overruns */
	u64 next = a->lba;

	FUZZ_ASSERT(!vaai_lbas_reply_build(&req, buf, fake_map, in, &len));
	n = len > VAAI_LBAS_HDR_LEN ? (len - VAAI_LBAS_HDR_LEN) / VAAI_LBAS_DESC_LEN : 0;
	FUZZ_ASSERT(get_unaligned_be32(buf) == 4 + max(n, 1U) * VAAI_LBAS_DESC_LEN);
	FUZZ_ASSERT(len <= req.alloc_len && n <= VAAI_LBAS_MAX_DESCS);
	FUZZ_ASSERT(len == min(req.alloc_len, VAAI_LBAS_HDR_LEN + n * 16));
	for (i = 0; i < n; i++) {
		const u8 *d = &buf[VAAI_LBAS_HDR_LEN + i * VAAI_LBAS_DESC_LEN];
		u32 nolb = get_unaligned_be32(&d[8]);

		FUZZ_ASSERT(get_unaligned_be64(&d[0]) == next && nolb && d[12] <= 1);
		FUZZ_ASSERT(nolb <= lun->nr_blocks - next);
		next += nolb;
	}
	free(buf);
}

/* What each accepted CDB promises the execute function. */
static void check_accepted(const u8 *cdb, const struct vaai_cdb_lun *lun,
			   const struct vaai_cdb_args *a)
{
	u8 bytchk = VAAI_VERIFY_BYTCHK(cdb[1]);

	switch (cdb[0]) {
	case COMPARE_AND_WRITE:
		FUZZ_ASSERT(a->nolb <= VAAI_CAW_MAX_BLOCKS && !(cdb[1] & 0xe0));
		FUZZ_ASSERT(a->size == 2 * a->nolb * lun->block_size);
		break;
	case WRITE_SAME:
		FUZZ_ASSERT(!(cdb[1] & 0x01) && a->size == lun->block_size);
		/* fall through */
	case WRITE_SAME_16:
		FUZZ_ASSERT(a->nolb && a->nolb <= lun->max_write_same_len);
		FUZZ_ASSERT(!(cdb[1] & 0x16) && (lun->tpws || !(cdb[1] & 0x08)));
		break;
	case EXTENDED_COPY:
		FUZZ_ASSERT(a->size <= VAAI_XCOPY_HDR_LEN + VAAI_XCOPY_MAX_DESC_LEN);
		FUZZ_ASSERT(!(cdb[1] & 0x1f));
		break;
	case UNMAP:
		FUZZ_ASSERT(!(cdb[1] & 0x01));
		break;
	case SERVICE_ACTION_IN_16:
		break;
	case ORWRITE_16:
		FUZZ_ASSERT(!(cdb[1] & 0xf8) && a->nolb <= lun->hw_max_sectors);
		FUZZ_ASSERT(a->size == a->nolb * lun->block_size);
		break;
	case WRITE_VERIFY:
	case WRITE_VERIFY_12:
	case WRITE_VERIFY_16:
		FUZZ_ASSERT(!(cdb[1] & 0xfc) && a->nolb <= lun->hw_max_sectors);
		FUZZ_ASSERT(a->size == a->nolb * lun->block_size);
		break;
	case PRE_FETCH:
	case PRE_FETCH_16:
		/* PREFETCH LENGTH 0 is made the blocks to the end */
		FUZZ_ASSERT(a->nolb && !a->size);
		break;
	case WRITE_ATOMIC_16:
		FUZZ_ASSERT(!(cdb[1] & 0xe0) && !get_unaligned_be16(&cdb[10]));
		FUZZ_ASSERT(a->nolb <= lun->atomic_max && a->nolb % lun->atomic_gran == 0);
		FUZZ_ASSERT(!a->nolb || a->lba % lun->atomic_align == 0);
		FUZZ_ASSERT(!a->nolb || !lun->atomic_boundary ||
			    a->lba / lun->atomic_boundary ==
			    (a->lba + a->nolb - 1) / lun->atomic_boundary);
		FUZZ_ASSERT(a->size == a->nolb * lun->block_size);
		break;
	default:
		FUZZ_ASSERT(bytchk != 2 && !(cdb[1] & 0xe0));
		FUZZ_ASSERT(!bytchk || a->nolb <= lun->hw_max_sectors);
		FUZZ_ASSERT(a->size == (bytchk == VAAI_BYTCHK_ALL ?
					a->nolb * lun->block_size :
					bytchk && a->nolb ? lun->block_size : 0));
		break;
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned int c = fuzz_take(&in, 1) % ARRAY_SIZE(cmds);
	u8 flags = fuzz_take(&in, 1);
	struct vaai_cdb_lun lun = {
		.block_size = flags & 1 ? 4096 : 512,
		.tpws = flags & 2,
	};
	struct vaai_cdb_args a;
	enum vaai_cdb_err err;
	u8 cdb[16];
	unsigned int i;

	lun.nr_blocks = fuzz_take(&in, 8) ?: 1;
	lun.max_write_same_len = fuzz_take(&in, 4);
	lun.hw_max_sectors = fuzz_take(&in, 4);
	/* the block layer's units over a block size: powers of two */
	lun.atomic_max = 1U << fuzz_take(&in, 1) % 12;
	lun.atomic_gran = lun.atomic_align = 1U << fuzz_take(&in, 1) % 4;
	lun.atomic_boundary = fuzz_take(&in, 1) & 1 ? lun.atomic_max : 0;
	for (i = 0; i < sizeof(cdb); i++)
		cdb[i] = fuzz_take(&in, 1);
	cdb[0] = cmds[c].opcode;
	if (cmds[c].kind == REPORT) {
		cdb[1] = MI_REPORT_SUPPORTED_OPERATION_CODES;
		check_report(cdb, flags >> 2);
		return 0;
	}

	err = check(cdb, &lun, &a);
	FUZZ_ASSERT(err <= VAAI_CDB_LIST_LENGTH);
	if (err)
		return 0;
	check_accepted(cdb, &lun, &a);
	if (cmds[c].kind == LBA_ONLY || cmds[c].kind == RANGE)
		FUZZ_ASSERT(vaai_lba_range_ok(lun.nr_blocks, a.lba,
					      a.nolb ? a.nolb : 1));
	/* a LUN's capacity in bytes is a loff_t */
	if (cmds[c].kind == LBA_ONLY && lun.nr_blocks <= S64_MAX / lun.block_size)
		check_lbas_reply(&in, &lun, &a);
	return 0;
}
