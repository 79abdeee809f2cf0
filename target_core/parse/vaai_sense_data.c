// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: sense data (SPC-4 4.5), fixed and descriptor format,
 * with the sense-key specific field pointer and the INFORMATION field.
 *
 * The bytes are those of the kernel's scsi_build_sense_buffer() and
 * scsi_set_sense_information() for a zeroed buffer, which the module used
 * before; built here so that the host tests see exactly what a host gets.
 */
#include "vaai_parse.h"

#define VAAI_SENSE_CURRENT_FIXED	0x70
#define VAAI_SENSE_CURRENT_DESC		0x72
#define VAAI_SENSE_VALID		0x80	/* fixed format byte 0 */
/* Descriptor types, SPC-4 table 29. */
#define VAAI_SENSE_DESC_INFO		0x00
#define VAAI_SENSE_DESC_CSI		0x01
#define VAAI_SENSE_DESC_SKS		0x02
/* Sense-key specific bytes, SPC-4 4.5.2.4.2 (field pointer). */
#define VAAI_SKS_SKSV			0x80
#define VAAI_SKS_CD			0x40
#define VAAI_SKS_BPV			0x08

/*
 * The header of current sense data in buf (size bytes, zeroed first): its
 * length, or 0 if it does not fit.
 */
u32 vaai_sense_build(u8 *buf, u32 size, bool desc, u8 key, u8 asc, u8 ascq)
{
	u32 len = desc ? VAAI_SENSE_DESC_LEN : VAAI_SENSE_FIXED_LEN;

	if (size < len)
		return 0;
	memset(buf, 0, len);
	if (desc) {
		/* SPC-4 4.5.2.1; ADDITIONAL SENSE LENGTH 0: no descriptors */
		buf[0] = VAAI_SENSE_CURRENT_DESC;
		buf[1] = key;
		buf[2] = asc;
		buf[3] = ascq;
	} else {
		/* SPC-4 4.5.3: ADDITIONAL SENSE LENGTH covers bytes 8-17 */
		buf[0] = VAAI_SENSE_CURRENT_FIXED;
		buf[2] = key;
		buf[7] = VAAI_SENSE_FIXED_LEN - 8;
		buf[12] = asc;
		buf[13] = ascq;
	}
	return len;
}

/* SKSV, C/D, BPV and BIT POINTER, and the FIELD POINTER. */
static void vaai_sense_put_sks(u8 *sks, const struct vaai_fault *f)
{
	sks[0] = VAAI_SKS_SKSV | (f->in_cdb ? VAAI_SKS_CD : 0) |
		 (f->bit >= 0 ? VAAI_SKS_BPV | (f->bit & 0x7) : 0);
	put_unaligned_be16(f->byte, &sks[1]);
}

/*
 * Sense data for a refusal, with a field pointer when it names a field
 * (f->byte >= 0): in fixed format in bytes 15-17, in descriptor format in a
 * sense-key specific descriptor (SPC-4 4.5.2.4.1).  Its length, or 0.
 */
u32 vaai_sense_build_fault(u8 *buf, u32 size, bool desc,
			   const struct vaai_fault *f)
{
	u32 len = vaai_sense_build(buf, size, desc, f->key, f->asc, f->ascq);

	if (!len || f->byte < 0)
		return len;
	if (!desc) {
		vaai_sense_put_sks(&buf[15], f);
		return len;
	}
	if (size < len + VAAI_SENSE_SKS_DESC_LEN)
		return 0;
	memset(&buf[len], 0, VAAI_SENSE_SKS_DESC_LEN);
	buf[7] = VAAI_SENSE_SKS_DESC_LEN;
	buf[8] = VAAI_SENSE_DESC_SKS;
	buf[9] = VAAI_SENSE_SKS_DESC_LEN - 2;
	vaai_sense_put_sks(&buf[12], f);
	return len + VAAI_SENSE_SKS_DESC_LEN;
}

/*
 * Append an information (00h) or command-specific information (01h)
 * descriptor, the same 12-byte layout (SPC-4 4.5.2.2, 4.5.2.3), to
 * descriptor-format sense data.  The new length, or 0 if it does not fit.
 */
static u32 vaai_sense_add_desc8(u8 *buf, u32 size, u8 type, u8 flags, u64 val)
{
	u32 len;
	u8 *d;

	len = VAAI_SENSE_DESC_LEN + buf[7];
	if (buf[0] != VAAI_SENSE_CURRENT_DESC ||
	    buf[7] > U8_MAX - VAAI_SENSE_INFO_DESC_LEN ||
	    size < len + VAAI_SENSE_INFO_DESC_LEN)
		return 0;
	d = &buf[len];
	d[0] = type;
	d[1] = VAAI_SENSE_INFO_DESC_LEN - 2;
	d[2] = flags;
	d[3] = 0;
	put_unaligned_be64(val, &d[4]);
	buf[7] += VAAI_SENSE_INFO_DESC_LEN;
	return len + VAAI_SENSE_INFO_DESC_LEN;
}

static bool vaai_sense_is_fixed(const u8 *buf, u32 size)
{
	return size >= VAAI_SENSE_FIXED_LEN &&
	       (buf[0] & ~VAAI_SENSE_VALID) == VAAI_SENSE_CURRENT_FIXED;
}

/*
 * Set INFORMATION in sense data built above: fixed format keeps its low 32
 * bits and says VALID only if they are all of it (SPC-4 4.5.3); descriptor
 * format appends an information descriptor (SPC-4 4.5.2.2).  The new
 * length, or 0 if the descriptor does not fit (nothing changed then).
 */
u32 vaai_sense_set_info(u8 *buf, u32 size, u64 info)
{
	if (size < VAAI_SENSE_DESC_LEN)
		return 0;
	if (vaai_sense_is_fixed(buf, size)) {
		if (info <= U32_MAX)
			buf[0] |= VAAI_SENSE_VALID;
		else
			buf[0] &= ~VAAI_SENSE_VALID;
		put_unaligned_be32((u32)info, &buf[3]);
		return VAAI_SENSE_FIXED_LEN;
	}
	return vaai_sense_add_desc8(buf, size, VAAI_SENSE_DESC_INFO,
				    VAAI_SENSE_VALID, info);
}

/*
 * Set COMMAND-SPECIFIC INFORMATION (fixed format bytes 8-11, which hold
 * its low 32 bits; descriptor format: a descriptor of its own), as
 * EXTENDED COPY reports the segment it stopped in.  The new length, or 0.
 */
u32 vaai_sense_set_csi(u8 *buf, u32 size, u64 csi)
{
	if (size < VAAI_SENSE_DESC_LEN)
		return 0;
	if (vaai_sense_is_fixed(buf, size)) {
		put_unaligned_be32((u32)csi, &buf[8]);
		return VAAI_SENSE_FIXED_LEN;
	}
	return vaai_sense_add_desc8(buf, size, VAAI_SENSE_DESC_CSI, 0, csi);
}
