// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the ROD tokens POPULATE TOKEN creates (SPC-4 6.6).
 *
 * A token is kept here, in full, with the ranges it stands for; WRITE USING
 * TOKEN finds it by its identifier and takes it only if all 512 bytes come
 * back as they were made, 32 of them random, so a token cannot be guessed
 * or made up from another; identifiers are random, so they tell nothing of
 * how many tokens the host has made.
 *
 * A token is one of three ROD types:
 *   - point in time, persistent: the ranges were shared into a token file
 *     when it was made (vaai_odx_snap.c), and a copy reads that file, so it
 *     gets what the ranges held then, whatever was written since;
 *   - point in time, change vulnerable: the ranges are watched, and the
 *     first write, WRITE SAME, UNMAP, COMPARE AND WRITE or copy that changes
 *     any of them cancels the token (vaai_odx_touch()); a copy running with
 *     it fails, a later one is refused;
 *   - access upon reference: the blocks are read when the token is used.
 * POPULATE TOKEN makes the first where the store can share extents, else the
 * second, unless attrib/odx_point_in_time is 0 or the host asks for a type.
 *
 * A token lives until its inactivity timeout passes with no use, or
 * VAAI_ODX_MAX_TIMEOUT since it was made (MAXIMUM TOKEN LIFETIME), or its
 * device goes, or a WRITE USING TOKEN deletes it.  An expired token stays
 * listed until it is used (TOKEN EXPIRED) or its room is wanted, but a
 * reaper takes its file and its watch within VAAI_ODX_REAP_PERIOD, so a
 * token file's extents do not outlive the token by long.  A copy
 * using a token holds a reference: a token deleted meanwhile stays watched,
 * and its file stays open, until that copy ends.  At most
 * VAAI_ODX_MAX_TOKENS live on the host at once, and at most
 * VAAI_ODX_MAX_TOKENS_EACH of them were made by one initiator (by its name,
 * as the copy results keep it), so that one initiator cannot keep all others
 * from making tokens.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "vaai_xcopy.h"

/* Where our tokens keep what (SPC-4 table 116; after byte 128 our own). */
#define TOK_ID			8	/* COPY MANAGER ROD TOKEN IDENTIFIER */
#define TOK_CREATOR		16	/* CREATOR LOGICAL UNIT DESCRIPTOR */
#define TOK_BYTES		56	/* NUMBER OF BYTES REPRESENTED, low 8 */
#define TOK_BLOCK_LEN		96	/* device type specific: block length */
#define TOK_TARGET		128	/* the creator's NAA designator again */
#define TOK_SECRET		160
#define TOK_SECRET_LEN		32

/* How often the reaper looks for expired tokens while there are any. */
#define VAAI_ODX_REAP_PERIOD	(5 * HZ)

struct vaai_odx_tok {
	struct list_head node;		/* on vaai_odx_tokens while listed */
	struct list_head watch;		/* change vulnerable: on its device's */
	struct vaai_dev *vdev;		/* while listed or watched */
	unsigned int refs;		/* the list's, and one per copy using it */
	bool listed;
	bool cancelled;
	u64 id;
	unsigned long timeout;		/* jiffies */
	unsigned long used;		/* jiffies of the last use */
	unsigned long made;		/* jiffies */
	char initiator[TRANSPORT_IQN_LEN];	/* whose POPULATE TOKEN made it */
	struct vaai_odx_src src;
	u8 bytes[VAAI_ODX_TOKEN_LEN];
};

static LIST_HEAD(vaai_odx_tokens);
static DEFINE_SPINLOCK(vaai_odx_lock);
static unsigned int vaai_odx_nr;
static atomic64_t vaai_odx_next_gen = ATOMIC64_INIT(0);

static void vaai_odx_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vaai_odx_reaper, vaai_odx_reap_fn);

void vaai_odx_dev_init(struct vaai_dev *vdev)
{
	vdev->gen = atomic64_inc_return(&vaai_odx_next_gen);
	vdev->odx.pit = true;
	INIT_LIST_HEAD(&vdev->odx.watched);
}

