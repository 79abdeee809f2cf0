// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: REPORT TARGET PORT GROUPS parameter data (SPC-4 6.36),
 * written one target port group at a time as the caller walks the
 * device's ALUA groups and their ports.  What does not fit the buffer is
 * counted and not written: RETURN DATA LENGTH tells the host how much to
 * ask for.
 */
#include "vaai_parse.h"

/* FORMAT TYPE of the extended header, bits 6-4 of its byte 4 */
#define VAAI_RTPG_FORMAT_TYPE_EXT	0x10

#define VAAI_RTPG_PREF			0x80

/*
 * Only the two header formats SPC-4 defines.  The allocation length is no
 * error, however short (SPC-4 4.2.5.6).
 */
enum vaai_cdb_err vaai_rtpg_cdb_check(const u8 *cdb,
				      const struct vaai_cdb_lun *lun,
				      struct vaai_cdb_args *a)
{
	u8 fmt = VAAI_RTPG_FORMAT(cdb);

	*a = (struct vaai_cdb_args){ .size = get_unaligned_be32(&cdb[6]) };
	if (fmt != VAAI_RTPG_FMT_LENGTH_ONLY && fmt != VAAI_RTPG_FMT_EXTENDED)
		return VAAI_CDB_INVALID_FIELD;
	return VAAI_CDB_OK;
}

static void vaai_rtpg_put(struct vaai_rtpg_out *o, u32 off, u8 byte)
{
	if (off < o->cap)
		o->buf[off] = byte;
}

static void vaai_rtpg_put16(struct vaai_rtpg_out *o, u32 off, u16 v)
{
	vaai_rtpg_put(o, off, v >> 8);
	vaai_rtpg_put(o, off + 1, v & 0xff);
}

/* buf: cap bytes, zeroed.  trans_secs: IMPLICIT TRANSITION TIME. */
void vaai_rtpg_begin(struct vaai_rtpg_out *o, u8 *buf, u32 cap, bool ext,
		     u8 trans_secs)
{
	o->buf = buf;
	o->cap = cap;
	o->group = 0;
	o->nr_ports = 0;
	o->len = ext ? VAAI_RTPG_EXT_HDR_LEN : VAAI_RTPG_HDR_LEN;
	if (ext) {
		vaai_rtpg_put(o, 4, VAAI_RTPG_FORMAT_TYPE_EXT);
		vaai_rtpg_put(o, 5, trans_secs);
	}
}

/* A target port group descriptor; its ports follow (vaai_rtpg_port()). */
void vaai_rtpg_group(struct vaai_rtpg_out *o, const struct vaai_rtpg_group *g)
{
	u32 d = o->len;

	o->group = d;
	o->nr_ports = 0;
	vaai_rtpg_put(o, d, (g->pref ? VAAI_RTPG_PREF : 0) | (g->state & 0x0f));
	vaai_rtpg_put(o, d + 1, g->supported);
	vaai_rtpg_put16(o, d + 2, g->id);
	vaai_rtpg_put(o, d + 4, 0);
	vaai_rtpg_put(o, d + 5, g->status);
	vaai_rtpg_put(o, d + 6, 0);
	vaai_rtpg_put(o, d + 7, 0);
	o->len += VAAI_RTPG_GROUP_LEN;
}

/*
 * A target port of the group begun last.  TARGET PORT COUNT is one byte:
 * a port beyond the 255th is left out.
 */
void vaai_rtpg_port(struct vaai_rtpg_out *o, u16 rtpi)
{
	u32 d = o->len;

	if (o->nr_ports == U8_MAX)
		return;
	vaai_rtpg_put16(o, d, 0);
	vaai_rtpg_put16(o, d + 2, rtpi);
	o->len += VAAI_RTPG_PORT_LEN;
	vaai_rtpg_put(o, o->group + 7, ++o->nr_ports);
}

/*
 * The group begun last is done.  A group without a port is not reported
 * (every target port group holds at least one port, SPC-4 5.15.2.1): its
 * descriptor is taken back, and the next one written over it.
 */
void vaai_rtpg_group_end(struct vaai_rtpg_out *o)
{
	if (!o->nr_ports)
		o->len = o->group;
}

/*
 * RETURN DATA LENGTH, the bytes after it (n - 3 in SPC-4's tables, the
 * extended header's bytes 4-7 included), put in; the length of the whole
 * parameter data, of which the first cap bytes are in the buffer.
 */
u32 vaai_rtpg_end(struct vaai_rtpg_out *o)
{
	u32 rdl = o->len - 4;

	vaai_rtpg_put16(o, 0, rdl >> 16);
	vaai_rtpg_put16(o, 2, rdl & 0xffff);
	return o->len;
}
