/* SPDX-License-Identifier: GPL-2.0 */
/*
 * target_core_vaai: every additional sense code and qualifier we answer
 * with, named once: X(name, ASC, ASCQ), the name SPC-4 annex D gives
 * (shortened where it is long).  vaai_parse.h makes them enum vaai_asc;
 * the guest tests read this list (tests/guest/sense_codes.py), so each
 * entry stays on a line of its own, in this form.  The last two are LIO
 * core's answers, named here for the tests that check them.
 */
#ifndef VAAI_SENSE_CODES_H
#define VAAI_SENSE_CODES_H

#define VAAI_ASC_LIST(X)						\
	X(NO_ADDITIONAL_SENSE,			0x00, 0x00)		\
	X(OPERATION_IN_PROGRESS,		0x00, 0x16)		\
	X(UNREACHABLE_COPY_TARGET,		0x08, 0x04)		\
	X(WRITE_ERROR,				0x0c, 0x00)		\
	X(THIRD_PARTY_DEVICE_FAILURE,		0x0d, 0x01)		\
	X(COPY_TARGET_NOT_REACHABLE,		0x0d, 0x02)		\
	X(COPY_TARGET_DATA_UNDERRUN,		0x0d, 0x04)		\
	X(UNRECOVERED_READ_ERROR,		0x11, 0x00)		\
	X(PARAMETER_LIST_LENGTH_ERROR,		0x1a, 0x00)		\
	X(MISCOMPARE_DURING_VERIFY,		0x1d, 0x00)		\
	X(LBA_OUT_OF_RANGE,			0x21, 0x00)		\
	X(INVALID_TOKEN_OPERATION,		0x23, 0x00)		\
	X(TOKEN_UNSUPPORTED_TYPE,		0x23, 0x01)		\
	X(TOKEN_UNKNOWN,			0x23, 0x04)		\
	X(TOKEN_REVOKED,			0x23, 0x06)		\
	X(TOKEN_EXPIRED,			0x23, 0x07)		\
	X(TOKEN_CANCELLED,			0x23, 0x08)		\
	X(TOKEN_INVALID_LENGTH,			0x23, 0x0a)		\
	X(INVALID_FIELD_IN_CDB,			0x24, 0x00)		\
	X(INVALID_FIELD_IN_PARAMETER_LIST,	0x26, 0x00)		\
	X(TOO_MANY_TARGET_DESCRIPTORS,		0x26, 0x06)		\
	X(UNSUPPORTED_TARGET_DESCRIPTOR_TYPE,	0x26, 0x07)		\
	X(TOO_MANY_SEGMENT_DESCRIPTORS,		0x26, 0x08)		\
	X(UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE,	0x26, 0x09)		\
	X(UNEXPECTED_INEXACT_SEGMENT,		0x26, 0x0a)		\
	X(INLINE_DATA_LENGTH_EXCEEDED,		0x26, 0x0b)		\
	X(WRITE_PROTECTED,			0x27, 0x00)		\
	X(SPACE_ALLOCATION_FAILED,		0x27, 0x07)		\
	X(CAPACITY_DATA_HAS_CHANGED,		0x2a, 0x09)		\
	X(SOFT_THRESHOLD_REACHED,		0x38, 0x07)		\
	X(NO_ROOM_FOR_ROD,			0x55, 0x0c)		\
	X(NO_ROOM_FOR_ROD_TOKEN,		0x55, 0x0d)		\
	X(INVALID_COMMAND_OPERATION_CODE,	0x20, 0x00)		\
	X(INVALID_FIELD_IN_COMMAND_IU,		0x0e, 0x03)

#endif /* VAAI_SENSE_CODES_H */