static bool vaai_odx_expired(const struct vaai_odx_tok *t)
{
	return time_after(jiffies, t->used + t->timeout) ||
	       time_after(jiffies, t->made + VAAI_ODX_MAX_TIMEOUT * HZ);
}

/* Caller holds vaai_odx_lock. */
static void vaai_odx_unwatch(struct vaai_odx_tok *t)
{
	if (list_empty(&t->watch))
		return;
	list_del_init(&t->watch);
	atomic_dec(&t->vdev->odx.nr_watched);
}

/* Drop a reference; the last puts t on freed.  Under vaai_odx_lock. */
static void vaai_odx_put_locked(struct vaai_odx_tok *t, struct list_head *freed)
{
	if (--t->refs)
		return;
	vaai_odx_unwatch(t);
	list_add(&t->node, freed);
}

/* No one finds t any more; copies using it keep it.  Under vaai_odx_lock. */
static void vaai_odx_unlist(struct vaai_odx_tok *t, struct list_head *freed)
{
	if (!t->listed)
		return;
	t->listed = false;
	list_del(&t->node);
	vaai_odx_nr--;
	if (t->src.file)
		atomic64_sub(t->src.bytes, &t->vdev->odx.held);
	vaai_odx_put_locked(t, freed);
}

/* Outside the lock: closing a token file frees its extents. */
static void vaai_odx_free(struct list_head *freed)
{
	struct vaai_odx_tok *t, *tmp;

	list_for_each_entry_safe(t, tmp, freed, node) {
		if (t->src.file)
			fput(t->src.file);
		kfree_sensitive(t);
	}
}

/* Room wanted: expired and cancelled tokens go.  Under vaai_odx_lock. */
static void vaai_odx_reap(struct list_head *freed)
{
	struct vaai_odx_tok *t, *tmp;

	list_for_each_entry_safe(t, tmp, &vaai_odx_tokens, node)
		if (vaai_odx_expired(t) || t->cancelled)
			vaai_odx_unlist(t, freed);
}

/*
 * An expired token lets go of its file and its watch, unless a copy is
 * using it; it stays listed, to be told expired.  Under vaai_odx_lock: fput()
 * may be called in atomic context.
 */
static void vaai_odx_release(struct vaai_odx_tok *t)
{
	if (t->refs > 1)
		return;
	vaai_odx_unwatch(t);
	if (t->src.file) {
		atomic64_sub(t->src.bytes, &t->vdev->odx.held);
		fput(t->src.file);
		t->src.file = NULL;
	}
}

static void vaai_odx_reap_fn(struct work_struct *work)
{
	struct vaai_odx_tok *t;
	bool more = false;

	spin_lock(&vaai_odx_lock);
	list_for_each_entry(t, &vaai_odx_tokens, node) {
		if (vaai_odx_expired(t))
			vaai_odx_release(t);
		more |= t->src.file || !list_empty(&t->watch);
	}
	spin_unlock(&vaai_odx_lock);
	if (more)
		schedule_delayed_work(&vaai_odx_reaper, VAAI_ODX_REAP_PERIOD);
}

/* Module unload: every device, and so every token, is gone. */
void vaai_odx_exit(void)
{
	cancel_delayed_work_sync(&vaai_odx_reaper);
}

static void vaai_odx_token_fill(struct vaai_dev *vdev, struct vaai_odx_tok *t)
{
	u8 *b = t->bytes;

	put_unaligned_be32(t->src.type, &b[0]);
	put_unaligned_be16(VAAI_ODX_TOKEN_BODY, &b[6]);
	put_unaligned_be64(t->id, &b[TOK_ID]);
	vaai_cscd_describe(&vdev->dev, &b[TOK_CREATOR]);
	put_unaligned_be64(t->src.bytes, &b[TOK_BYTES]);
	put_unaligned_be32(t->src.block_size, &b[TOK_BLOCK_LEN]);
	/* a designation descriptor: the creator's, bytes 4-23 of its CSCD */
	memcpy(&b[TOK_TARGET], &b[TOK_CREATOR + 4], 4 + 16);
	get_random_bytes(&b[TOK_SECRET], TOK_SECRET_LEN);
}

