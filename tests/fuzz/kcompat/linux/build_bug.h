/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's scsi/scsi_proto.h includes this since 6.12 for its
 * one-argument static_assert()s of structure sizes, which C11 lacks: the
 * expression's own text is the message.
 */
#ifndef VAAI_KCOMPAT_BUILD_BUG_H
#define VAAI_KCOMPAT_BUILD_BUG_H
#define static_assert(expr, ...) vaai_static_assert(expr, ##__VA_ARGS__, #expr)
#define vaai_static_assert(expr, msg, ...) _Static_assert(expr, msg)
#endif
