/* SPDX-License-Identifier: GPL-2.0 */
/*
 * target_core_vaai: EXTENDED COPY (LID1, SPC-4 6.4) and what hangs off it:
 * the copy engine, RECEIVE COPY RESULTS and the Third-party Copy VPD page.
 *
 * vaai_xcopy_list.c parses and validates a parameter list completely,
 * vaai_xcopy.c resolving every CSCD descriptor to a LUN the issuing I_T
 * nexus can see (vaai_cscd.c), before anything is read or written;
 * vaai_copy.c then moves the data off the fabric's thread and completes the
 * command.
 */
#ifndef VAAI_XCOPY_H
#define VAAI_XCOPY_H

#include "vaai.h"

/* EXTENDED COPY commands one device runs at once (TOTAL CONCURRENT COPIES). */
#define VAAI_XCOPY_MAX_RUNNING		32
/* Copies with a list identifier, running or held, per device. */
#define VAAI_XCOPY_MAX_LISTED		64

/* COPY MANAGER STATUS (SPC-4 6.18.3). */
#define VAAI_COPY_RUNNING		0x00
#define VAAI_COPY_DONE			0x01
#define VAAI_COPY_FAILED		0x02

/* One CSCD descriptor, resolved. */
struct vaai_cscd {
	struct se_lun *lun;		/* lun_ref held until the copy ends */
	struct vaai_dev *vdev;
	struct vaai_cscd_info info;	/* what the parser checks against */
};

/*
 * A copy's state as RECEIVE COPY RESULTS reports it.  Listed on the device
 * while it runs if it has a list identifier, and afterwards if held.
 */
struct vaai_copy_status {
	struct list_head node;
	/*
	 * The I_T nexus that sent it: the session, and its initiator's name,
	 * so that a session allocated later at the same address by another
	 * initiator does not see it.
	 */
	const struct se_session *sess;
	char initiator[TRANSPORT_IQN_LEN];
	u8 list_id;
	bool listed;			/* has a list identifier */
	bool hold;			/* ... and is kept once done */
	u8 state;			/* VAAI_COPY_* */
	u16 segs_done;
	atomic64_t bytes_done;
	u8 scsi_status;			/* of a failed copy */
	u8 sense_len;
	u8 sense[TRANSPORT_SENSE_BUFFER];
};

struct vaai_xcopy {
	struct se_cmd *cmd;
	struct vaai_dev *vdev;		/* the copy manager's device */
	struct work_struct work;
	struct vaai_copy_status *status;
	struct vaai_xcopy_list list;	/* segments, and xc->cscd[i].info */
	struct vaai_cscd cscd[VAAI_XCOPY_MAX_CSCDS];
};

/* vaai_cscd.c */
int vaai_cscd_resolve(struct se_cmd *cmd, const u8 *desc, struct vaai_cscd *c);
void vaai_cscd_release(struct vaai_xcopy *xc);
bool vaai_cscd_reserved(struct se_cmd *cmd, struct vaai_cscd *c);

/* vaai_copy.c */
void vaai_copy_start(struct vaai_xcopy *xc);

/* vaai_copy_results.c */
void vaai_copy_status_init(struct vaai_copy_status *st,
			   const struct se_session *sess);
int vaai_copy_status_add(struct vaai_dev *vdev, struct vaai_copy_status *st);
void vaai_copy_status_end(struct vaai_dev *vdev, struct vaai_copy_status *st,
			  u8 status, u8 key, u8 asc, u8 ascq);

#endif /* VAAI_XCOPY_H */