/* Whether the host, or initiator, holds all the tokens it may; under the lock. */
static bool vaai_odx_full(const char *initiator)
{
	const struct vaai_odx_tok *t;
	unsigned int n = 0;

	if (vaai_odx_nr >= VAAI_ODX_MAX_TOKENS)
		return true;
	list_for_each_entry(t, &vaai_odx_tokens, node)
		if (!strcmp(t->initiator, initiator) &&
		    ++n >= VAAI_ODX_MAX_TOKENS_EACH)
			return true;
	return false;
}

/*
 * The type of token to make for a POPULATE TOKEN that asked for asked (0:
 * ours to choose); 0 if this device cannot make it.
 */
u32 vaai_odx_token_type(const struct vaai_dev *vdev, u32 asked)
{
	u32 pit = vdev->odx.share ? VAAI_ROD_TYPE_PIT_PERSISTENT :
				    VAAI_ROD_TYPE_PIT_VULNERABLE;

	switch (asked) {
	case 0:
		return READ_ONCE(vdev->odx.pit) ? pit : VAAI_ROD_TYPE_AUR;
	case VAAI_ROD_TYPE_PIT_DEFAULT:
	case VAAI_ROD_TYPE_PIT_ANY:
		return pit;
	case VAAI_ROD_TYPE_PIT_PERSISTENT:
		return vdev->odx.share ? asked : 0;
	default:
		return asked;
	}
}

/*
 * A persistent token's file, its ranges shared into it.  Where there is no
 * room for what it would hold, or sharing fails, a token the host did not
 * ask to be persistent is made change vulnerable instead.
 */
static int vaai_odx_token_share(struct vaai_dev *vdev,
				const struct vaai_odx_list *l,
				struct vaai_odx_tok *t)
{
	struct file *f;
	int ret;

	ret = vaai_odx_snap_room(vdev, t->src.bytes);
	if (!ret) {
		f = vaai_odx_snap_make(vdev, l->range, l->nr, t->src.foff);
		if (!IS_ERR(f)) {
			t->src.file = f;
			return 0;
		}
		ret = PTR_ERR(f);
		if (l->rod_type != VAAI_ROD_TYPE_PIT_PERSISTENT)
			pr_warn_ratelimited("%s: sharing a token's ranges failed (%d); made it change vulnerable\n",
					    vdev->dev.dev_group.cg_item.ci_name,
					    ret);
	}
	if (l->rod_type == VAAI_ROD_TYPE_PIT_PERSISTENT)
		return ret;
	t->src.type = VAAI_ROD_TYPE_PIT_VULNERABLE;
	return 0;
}

/*
 * A change-vulnerable token is watched from here on; a write that took its
 * range lock before and so did not see the watch may still be on its way to
 * the medium.  Wait for those: an exclusive lock on each range is granted
 * only once every earlier request on it has let go.
 */
static void vaai_odx_token_drain(struct vaai_dev *vdev,
				 const struct vaai_odx_src *src)
{
	struct vaai_range r;
	unsigned int i;

	for (i = 0; i < src->nr; i++) {
		loff_t pos = src->range[i].lba * src->block_size;

		vaai_dev_range_lock(vdev, &r, pos,
				    pos + (loff_t)src->range[i].nolb * src->block_size,
				    true);
		vaai_range_unlock(&vdev->rlock, &r);
	}
}

/*
 * A new token of type (vaai_odx_token_type()) for l's ranges of vdev, made
 * for initiator, its bytes into tok.  -ENOSPC: the host, or that initiator,
 * holds all the tokens it may; -ENOBUFS: its file system has no room for
 * what the token could come to hold.
 */
