// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the thin-provisioning soft threshold (SBC-4 4.7.3.8).
 *
 * attrib/tp_soft_threshold is a percentage of the LUN's capacity (0: off).
 * When a write takes the backing file's allocation to it, every I_T nexus
 * gets one UNIT ATTENTION, THIN PROVISIONING SOFT THRESHOLD REACHED, on its
 * next command (vaai_ua.c).  Falling back under the threshold (UNMAP)
 * re-arms it.  Only the file store knows how much it has allocated; a
 * block device LUN refuses the setting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>

#include "vaai.h"

static bool vaai_tp_over(struct vaai_dev *vdev)
{
	u64 used = (u64)file_inode(vdev->file)->i_blocks << 9;

	return used * 100 >= (u64)vdev->tp.threshold * vdev->nr_bytes;
}

/*
 * After a write or deallocation: has the allocation crossed the threshold?
 * Any context: a direct write completes in interrupt context.
 */
void vaai_tp_check(struct vaai_dev *vdev)
{
	struct se_dev_attrib *da = &vdev->dev.dev_attrib;
	unsigned long flags;
	bool over;

	if (!READ_ONCE(vdev->tp.threshold) || vdev->store != &vaai_file_ops)
		return;
	/* a fully provisioned LUN has no thresholds (THRESHOLD EXPONENT 0) */
	if (!da->emulate_tpu && !da->emulate_tpws)
		return;
	over = vaai_tp_over(vdev);
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

static ssize_t vaai_tp_soft_threshold_show(struct config_item *item, char *page)
{
	return sprintf(page, "%u\n", READ_ONCE(vaai_attrib_dev(item)->tp.threshold));
}

static ssize_t vaai_tp_soft_threshold_store(struct config_item *item,
					    const char *page, size_t count)
{
	struct vaai_dev *vdev = vaai_attrib_dev(item);
	unsigned long flags;
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
	spin_lock_irqsave(&vdev->tp.lock, flags);
	vdev->tp.threshold = val;
	vdev->tp.crossed = val && vaai_tp_over(vdev);
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
