/* SPDX-License-Identifier: GPL-2.0 */
/*
 * target_core_vaai: EXTENDED COPY (LID1, SPC-4 6.4) and what hangs off it:
 * the copy engine, RECEIVE COPY RESULTS and the Third-party Copy VPD page;
 * and the token copy (ODX: POPULATE TOKEN, WRITE USING TOKEN, RECEIVE ROD
 * TOKEN INFORMATION), which runs on the same engine.
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

/* Service actions of the copy commands a status can belong to. */
#define VAAI_SA_XCOPY_LID1		0x00
#define VAAI_SA_POPULATE_TOKEN		0x10
#define VAAI_SA_WRITE_USING_TOKEN	0x11

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
	 * The I_T nexus that sent it: the session, and its initiator port
	 * (name and, over iSCSI, ISID), so that a session allocated later at
	 * the same address for another initiator port does not see it.
	 */
	const struct se_session *sess;
	char initiator[TRANSPORT_IQN_LEN];
	u64 isid;
	u8 sa;				/* VAAI_SA_*: LID1, or a token command */
	u32 list_id;			/* 8 bits for LID1 */
	bool listed;			/* has a list identifier */
	bool hold;			/* ... and is kept once done */
	u8 state;			/* VAAI_COPY_* */
	bool partial;			/* WRITE USING TOKEN left token unused */
	u16 segs_done;
	atomic64_t bytes_done;
	u64 start_ns;			/* when the command began (metrics) */
	u8 scsi_status;			/* of a failed copy */
	u8 sense_len;
	u8 sense[TRANSPORT_SENSE_BUFFER];
	u8 token[VAAI_ODX_TOKEN_LEN];	/* a POPULATE TOKEN's */
};

struct vaai_xcopy {
	struct se_cmd *cmd;
	struct vaai_dev *vdev;		/* the copy manager's device */
	struct work_struct work;
	struct vaai_copy_status *status;
	struct vaai_xcopy_list list;	/* segments, and xc->cscd[i].info */
	struct vaai_cscd cscd[VAAI_XCOPY_MAX_CSCDS];
	/*
	 * WRITE USING TOKEN: the token ran out before the destination ranges
	 * did; the command ends in COPY TARGET DEVICE DATA UNDERRUN.
	 */
	bool underrun;
	/*
	 * ... the token it uses, held until the copy ends, and the file a
	 * persistent one reads from instead of CSCD 0's LUN.
	 */
	struct vaai_odx_tok *tok;
	struct file *tok_file;
	/* in line for chunk slots, lower first; chunks moved (vaai_copy.c) */
	atomic64_t age;
	atomic_t chunks;
};

/* vaai_cscd.c */
int vaai_cscd_resolve(struct se_cmd *cmd, const u8 *desc, struct vaai_cscd *c);
int vaai_cscd_own(struct se_cmd *cmd, struct vaai_cscd *c);
struct vaai_odx_src;
int vaai_cscd_resolve_src(struct se_cmd *cmd, const struct vaai_odx_src *src,
			  struct vaai_cscd *c);
void vaai_cscd_describe(struct se_device *dev, u8 *desc);
void vaai_cscd_release(struct vaai_xcopy *xc);
bool vaai_cscd_reserved(struct se_cmd *cmd, struct vaai_cscd *c);

/* vaai_copy.c */
void vaai_copy_start(struct vaai_xcopy *xc);

/*
 * vaai_copy_slots.c: the slots chunks are moved in, and a worker waiting
 * for one.  A chunk is small: on a RAM disk 256 KiB chunks moved 4 MiB
 * copies sent one at a time twice as fast as 1 MiB ones, 4 MiB chunks
 * slower still (docs/xcopy.md).  On a RAM disk the block store moves a
 * chunk in bios of 64 KiB, with a point to reschedule between them
 * (vaai_bdev.c).
 */
#define VAAI_COPY_CHUNK		(256U << 10)

struct vaai_copy_slot;

struct vaai_copy_waiter {
	struct list_head entry;
	struct task_struct *task;
	u64 age;
	struct vaai_copy_slot *slot;	/* granted */
};

u64 vaai_copy_slot_age(void);
struct vaai_copy_slot *vaai_copy_slot_get(struct vaai_copy_waiter *w, u64 age);
struct vaai_copy_slot *vaai_copy_slot_wait(struct vaai_copy_waiter *w,
					   long timeout);
void vaai_copy_slot_cancel(struct vaai_copy_waiter *w);
bool vaai_copy_slot_pass(struct vaai_copy_slot *s, u64 age, bool keep);
void vaai_copy_slot_put(struct vaai_copy_slot *s);
struct bio_vec *vaai_copy_slot_buffer(struct vaai_copy_slot *s);

/* vaai_copy_results.c */
void vaai_copy_status_init(struct vaai_copy_status *st, struct se_cmd *cmd);
int vaai_copy_status_add(struct vaai_dev *vdev, struct vaai_copy_status *st);
void vaai_copy_status_answer(struct se_cmd *cmd, struct vaai_copy_status *st,
			     u8 status, u8 key, enum vaai_asc code,
			     const u64 *info);
void vaai_copy_status_free(struct vaai_copy_status *st);
typedef u32 (*vaai_copy_fill_t)(const struct vaai_copy_status *st, u8 *buf,
				u32 bs, bool *done);
sense_reason_t vaai_copy_answer(struct se_cmd *cmd, u32 list_id, bool token,
				u8 *buf, vaai_copy_fill_t fill);

/* vaai_odx.c, vaai_odx_token.c, vaai_rrti.c: the token copy (ODX) */
/* Live tokens on the host (each about 1.8 KiB), and made by one initiator. */
#define VAAI_ODX_MAX_TOKENS		1024
#define VAAI_ODX_MAX_TOKENS_EACH	256

/* What a token stands for, copied out of the table. */
struct vaai_odx_src {
	u32 type;			/* its ROD TYPE */
	const struct vaai_dev *vdev;	/* compared, never dereferenced */
	u64 gen;			/* ... and the device's generation */
	u32 block_size;
	u64 bytes;
	unsigned int nr;
	struct vaai_odx_range range[VAAI_ODX_MAX_RANGES];
	/* persistent: the token file, and where each range's bytes begin */
	struct file *file;
	u64 foff[VAAI_ODX_MAX_RANGES];
};

struct vaai_odx_tok;

sense_reason_t vaai_odx_parse(struct se_cmd *cmd);
sense_reason_t vaai_rrti_execute(struct se_cmd *cmd);
u32 vaai_odx_token_type(const struct vaai_dev *vdev, u32 asked);
int vaai_odx_token_create(struct vaai_dev *vdev, const struct vaai_odx_list *l,
			  u32 type, const char *initiator, u8 *tok);
struct vaai_odx_tok *vaai_odx_token_take(const u8 *tok,
					 struct vaai_odx_src *src);
void vaai_odx_token_put(struct vaai_odx_tok *t);
void vaai_odx_token_delete(struct vaai_odx_tok *t);
bool vaai_odx_token_cancelled(const struct vaai_odx_tok *t);

/* vaai_odx_snap.c: persistent tokens' files */
int vaai_odx_snap_room(struct vaai_dev *vdev, u64 bytes);
struct file *vaai_odx_snap_make(struct vaai_dev *vdev,
				const struct vaai_odx_range *r, unsigned int nr,
				u64 *foff);

#endif /* VAAI_XCOPY_H */
