// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: a LUN whose store is opened and closed while the LUN
 * stays exported (control online=0|1).
 *
 * A pair on single-primary DRBD (docs/ha.md) exports the LUN on both
 * nodes, but only DRBD's primary may open /dev/drbdN.  On the other node
 * the LUN answers what needs no data with its store closed: INQUIRY, READ
 * CAPACITY, REPORT TARGET PORT GROUPS (ALUA Standby refuses the rest in
 * LIO core before a command reaches us).  It opens the store when the
 * cluster promotes DRBD there, and closes it before DRBD is demoted.
 *
 * Every command that reaches the store holds vdev->online from the start
 * of its execution until just before it is answered (vaai_cmd_done*); an
 * EXTENDED COPY or WRITE USING TOKEN holds it on every other LUN it reads
 * or writes (vaai_cscd.c).  Going offline kills the reference, waits for
 * what holds it, and only then closes the store.  A command that finds
 * the store closed is answered NOT READY, LOGICAL UNIT NOT ACCESSIBLE,
 * ASYMMETRIC ACCESS STATE TRANSITION (SPC-4 5.15.2.6): hosts retry it,
 * on this path or another.  Only a block device store goes offline: a
 * file's page cache, soft threshold and token snapshots assume it stays.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu-refcount.h>
#include <linux/sched/signal.h>

#include "vaai.h"

static void vaai_online_release(struct percpu_ref *ref)
{
	struct vaai_dev *vdev = container_of(ref, struct vaai_dev, online);

	complete(&vdev->offlined);
}

int vaai_online_init(struct vaai_dev *vdev)
{
	mutex_init(&vdev->online_lock);
	init_completion(&vdev->offlined);
	/* it is killed and brought back: keep the per-CPU counters */
	return percpu_ref_init(&vdev->online, vaai_online_release,
			       PERCPU_REF_ALLOW_REINIT, GFP_KERNEL);
}

void vaai_online_exit(struct vaai_dev *vdev)
{
	percpu_ref_exit(&vdev->online);
}

bool vaai_store_get(struct vaai_dev *vdev)
{
	return percpu_ref_tryget_live(&vdev->online);
}

void vaai_store_put(struct vaai_dev *vdev)
{
	percpu_ref_put(&vdev->online);
}

bool vaai_online(struct vaai_dev *vdev)
{
	return !percpu_ref_is_dying(&vdev->online);
}

/*
 * The command takes the store (cmd->priv: the device it holds, NULL for
 * none; vaai_parse_cdb() clears it for every command it sees).
 */
static bool vaai_cmd_store_get(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);

	if (!vaai_store_get(vdev))
		return false;
	cmd->priv = vdev;
	return true;
}

static void vaai_cmd_store_put(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);

	if (cmd->priv != vdev)
		return;
	cmd->priv = NULL;
	vaai_store_put(vdev);
}

/*
 * Every answer this backend gives a command it executes goes through one
 * of these: the store is given back before LIO may free the command, or
 * the device once its last command is gone.
 */
void vaai_cmd_done(struct se_cmd *cmd, u8 status)
{
	vaai_cmd_store_put(cmd);
	target_complete_cmd(cmd, status);
}

void vaai_cmd_done_len(struct se_cmd *cmd, u8 status, int len)
{
	vaai_cmd_store_put(cmd);
	target_complete_cmd_with_length(cmd, status, len);
}

void vaai_cmd_done_reason(struct se_cmd *cmd, sense_reason_t reason)
{
	vaai_cmd_store_put(cmd);
	target_complete_cmd_with_sense(cmd, SAM_STAT_CHECK_CONDITION, reason);
}

/*
 * Run an execute function with the store held.  Per the completion
 * contract (vaai.h) a sense returned means the command was not answered
 * and nothing was started: the store is given back here.
 */
static sense_reason_t vaai_cmd_run(struct se_cmd *cmd,
				   sense_reason_t (*execute)(struct se_cmd *cmd))
{
	sense_reason_t ret;

	if (!vaai_cmd_store_get(cmd))
		return TCM_ALUA_STATE_TRANSITION;
	ret = execute(cmd);
	if (ret)
		vaai_cmd_store_put(cmd);
	return ret;
}

