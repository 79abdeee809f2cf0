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

/* Per-LUN I/O metrics (vaai_metrics.c), one file per kind of command. */
#define VAAI_IO_STAT(_kind, _op)					\
static ssize_t vaai_io_##_kind##_show(struct config_item *item, char *page) \
{									\
	return vaai_metrics_show_op(vaai_attrib_dev(item), _op, page);	\
}									\
static struct configfs_attribute vaai_io_attr_##_kind = {		\
	.ca_name	= "stats_io_" #_kind,				\
	.ca_mode	= 0444,						\
	.ca_owner	= THIS_MODULE,					\
	.show		= vaai_io_##_kind##_show,			\
}

VAAI_IO_STAT(read, VAAI_OP_READ);
VAAI_IO_STAT(write, VAAI_OP_WRITE);
VAAI_IO_STAT(ats, VAAI_OP_ATS);
VAAI_IO_STAT(zero, VAAI_OP_ZERO);
VAAI_IO_STAT(unmap, VAAI_OP_UNMAP);
VAAI_IO_STAT(clone, VAAI_OP_CLONE);
VAAI_IO_STAT(odx, VAAI_OP_ODX);

static ssize_t vaai_lock_wait_show(struct config_item *item, char *page)
{
	return vaai_metrics_show_lock_wait(vaai_attrib_dev(item), page);
}

static struct configfs_attribute vaai_attr_lock_wait = {
	.ca_name	= "stats_lock_wait",
	.ca_mode	= 0444,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_lock_wait_show,
};

static ssize_t vaai_ats_worst_show(struct config_item *item, char *page)
{
	return vaai_metrics_show_ats_worst(vaai_attrib_dev(item), page);
}

static struct configfs_attribute vaai_attr_ats_worst = {
	.ca_name	= "stats_ats_worst_us",
	.ca_mode	= 0444,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_ats_worst_show,
};

static struct configfs_attribute *vaai_own_attrs[] = {
	&vaai_tp_attr_soft_threshold,
	&vaai_attr_io_mode,
	&vaai_attr_io_stats,
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
	&vaai_stat_attr_odx_held_bytes,
	&vaai_attr_odx_point_in_time,
	&vaai_attr_alua_peer_ports,
	&vaai_stat_attr_rw_deferred,
	&vaai_stat_attr_in_flight,
	&vaai_io_attr_read,
	&vaai_io_attr_write,
	&vaai_io_attr_ats,
	&vaai_io_attr_zero,
	&vaai_io_attr_unmap,
	&vaai_io_attr_clone,
	&vaai_io_attr_odx,
	&vaai_attr_lock_wait,
	&vaai_attr_ats_worst,
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
