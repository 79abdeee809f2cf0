// SPDX-License-Identifier: GPL-2.0
/* Checks shared by the fuzz targets (fuzz.h). */
#include "fuzz.h"

#define SENSE_BUF	96	/* TRANSPORT_SENSE_BUFFER */

static void fuzz_check_sks(const u8 *sks, const struct vaai_fault *f)
{
	FUZZ_ASSERT(sks[0] & 0x80);				/* SKSV */
	FUZZ_ASSERT(!!(sks[0] & 0x40) == f->in_cdb);		/* C/D */
	FUZZ_ASSERT(!!(sks[0] & 0x08) == (f->bit >= 0));	/* BPV */
	if (f->bit >= 0)
		FUZZ_ASSERT((sks[0] & 0x7) == f->bit);
	FUZZ_ASSERT(get_unaligned_be16(&sks[1]) == (u16)f->byte);
}

void fuzz_check_sense(const struct vaai_fault *f)
{
	u8 *buf = malloc(SENSE_BUF);	/* exact size: ASan sees overruns */
	u32 len;

	len = vaai_sense_build_fault(buf, SENSE_BUF, false, f);
	FUZZ_ASSERT(len == VAAI_SENSE_FIXED_LEN);
	FUZZ_ASSERT(buf[0] == 0x70 && buf[7] == 10);
	FUZZ_ASSERT((buf[2] & 0xf) == f->key && buf[12] == f->asc &&
		    buf[13] == f->ascq);
	if (f->byte >= 0)
		fuzz_check_sks(&buf[15], f);

	len = vaai_sense_build_fault(buf, SENSE_BUF, true, f);
	FUZZ_ASSERT(len == 8u + buf[7] && len <= SENSE_BUF);
	FUZZ_ASSERT(buf[0] == 0x72 && buf[1] == f->key && buf[2] == f->asc &&
		    buf[3] == f->ascq);
	if (f->byte >= 0) {
		FUZZ_ASSERT(buf[8] == 0x02 && buf[9] == 6);
		fuzz_check_sks(&buf[12], f);
	}
	free(buf);
}

void fuzz_check_list_fault(const struct vaai_fault *f, u32 len)
{
	FUZZ_ASSERT(f->key == ILLEGAL_REQUEST || f->key == COPY_ABORTED);
	FUZZ_ASSERT(!f->in_cdb);
	FUZZ_ASSERT(f->byte >= -1 && f->byte < (int)len);
	FUZZ_ASSERT(f->bit >= -1 && f->bit <= 7);
	FUZZ_ASSERT(f->byte >= 0 || f->bit < 0);
	fuzz_check_sense(f);
}
