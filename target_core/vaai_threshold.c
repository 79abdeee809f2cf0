// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the thin-provisioning soft threshold (SBC-4 4.7.3.8).
 *
 * attrib/tp_soft_threshold is a percentage of the LUN's capacity (0: off).
 * When a write takes the backing file's allocation to it, every I_T nexus
 * gets one UNIT ATTENTION, THIN PROVISIONING SOFT THRESHOLD REACHED, on its
 * next command (vaai_ua.c).  Falling back under the threshold (UNMAP)
 * re-arms it.  Only the file store knows how much it has allocated; a
 * block device LUN refuses the setting.  The allocation is asked of the
 * file system, as stat(2) does: XFS does not keep the inode's i_blocks.
 * That may sleep, so a write completing in interrupt context has a work
 * item look.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>

#include "vaai.h"

/* Bytes the file store's file has allocated; process context. */
u64 vaai_file_allocated(struct vaai_dev *vdev)
{
	struct kstat st;

	if (vfs_getattr(&vdev->file->f_path, &st, STATX_BLOCKS,
			AT_STATX_SYNC_AS_STAT))
		return (u64)file_inode(vdev->file)->i_blocks << 9;
	return st.blocks << 9;
}

static bool vaai_tp_over(struct vaai_dev *vdev, u8 threshold)
{
	return vaai_file_allocated(vdev) * 100 >= (u64)threshold * vdev->nr_bytes;
}

static void vaai_tp_update(struct vaai_dev *vdev)
{
	u8 threshold = READ_ONCE(vdev->tp.threshold);
	unsigned long flags;
	bool over;

	if (!threshold)
		return;
	over = vaai_tp_over(vdev, threshold);
	if (over == READ_ONCE(vdev->tp.crossed))
		return;

	spin_lock_irqsave(&vdev->tp.lock, flags);
	if (over && !vdev->tp.crossed) {
		vaai_ua_raise(vdev, VAAI_UA_SOFT_THRESHOLD);
		pr_info("%s: thin provisioning soft threshold of %u%% reached\n",
			vdev->dev.dev_group.cg_item.ci_name, vdev->tp.threshold);
	}
	vdev->tp.crossed = over;
	spin_unlock_irqrestore(&vdev->tp.lock, flags);
}

/*
 * The soft threshold in force, percent; 0 where there is none: off, not a
 * file store, or a fully provisioned LUN (THRESHOLD EXPONENT 0).
 */
u8 vaai_tp_threshold(struct vaai_dev *vdev)
{
	const struct se_dev_attrib *da = &vdev->dev.dev_attrib;

	if (vdev->store != &vaai_file_ops ||
	    (!da->emulate_tpu && !da->emulate_tpws))
		return 0;
	return READ_ONCE(vdev->tp.threshold);
}

static void vaai_tp_work(struct work_struct *work)
{
	vaai_tp_update(container_of(work, struct vaai_dev, tp.work));
}

void vaai_tp_init(struct vaai_dev *vdev)
{
	spin_lock_init(&vdev->tp.lock);
	INIT_WORK(&vdev->tp.work, vaai_tp_work);
}

/* The device is going: no look at its file after this. */
void vaai_tp_exit(struct vaai_dev *vdev)
{
	cancel_work_sync(&vdev->tp.work);
}

/*
 * After a write or deallocation: has the allocation crossed the threshold?
 * Any context: a direct write completes in interrupt context.
 */
void vaai_tp_check(struct vaai_dev *vdev)
{
	if (!vaai_tp_threshold(vdev))
		return;
	if (in_task())
		vaai_tp_update(vdev);
	else
		schedule_work(&vdev->tp.work);
}

static ssize_t vaai_tp_soft_threshold_show(struct config_item *item, char *page)
{
	return sprintf(page, "%u\n", READ_ONCE(vaai_attrib_dev(item)->tp.threshold));
}

static ssize_t vaai_tp_soft_threshold_store(struct config_item *item,
					    const char *page, size_t count)
{
	struct vaai_dev *vdev = vaai_attrib_dev(item);
	unsigned long flags;
	bool over;
	u8 val;
	int ret;

	ret = kstrtou8(page, 0, &val);
	if (ret)
		return ret;
	if (val > 100)
		return -EINVAL;
	if (val && !target_dev_configured(&vdev->dev))
		return -EAGAIN;
	if (val && vdev->store != &vaai_file_ops) {
		pr_err("%s: only a file store knows how much it has allocated\n",
		       vdev->dev.dev_group.cg_item.ci_name);
		return -EOPNOTSUPP;
	}
	over = val && vaai_tp_over(vdev, val);
	spin_lock_irqsave(&vdev->tp.lock, flags);
	vdev->tp.threshold = val;
	vdev->tp.crossed = over;
	vaai_ua_withdraw(vdev, VAAI_UA_SOFT_THRESHOLD);
	spin_unlock_irqrestore(&vdev->tp.lock, flags);
	return count;
}

struct configfs_attribute vaai_tp_attr_soft_threshold = {
	.ca_name	= "tp_soft_threshold",
	.ca_mode	= 0644,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_tp_soft_threshold_show,
	.store		= vaai_tp_soft_threshold_store,
};