/*
 * The commands we parse ourselves that reach the store: the parse's
 * execute function waits in cmd->priv until LIO core runs the command.
 */
static sense_reason_t vaai_execute_online(struct se_cmd *cmd)
{
	sense_reason_t (*execute)(struct se_cmd *cmd) = cmd->priv;

	cmd->priv = NULL;
	return vaai_cmd_run(cmd, execute);
}

void vaai_cmd_gate(struct se_cmd *cmd)
{
	cmd->priv = cmd->execute_cmd;
	cmd->execute_cmd = vaai_execute_online;
}

/* READ, WRITE and SYNCHRONIZE CACHE, which LIO core parses for us. */
sense_reason_t vaai_execute_rw_online(struct se_cmd *cmd,
				      struct scatterlist *sgl, u32 sgl_nents,
				      enum dma_data_direction dir)
{
	sense_reason_t ret;

	if (!vaai_cmd_store_get(cmd))
		return TCM_ALUA_STATE_TRANSITION;
	ret = vaai_execute_rw(cmd, sgl, sgl_nents, dir);
	if (ret)
		vaai_cmd_store_put(cmd);
	return ret;
}

sense_reason_t vaai_execute_sync_cache_online(struct se_cmd *cmd)
{
	return vaai_cmd_run(cmd, vaai_execute_sync_cache);
}

/*
 * What a refused online=1 puts back: the closed LUN goes on answering as
 * it did (vaai_bdev.c's open sets these from the device).
 */
struct vaai_online_was {
	loff_t nr_bytes;
	u32 min_block;
	u32 dma_align;
	u32 unmap_unit;
	bool lbprz;
	bool is_nonrot;
};

static void vaai_online_save(struct vaai_dev *vdev, struct vaai_online_was *w)
{
	w->nr_bytes = vdev->nr_bytes;
	w->min_block = vdev->min_block;
	w->dma_align = vdev->dma_align;
	w->unmap_unit = vdev->unmap_unit;
	w->lbprz = vdev->lbprz;
	w->is_nonrot = vdev->dev.dev_attrib.is_nonrot;
}

static void vaai_online_restore(struct vaai_dev *vdev,
				const struct vaai_online_was *w)
{
	vdev->min_block = w->min_block;
	vdev->dma_align = w->dma_align;
	vdev->unmap_unit = w->unmap_unit;
	vdev->lbprz = w->lbprz;
	vdev->dev.dev_attrib.is_nonrot = w->is_nonrot;
}

/*
 * The device now opened against what the LUN told hosts while it was
 * closed: no smaller, its block size addressable, the thin provisioning
 * declared.  A device that grew is taken as resize=1 takes it.
 */
static int vaai_online_check(struct vaai_dev *vdev, loff_t size, loff_t was)
{
	struct se_dev_attrib *da = &vdev->dev.dev_attrib;
	const char *name = vaai_dev_name(vdev);

	if (size < was) {
		pr_err("%s: %s holds %lld bytes, fewer than the LUN's %lld\n",
		       name, vdev->params.path, size, was);
		return -EINVAL;
	}
	if (da->block_size < vdev->min_block) {
		pr_err("%s: %s cannot address the LUN's %u-byte blocks (its own are %u)\n",
		       name, vdev->params.path, da->block_size, vdev->min_block);
		return -EINVAL;
	}
	if ((da->emulate_tpu || da->emulate_tpws) && !vdev->unmap_unit) {
		pr_err("%s: the LUN is thin but %s cannot deallocate\n", name,
		       vdev->params.path);
		return -EINVAL;
	}
	if (da->unmap_zeroes_data && !vdev->lbprz) {
		pr_err("%s: the LUN reads deallocated blocks as zeros but %s does not promise it\n",
		       name, vdev->params.path);
		return -EINVAL;
	}
	return 0;
}

