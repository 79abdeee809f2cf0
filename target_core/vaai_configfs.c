// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the device's `control` and `info` configfs files.
 *
 * control takes comma-separated key=value pairs:
 *   path=<absolute path>   regular file (created sparse if size= is given
 *                          and it does not exist) or block device
 *   size=<bytes>           capacity of a new file; must match an existing one
 *   readonly=<0|1>
 *   online=<0|1>           0: enable the LUN with its store closed (a block
 *                          device only another node may open now; size=
 *                          says how big it is)
 *   unmap_unit=<bytes>     with online=0: the store's deallocation unit
 *   lbprz=<0|1>            with online=0: it reads deallocated blocks as
 *                          zeros (so that the closed LUN reports the Block
 *                          Limits and provisioning the open one will)
 * A write is applied whole or not at all, and only before the device is
 * enabled.  Once it is, the writes taken are
 *   resize=1               the store grew: take its size now
 *   online=0               close the store once the commands using it are
 *                          done; until online=1 they are refused
 *   online=1               open it again (vaai_online.c)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vaai.h"

/* Longest control write we parse: a path plus the other keys. */
#define VAAI_CONTROL_MAX	(PATH_MAX + 64)

/* A key that takes 0 or 1; *flag is left alone on anything else. */
static int vaai_param_flag(const char *key, const char *val, bool *flag)
{
	if (strcmp(val, "0") && strcmp(val, "1")) {
		pr_err("control: %s= wants 0 or 1, got '%s'\n", key, val);
		return -EINVAL;
	}
	*flag = val[0] == '1';
	return 0;
}

static int vaai_param_set(struct vaai_params *p, char *key, char *val)
{
	bool online = !p->offline;
	int ret;

	if (!strcmp(key, "path")) {
		if (val[0] != '/') {
			pr_err("control: path= must be absolute, got '%s'\n", val);
			return -EINVAL;
		}
		if (strlen(val) >= PATH_MAX)
			return -ENAMETOOLONG;
		kfree(p->path);
		p->path = kstrdup(val, GFP_KERNEL);
		return p->path ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "size")) {
		ret = kstrtou64(val, 0, &p->size);
		if (ret) {
			pr_err("control: size= wants a number of bytes, got '%s'\n",
			       val);
			return ret;
		}
		if (p->size > MAX_LFS_FILESIZE) {
			pr_err("control: size=%llu is beyond any file's reach\n",
			       p->size);
			return -EFBIG;
		}
		if (p->size < VAAI_MIN_BLOCK_SIZE) {
			pr_err("control: size=%llu is smaller than one %u-byte block\n",
			       p->size, VAAI_MIN_BLOCK_SIZE);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "readonly"))
		return vaai_param_flag(key, val, &p->readonly);
	if (!strcmp(key, "lbprz"))
		return vaai_param_flag(key, val, &p->lbprz);
	if (!strcmp(key, "unmap_unit")) {
		ret = kstrtou32(val, 0, &p->unmap_unit);
		if (ret || (p->unmap_unit && p->unmap_unit < VAAI_MIN_BLOCK_SIZE)) {
			pr_err("control: unmap_unit= wants 0 or a number of bytes from %u, got '%s'\n",
			       VAAI_MIN_BLOCK_SIZE, val);
			return ret ?: -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "online")) {
		ret = vaai_param_flag(key, val, &online);
		p->offline = !online;
		return ret;
	}
	pr_err("control: unknown key '%s' (known: path, size, readonly, online, "
	       "unmap_unit, lbprz)\n", key);
	return -EINVAL;
}

ssize_t vaai_set_configfs_dev_params(struct se_device *dev, const char *page,
				     ssize_t count)
{
	struct vaai_dev *vdev = to_vaai_dev(dev);
	struct vaai_params p;
	char *buf, *cur, *tok;
	int ret = 0;

	if (target_dev_configured(dev)) {
		/* configfs hands us a NUL-terminated page */
		if (sysfs_streq(page, "resize=1"))
			ret = vaai_store_resize(vdev);
		else if (sysfs_streq(page, "online=0"))
			ret = vaai_online_set(vdev, false);
		else if (sysfs_streq(page, "online=1"))
			ret = vaai_online_set(vdev, true);
		else {
			pr_err("control: %s is enabled; its parameters are fixed "
			       "(resize=1 takes a grown store's size, online=0|1 "
			       "closes or opens it)\n",
			       dev->dev_group.cg_item.ci_name);
			ret = -EBUSY;
		}
		return ret ?: count;
	}
	if (count > VAAI_CONTROL_MAX)
		return -EINVAL;

	buf = kstrndup(page, count, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	/* Work on a copy so a bad write leaves the old parameters alone. */
	p = vdev->params;
	p.path = NULL;
	if (vdev->params.path) {
		p.path = kstrdup(vdev->params.path, GFP_KERNEL);
		if (!p.path) {
			ret = -ENOMEM;
			goto out_free_buf;
		}
	}

	cur = strim(buf);
	while ((tok = strsep(&cur, ",")) != NULL) {
		char *key = strim(tok), *val;

		if (!*key)
			continue;
		val = strchr(key, '=');
		if (!val || !val[1]) {
			pr_err("control: '%s' is not key=value\n", key);
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		ret = vaai_param_set(&p, strim(key), strim(val));
		if (ret)
			break;
	}

	if (ret) {
		kfree(p.path);
	} else {
		kfree(vdev->params.path);
		vdev->params = p;
	}
out_free_buf:
	kfree(buf);
	return ret ? ret : count;
}

ssize_t vaai_show_configfs_dev_params(struct se_device *dev, char *page)
{
	struct vaai_dev *vdev = to_vaai_dev(dev);
	bool on = target_dev_configured(dev);
	const struct vaai_store_ops *store = READ_ONCE(vdev->store);

	return scnprintf(page, PAGE_SIZE,
			 "Path: %s\nStore: %s\nBytes: %llu\nReadonly: %d\n"
			 "Online: %d\n",
			 vdev->params.path ? vdev->params.path : "",
			 on && store ? store->name : "none",
			 on ? (u64)vdev->nr_bytes : vdev->params.size,
			 vdev->params.readonly,
			 on ? vaai_online(vdev) : !vdev->params.offline);
}