int vaai_odx_token_create(struct vaai_dev *vdev, const struct vaai_odx_list *l,
			  u32 type, const char *initiator, u8 *tok)
{
	struct vaai_odx_tok *t = kzalloc(sizeof(*t), GFP_KERNEL);
	LIST_HEAD(freed);
	bool drain = false;
	int ret = 0;

	if (!t)
		return -ENOMEM;
	INIT_LIST_HEAD(&t->watch);
	t->vdev = vdev;
	t->refs = 1;
	t->id = get_random_u64();
	t->timeout = (unsigned long)l->timeout * HZ;
	t->made = jiffies;
	t->used = t->made;
	strscpy(t->initiator, initiator, sizeof(t->initiator));
	t->src.type = type;
	t->src.vdev = vdev;
	t->src.gen = vdev->gen;
	t->src.block_size = vdev->dev.dev_attrib.block_size;
	t->src.bytes = l->blocks * t->src.block_size;
	t->src.nr = l->nr;
	memcpy(t->src.range, l->range, l->nr * sizeof(l->range[0]));
	if (type == VAAI_ROD_TYPE_PIT_PERSISTENT) {
		ret = vaai_odx_token_share(vdev, l, t);
		if (ret) {
			kfree_sensitive(t);
			return ret;
		}
	}
	vaai_odx_token_fill(vdev, t);

	spin_lock(&vaai_odx_lock);
	if (vaai_odx_full(t->initiator))
		vaai_odx_reap(&freed);
	if (vaai_odx_full(t->initiator)) {
		ret = -ENOSPC;
		list_add(&t->node, &freed);
	} else {
		list_add(&t->node, &vaai_odx_tokens);
		t->listed = true;
		vaai_odx_nr++;
		if (t->src.file)
			atomic64_add(t->src.bytes, &vdev->odx.held);
		if (t->src.type == VAAI_ROD_TYPE_PIT_VULNERABLE) {
			list_add(&t->watch, &vdev->odx.watched);
			atomic_inc(&vdev->odx.nr_watched);
			t->refs++;	/* the drain's: others may drop it */
			drain = true;
		}
		memcpy(tok, t->bytes, VAAI_ODX_TOKEN_LEN);
	}
	spin_unlock(&vaai_odx_lock);
	vaai_odx_free(&freed);
	if (ret)
		return ret;
	if (type != VAAI_ROD_TYPE_AUR)
		schedule_delayed_work(&vaai_odx_reaper, VAAI_ODX_REAP_PERIOD);
	if (drain) {
		vaai_odx_token_drain(vdev, &t->src);
		vaai_odx_token_put(t);
	}
	return 0;
}

/* The token with tok's identifier and all of tok's bytes; under the lock. */
static struct vaai_odx_tok *vaai_odx_find(const u8 *tok)
{
	u64 id = get_unaligned_be64(&tok[TOK_ID]);
	struct vaai_odx_tok *t;

	list_for_each_entry(t, &vaai_odx_tokens, node)
		if (t->id == id && !crypto_memneq(t->bytes, tok, VAAI_ODX_TOKEN_LEN))
			return t;
	return NULL;
}

/*
 * The token tok, held for a copy (vaai_odx_token_put() when it ends), and
 * what it stands for into src; the use restarts its inactivity timeout.
 * -ENOENT: no such token (or not these bytes); -ETIME: it expired;
 * -ECANCELED: a change to its ranges cancelled it.
 */
struct vaai_odx_tok *vaai_odx_token_take(const u8 *tok,
					 struct vaai_odx_src *src)
{
	struct vaai_odx_tok *t;
	LIST_HEAD(freed);
	int ret = -ENOENT;

	spin_lock(&vaai_odx_lock);
	t = vaai_odx_find(tok);
	if (t && vaai_odx_expired(t)) {
		vaai_odx_unlist(t, &freed);
		ret = -ETIME;
	} else if (t && t->cancelled) {
		ret = -ECANCELED;
	} else if (t) {
		*src = t->src;
		t->used = jiffies;
		t->refs++;
		ret = 0;
	}
	spin_unlock(&vaai_odx_lock);
	vaai_odx_free(&freed);
	return ret ? ERR_PTR(ret) : t;
}

