/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel integer types, limits and helpers, for userspace builds. */
#ifndef VAAI_KCOMPAT_TYPES_H
#define VAAI_KCOMPAT_TYPES_H

#include <stdint.h>
#include <stddef.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))

/* A flexible array where C wants none alone (scsi_proto.h, 6.12). */
#define DECLARE_FLEX_ARRAY(type, name) \
	struct { struct { } __empty_##name; type name[]; }

#define BIT(n)		(1UL << (n))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* 0, or a compile error when e is true (as the kernel's). */
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int : (-!!(e)); })))

#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   _a > _b ? _a : _b; })
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define max_t(t, a, b)	max((t)(a), (t)(b))
#define min3(a, b, c)	min(min(a, b), c)

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#define DIV_ROUND_UP_ULL(n, d)	(((u64)(n) + (d) - 1) / (d))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Bytes of *p with n elements of its flexible array; SIZE_MAX on overflow. */
#define struct_size(p, member, n)					\
	({ size_t _s;							\
	   __builtin_mul_overflow((size_t)(n), sizeof((p)->member[0]), &_s) || \
	   __builtin_add_overflow(_s, sizeof(*(p)), &_s) ? SIZE_MAX : _s; })

#endif /* VAAI_KCOMPAT_TYPES_H */
