/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-ins for the kernel definitions the pure parsers use
 * (target_core/parse/vaai_parse.h includes this when __KERNEL__ is not defined).
 * SCSI constants come from the kernel's own scsi/scsi_proto.h, which needs
 * linux/types.h, u8 and (6.12) linux/build_bug.h, here; the Makefile names
 * it in VAAI_SCSI_PROTO_H.
 */
#ifndef VAAI_KCOMPAT_H
#define VAAI_KCOMPAT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "types.h"	/* scsi_proto.h's structures use u8 since 6.12 */
#include VAAI_SCSI_PROTO_H

#include "unaligned.h"
#include "list.h"

#endif /* VAAI_KCOMPAT_H */
