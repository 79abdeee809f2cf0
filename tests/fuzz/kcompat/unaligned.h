/* SPDX-License-Identifier: GPL-2.0 */
/* Big-endian loads and stores at any alignment, for userspace builds. */
#ifndef VAAI_KCOMPAT_UNALIGNED_H
#define VAAI_KCOMPAT_UNALIGNED_H

static inline u64 vaai_kc_get_be(const void *p, unsigned int n)
{
	const u8 *b = p;
	u64 v = 0;

	while (n--)
		v = v << 8 | *b++;
	return v;
}

static inline void vaai_kc_put_be(u64 v, void *p, unsigned int n)
{
	u8 *b = p;

	while (n--) {
		b[n] = v & 0xff;
		v >>= 8;
	}
}

#define get_unaligned_be16(p)	((u16)vaai_kc_get_be(p, 2))
#define get_unaligned_be24(p)	((u32)vaai_kc_get_be(p, 3))
#define get_unaligned_be32(p)	((u32)vaai_kc_get_be(p, 4))
#define get_unaligned_be64(p)	((u64)vaai_kc_get_be(p, 8))
#define put_unaligned_be16(v, p)	vaai_kc_put_be((u16)(v), p, 2)
#define put_unaligned_be32(v, p)	vaai_kc_put_be((u32)(v), p, 4)
#define put_unaligned_be64(v, p)	vaai_kc_put_be((u64)(v), p, 8)

#endif /* VAAI_KCOMPAT_UNALIGNED_H */
