// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: per-device counters, one read-only file each in the
 * device's attrib/ directory next to LIO's own attributes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/configfs.h>
#include <linux/slab.h>

#include "vaai.h"

#define VAAI_STAT(_f)							\
static ssize_t vaai_stat_##_f##_show(struct config_item *item, char *page) \
{									\
	return sprintf(page, "%lld\n", (long long)			\
		       atomic64_read(&vaai_attrib_dev(item)->stats._f));	\
}									\
static struct configfs_attribute vaai_stat_attr_##_f = {		\
	.ca_name	= "stats_" #_f,					\
	.ca_mode	= 0444,						\
	.ca_owner	= THIS_MODULE,					\
	.show		= vaai_stat_##_f##_show,			\
}

VAAI_STAT(ats);
VAAI_STAT(ats_miscompare);
VAAI_STAT(ats_failed);
VAAI_STAT(zero);
VAAI_STAT(zero_failed);
VAAI_STAT(zero_blocks);
VAAI_STAT(unmap);
VAAI_STAT(unmap_failed);
VAAI_STAT(unmap_blocks);
VAAI_STAT(clone_read);
VAAI_STAT(clone_write);
VAAI_STAT(clone_failed);
VAAI_STAT(clone_read_bytes);
VAAI_STAT(clone_write_bytes);
VAAI_STAT(odx_tokens);
VAAI_STAT(rw_deferred);
VAAI_STAT(in_flight);

static struct configfs_attribute *vaai_own_attrs[] = {
	&vaai_tp_attr_soft_threshold,
	&vaai_attr_io_mode,
	&vaai_stat_attr_ats,
	&vaai_stat_attr_ats_miscompare,
	&vaai_stat_attr_ats_failed,
	&vaai_stat_attr_zero,
	&vaai_stat_attr_zero_failed,
	&vaai_stat_attr_zero_blocks,
	&vaai_stat_attr_unmap,
	&vaai_stat_attr_unmap_failed,
	&vaai_stat_attr_unmap_blocks,
	&vaai_stat_attr_clone_read,
	&vaai_stat_attr_clone_write,
	&vaai_stat_attr_clone_failed,
	&vaai_stat_attr_clone_read_bytes,
	&vaai_stat_attr_clone_write_bytes,
	&vaai_stat_attr_odx_tokens,
	&vaai_stat_attr_rw_deferred,
	&vaai_stat_attr_in_flight,
};

/* LIO's SBC attributes followed by our settings and counters, NULL-terminated. */
int vaai_stats_attrs_init(struct configfs_attribute ***attrs)
{
	struct configfs_attribute **all;
	unsigned int n = 0, i;

	while (sbc_attrib_attrs[n])
		n++;
	all = kcalloc(n + ARRAY_SIZE(vaai_own_attrs) + 1, sizeof(*all),
		      GFP_KERNEL);
	if (!all)
		return -ENOMEM;
	memcpy(all, sbc_attrib_attrs, n * sizeof(*all));
	for (i = 0; i < ARRAY_SIZE(vaai_own_attrs); i++)
		all[n + i] = vaai_own_attrs[i];
	*attrs = all;
	return 0;
}

void vaai_stats_attrs_exit(struct configfs_attribute **attrs)
{
	kfree(attrs);
}