/* The copy that took t has ended. */
void vaai_odx_token_put(struct vaai_odx_tok *t)
{
	LIST_HEAD(freed);

	spin_lock(&vaai_odx_lock);
	vaai_odx_put_locked(t, &freed);
	spin_unlock(&vaai_odx_lock);
	vaai_odx_free(&freed);
}

/* DEL_TKN: the copy that took t has started; nothing else may use it. */
void vaai_odx_token_delete(struct vaai_odx_tok *t)
{
	LIST_HEAD(freed);

	spin_lock(&vaai_odx_lock);
	vaai_odx_unlist(t, &freed);
	spin_unlock(&vaai_odx_lock);
	vaai_odx_free(&freed);
}

/* Has a change to t's ranges cancelled it since it was taken? */
bool vaai_odx_token_cancelled(const struct vaai_odx_tok *t)
{
	return READ_ONCE(t->cancelled);
}

static bool vaai_odx_overlaps(const struct vaai_odx_src *src, loff_t pos,
			      loff_t len)
{
	unsigned int i;

	for (i = 0; i < src->nr; i++) {
		loff_t start = src->range[i].lba * src->block_size;
		loff_t end = start + (loff_t)src->range[i].nolb * src->block_size;

		if (pos < end && start < pos + len)
			return true;
	}
	return false;
}

void __vaai_odx_touch(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	struct vaai_odx_tok *t, *tmp;

	spin_lock(&vaai_odx_lock);
	list_for_each_entry_safe(t, tmp, &vdev->odx.watched, watch)
		if (vaai_odx_overlaps(&t->src, pos, len)) {
			WRITE_ONCE(t->cancelled, true);
			vaai_odx_unwatch(t);
		}
	spin_unlock(&vaai_odx_lock);
}

/* The device is going: its tokens stand for nothing any more. */
void vaai_odx_tokens_drop(struct vaai_dev *vdev)
{
	struct vaai_odx_tok *t, *tmp;
	LIST_HEAD(freed);

	spin_lock(&vaai_odx_lock);
	list_for_each_entry_safe(t, tmp, &vaai_odx_tokens, node)
		if (t->vdev == vdev)
			vaai_odx_unlist(t, &freed);
	/* none should be left: a copy holds its source LUN */
	list_for_each_entry_safe(t, tmp, &vdev->odx.watched, watch) {
		WRITE_ONCE(t->cancelled, true);
		vaai_odx_unwatch(t);
	}
	spin_unlock(&vaai_odx_lock);
	vaai_odx_free(&freed);
}

static ssize_t vaai_odx_pit_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%d\n",
			  READ_ONCE(vaai_attrib_dev(item)->odx.pit));
}

static ssize_t vaai_odx_pit_store(struct config_item *item, const char *page,
				  size_t count)
{
	bool on;
	int ret = kstrtobool(page, &on);

	if (ret)
		return ret;
	WRITE_ONCE(vaai_attrib_dev(item)->odx.pit, on);
	return count;
}

/* 1: POPULATE TOKEN makes point-in-time tokens; 0: access upon reference. */
struct configfs_attribute vaai_attr_odx_point_in_time = {
	.ca_name	= "odx_point_in_time",
	.ca_mode	= 0644,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_odx_pit_show,
	.store		= vaai_odx_pit_store,
};

static ssize_t vaai_odx_held_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%lld\n",
			  atomic64_read(&vaai_attrib_dev(item)->odx.held));
}

/* Bytes the device's persistent tokens hold in token files. */
struct configfs_attribute vaai_stat_attr_odx_held_bytes = {
	.ca_name	= "stats_odx_held_bytes",
	.ca_mode	= 0444,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_odx_held_show,
};
