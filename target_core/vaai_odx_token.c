// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the ROD tokens POPULATE TOKEN creates (SPC-4 6.6).
 *
 * A token is kept here, in full, with the ranges it stands for; WRITE USING
 * TOKEN finds it by its identifier and takes it only if all 512 bytes come
 * back as they were made, 32 of them random, so a token cannot be guessed
 * or made up from another; identifiers are random, so they tell nothing of
 * how many tokens the host has made.  Tokens are of type "access upon
 * reference": the blocks are read when a token is used.  A token lives until
 * its inactivity timeout passes with no use, or VAAI_ODX_MAX_TIMEOUT since it
 * was made (MAXIMUM TOKEN LIFETIME), or its device goes, or a WRITE USING
 * TOKEN deletes it.  At most VAAI_ODX_MAX_TOKENS live on the host at once,
 * and at most VAAI_ODX_MAX_TOKENS_EACH of them were made by one initiator
 * (by its name, as the copy results keep it), so that one initiator cannot
 * keep all others from making tokens.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "vaai_xcopy.h"

/* Where our tokens keep what (SPC-4 table 116; after byte 128 our own). */
#define TOK_ID			8	/* COPY MANAGER ROD TOKEN IDENTIFIER */
#define TOK_CREATOR		16	/* CREATOR LOGICAL UNIT DESCRIPTOR */
#define TOK_BYTES		56	/* NUMBER OF BYTES REPRESENTED, low 8 */
#define TOK_BLOCK_LEN		96	/* device type specific: block length */
#define TOK_TARGET		128	/* the creator's NAA designator again */
#define TOK_SECRET		160
#define TOK_SECRET_LEN		32

struct vaai_odx_tok {
	struct list_head node;
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

void vaai_odx_dev_init(struct vaai_dev *vdev)
{
	vdev->gen = atomic64_inc_return(&vaai_odx_next_gen);
}

static bool vaai_odx_expired(const struct vaai_odx_tok *t)
{
	return time_after(jiffies, t->used + t->timeout) ||
	       time_after(jiffies, t->made + VAAI_ODX_MAX_TIMEOUT * HZ);
}

static void vaai_odx_del(struct vaai_odx_tok *t)
{
	list_del(&t->node);
	vaai_odx_nr--;
	kfree_sensitive(t);
}

/* Caller holds vaai_odx_lock. */
static void vaai_odx_reap(void)
{
	struct vaai_odx_tok *t, *tmp;

	list_for_each_entry_safe(t, tmp, &vaai_odx_tokens, node)
		if (vaai_odx_expired(t))
			vaai_odx_del(t);
}

static void vaai_odx_token_fill(struct vaai_dev *vdev, struct vaai_odx_tok *t)
{
	u8 *b = t->bytes;

	put_unaligned_be32(VAAI_ROD_TYPE_AUR, &b[0]);
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
 * A new token for l's ranges of vdev, made for initiator, its bytes into
 * tok.  -ENOSPC: the host, or that initiator, holds all the tokens it may.
 */
int vaai_odx_token_create(struct vaai_dev *vdev, const struct vaai_odx_list *l,
			  const char *initiator, u8 *tok)
{
	struct vaai_odx_tok *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int ret = 0;

	if (!t)
		return -ENOMEM;
	t->id = get_random_u64();
	t->timeout = (unsigned long)l->timeout * HZ;
	t->made = jiffies;
	t->used = t->made;
	strscpy(t->initiator, initiator, sizeof(t->initiator));
	t->src.vdev = vdev;
	t->src.gen = vdev->gen;
	t->src.block_size = vdev->dev.dev_attrib.block_size;
	t->src.bytes = l->blocks * t->src.block_size;
	t->src.nr = l->nr;
	memcpy(t->src.range, l->range, l->nr * sizeof(l->range[0]));
	vaai_odx_token_fill(vdev, t);

	spin_lock(&vaai_odx_lock);
	if (vaai_odx_full(t->initiator))
		vaai_odx_reap();
	if (vaai_odx_full(t->initiator)) {
		ret = -ENOSPC;
	} else {
		list_add(&t->node, &vaai_odx_tokens);
		vaai_odx_nr++;
		memcpy(tok, t->bytes, VAAI_ODX_TOKEN_LEN);
	}
	spin_unlock(&vaai_odx_lock);
	if (ret)
		kfree_sensitive(t);
	return ret;
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
 * What the token tok stands for, into src; the use restarts its inactivity
 * timeout.  -ENOENT: no such token (or not these bytes); -ETIME: it expired.
 */
int vaai_odx_token_take(const u8 *tok, struct vaai_odx_src *src)
{
	struct vaai_odx_tok *t;
	int ret = -ENOENT;

	spin_lock(&vaai_odx_lock);
	t = vaai_odx_find(tok);
	if (t && vaai_odx_expired(t)) {
		vaai_odx_del(t);
		ret = -ETIME;
	} else if (t) {
		*src = t->src;
		t->used = jiffies;
		ret = 0;
	}
	spin_unlock(&vaai_odx_lock);
	return ret;
}

/* DEL_TKN: the copy that used tok has started; nothing else may use it. */
void vaai_odx_token_delete(const u8 *tok)
{
	struct vaai_odx_tok *t;

	spin_lock(&vaai_odx_lock);
	t = vaai_odx_find(tok);
	if (t)
		vaai_odx_del(t);
	spin_unlock(&vaai_odx_lock);
}

/* The device is going: its tokens stand for nothing any more. */
void vaai_odx_tokens_drop(struct vaai_dev *vdev)
{
	struct vaai_odx_tok *t, *tmp;

	spin_lock(&vaai_odx_lock);
	list_for_each_entry_safe(t, tmp, &vaai_odx_tokens, node)
		if (t->src.vdev == vdev)
			vaai_odx_del(t);
	spin_unlock(&vaai_odx_lock);
}