static int vaai_online_open(struct vaai_dev *vdev)
{
	struct vaai_online_was was;
	loff_t size;
	int ret;

	vaai_online_save(vdev, &was);
	/* the device's own, not what the LUN said while it was closed */
	vdev->unmap_unit = 0;
	vdev->lbprz = false;
	ret = vaai_store_reopen(vdev, &size);
	if (!ret)
		ret = vaai_online_check(vdev, size, was.nr_bytes);
	if (ret) {
		vaai_store_close(vdev);
		vaai_online_restore(vdev, &was);
		return ret;
	}
	vaai_dev_set_limits(vdev);
	if (size != was.nr_bytes) {
		pr_info("%s: capacity %lld -> %lld bytes\n",
			vaai_dev_name(vdev), was.nr_bytes, size);
		WRITE_ONCE(vdev->nr_bytes, size);
		vaai_ua_raise(vdev, VAAI_UA_CAPACITY);
	}
	WRITE_ONCE(vdev->store, &vaai_bdev_ops);
	percpu_ref_reinit(&vdev->online);
	pr_info("%s: online: %s store %s\n", vaai_dev_name(vdev),
		vdev->store->name, vdev->params.path);
	return 0;
}

/* Wait for what holds the store; false (and still online) if killed. */
static bool vaai_online_drain(struct vaai_dev *vdev)
{
	reinit_completion(&vdev->offlined);
	percpu_ref_kill(&vdev->online);
	if (!wait_for_completion_killable(&vdev->offlined) ||
	    try_wait_for_completion(&vdev->offlined))
		return true;
	percpu_ref_resurrect(&vdev->online);
	return false;
}

static int vaai_online_close(struct vaai_dev *vdev)
{
	if (vdev->store != &vaai_bdev_ops) {
		pr_err("%s: a %s store does not go offline\n",
		       vaai_dev_name(vdev), vdev->store->name);
		return -EOPNOTSUPP;
	}
	if (!vaai_online_drain(vdev))
		return -EINTR;
	/* the data moves to the peer: what a token stood for is gone */
	vaai_odx_tokens_drop(vdev);
	vaai_store_close(vdev);
	pr_info("%s: offline: %s closed\n", vaai_dev_name(vdev),
		vdev->params.path);
	return 0;
}

int vaai_online_set(struct vaai_dev *vdev, bool on)
{
	int ret = 0;

	if (mutex_lock_killable(&vdev->online_lock))
		return -EINTR;
	if (on != vaai_online(vdev))
		ret = on ? vaai_online_open(vdev) : vaai_online_close(vdev);
	mutex_unlock(&vdev->online_lock);
	return ret;
}

/*
 * configure_device's first step: the store opened, or with online=0 the
 * LUN enabled with it closed, as big as size= says and as thin as
 * unmap_unit= and lbprz= say.  An enable that LIO failed after us
 * (destroy_device) may be tried again: the reference starts live.
 */
int vaai_online_configure(struct vaai_dev *vdev)
{
	struct vaai_params *p = &vdev->params;
	const char *name = vaai_dev_name(vdev);

	if (!vaai_online(vdev))
		percpu_ref_reinit(&vdev->online);
	if (!p->offline) {
		if (p->unmap_unit || p->lbprz) {
			pr_err("%s: unmap_unit= and lbprz= describe a store enabled closed (online=0)\n",
			       name);
			return -EINVAL;
		}
		return vaai_store_open(vdev);
	}
	if (!p->path || !p->size) {
		pr_err("%s: online=0 needs path= and size=\n", name);
		return -EINVAL;
	}
	vdev->nr_bytes = p->size;
	vdev->unmap_unit = p->unmap_unit;
	vdev->lbprz = p->lbprz;
	/* nothing holds it yet: the wait is one RCU grace period */
	reinit_completion(&vdev->offlined);
	percpu_ref_kill(&vdev->online);
	wait_for_completion(&vdev->offlined);
	pr_info("%s: offline: %s, %llu bytes\n", name, p->path, p->size);
	return 0;
}
