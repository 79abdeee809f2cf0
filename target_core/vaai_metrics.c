// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: per-LUN I/O metrics, the figures an admin graphs.
 *
 * For reads, writes and each offload (ATS, zeroing, unmap, clone, ODX): the
 * commands, those that failed, the bytes they moved and their latency, as a
 * sum and as a histogram of log2 microsecond buckets (as blk-iolatency and
 * bcache keep theirs), so that percentiles come out without sampling.
 * Besides, the time commands waited for a block range another held, and
 * the slowest ATS of the last minute.  Counters are per CPU: a command
 * adds to its CPU's with this_cpu ops (safe from the completion's softirq)
 * and a read sums them; a sum read while commands complete may be a
 * command behind, never torn on the 64-bit kernels this is built for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/ktime.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"
#include "vaai_xcopy.h"

/*
 * A reader sums other CPUs' u64 counters with plain loads: whole on a
 * 64-bit kernel, torn on a 32-bit one, where u64_stats_sync would be
 * needed.  The module is for 64-bit kernels (Kconfig, dkms.conf).
 */
#if BITS_PER_LONG != 64
#error "target_core_vaai needs a 64-bit kernel"
#endif

int vaai_metrics_init(struct vaai_dev *vdev)
{
	vdev->metrics = alloc_percpu(struct vaai_metrics);
	vdev->io_stats = true;
	return vdev->metrics ? 0 : -ENOMEM;
}

/*
 * When a command that is to be counted begins: now, or 0 while the
 * device's attrib/io_stats is 0, which vaai_metrics_done() skips.  As the
 * block layer's queue/iostats does, the switch spares the clock reads and
 * counter updates of every command (what they cost: make bench).
 */
u64 vaai_metrics_start(struct vaai_dev *vdev)
{
	return READ_ONCE(vdev->io_stats) ? ktime_get_ns() ?: 1 : 0;
}

static ssize_t vaai_io_stats_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%d\n", READ_ONCE(vaai_attrib_dev(item)->io_stats));
}

static ssize_t vaai_io_stats_store(struct config_item *item, const char *page,
				   size_t count)
{
	bool on;
	int ret = kstrtobool(page, &on);

	if (ret)
		return ret;
	WRITE_ONCE(vaai_attrib_dev(item)->io_stats, on);
	return count;
}

struct configfs_attribute vaai_attr_io_stats = {
	.ca_name	= "io_stats",
	.ca_mode	= 0644,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_io_stats_show,
	.store		= vaai_io_stats_store,
};

void vaai_metrics_exit(struct vaai_dev *vdev)
{
	free_percpu(vdev->metrics);
}

/* What a command counts as; VAAI_OP_NONE for what is not graphed. */
enum vaai_op vaai_op_of(const struct se_cmd *cmd)
{
	const u8 *cdb = cmd->t_task_cdb;

	switch (cdb[0]) {
	case READ_6:
	case READ_10:
	case READ_12:
	case READ_16:
		return VAAI_OP_READ;
	case WRITE_6:
	case WRITE_10:
	case WRITE_12:
	case WRITE_16:
	case WRITE_VERIFY:
	case WRITE_VERIFY_12:
	case WRITE_VERIFY_16:
	case WRITE_ATOMIC_16:
		return VAAI_OP_WRITE;
	case COMPARE_AND_WRITE:
		return VAAI_OP_ATS;
	case WRITE_SAME:
	case WRITE_SAME_16:
		return VAAI_OP_ZERO;
	case VARIABLE_LENGTH_CMD:
		return get_unaligned_be16(&cdb[8]) == WRITE_SAME_32 ?
		       VAAI_OP_ZERO : VAAI_OP_NONE;
	case UNMAP:
		return VAAI_OP_UNMAP;
	case EXTENDED_COPY:
		switch (cdb[1] & 0x1f) {
		case VAAI_SA_POPULATE_TOKEN:
		case VAAI_SA_WRITE_USING_TOKEN:
			return VAAI_OP_ODX;
		}
		return VAAI_OP_CLONE;
	}
	return VAAI_OP_NONE;
}

static unsigned int vaai_lat_bucket(u64 us)
{
	return min_t(unsigned int, fls64(us), VAAI_LAT_BUCKETS - 1);
}

/*
 * The slowest COMPARE AND WRITE of each second of the last minute, one
 * slot per second: the second (low 32 bits of the monotonic clock's) in
 * the upper half of the slot, the latency in µs (at most U32_MAX) in the
 * lower.  A reader takes the worst of the slots of the last minute, so
 * that reading has no side effect and every reader sees the same.
 */
static u64 vaai_ats_slot(u32 sec, u64 us)
{
	return (u64)sec << 32 | min_t(u64, us, U32_MAX);
}

static void vaai_ats_worst_note(struct vaai_dev *vdev, u64 us)
{
	u32 sec = ktime_get_seconds();
	atomic64_t *slot = &vdev->ats_worst[sec % VAAI_ATS_WORST_SECONDS];
	s64 old = atomic64_read(slot);

	do {
		if ((u32)(old >> 32) == sec && (u32)old >= us)
			return;
	} while (!atomic64_try_cmpxchg(slot, &old, vaai_ats_slot(sec, us)));
}

/* attrib/stats_ats_worst_us: the slowest ATS of the last minute, in µs. */
ssize_t vaai_metrics_show_ats_worst(struct vaai_dev *vdev, char *page)
{
	u32 now = ktime_get_seconds();
	u32 worst = 0;
	unsigned int i;

	for (i = 0; i < VAAI_ATS_WORST_SECONDS; i++) {
		u64 v = atomic64_read(&vdev->ats_worst[i]);

		if (now - (u32)(v >> 32) < VAAI_ATS_WORST_SECONDS)
			worst = max(worst, (u32)v);
	}
	return sysfs_emit(page, "%u\n", worst);
}

/*
 * A command of kind op, begun at start_ns (vaai_metrics_start(); 0: not
 * counted), is done; it moved bytes.
 */
void vaai_metrics_done(struct vaai_dev *vdev, enum vaai_op op, u64 start_ns,
		       u64 bytes, bool failed)
{
	u64 us;

	if (op >= VAAI_OP_NR || !start_ns)
		return;
	us = div_u64(ktime_get_ns() - start_ns, NSEC_PER_USEC);
	if (failed)
		this_cpu_inc(vdev->metrics->op[op].errors);
	this_cpu_add(vdev->metrics->op[op].bytes, bytes);
	this_cpu_add(vdev->metrics->op[op].lat_us, us);
	this_cpu_inc(vdev->metrics->op[op].lat[vaai_lat_bucket(us)]);
	if (op == VAAI_OP_ATS)
		vaai_ats_worst_note(vdev, us);
}

/*
 * cmd was refused before it ran (a fault in its parameter list, a
 * conflict): a failed command that moved nothing, answered at once.
 */
void vaai_metrics_refused(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	enum vaai_op op = vaai_op_of(cmd);

	if (op < VAAI_OP_NR)
		vaai_metrics_done(vdev, op, vaai_metrics_start(vdev), 0, true);
}

/* A command waited ns for a block range (vaai_range_lock()). */
void vaai_metrics_lock_wait(struct vaai_dev *vdev, u64 ns)
{
	if (!READ_ONCE(vdev->io_stats))
		return;
	this_cpu_inc(vdev->metrics->lock_waits);
	this_cpu_add(vdev->metrics->lock_wait_us, div_u64(ns, NSEC_PER_USEC));
}

/*
 * One kind's figures summed over the CPUs, as its attrib/stats_io_<kind>
 * file shows them: commands, failed, bytes, latency sum (µs), then the
 * histogram's VAAI_LAT_BUCKETS counts (bucket b: latencies below 2^b µs
 * and, past the first, at least 2^(b-1); the last: the rest).
 */
ssize_t vaai_metrics_show_op(struct vaai_dev *vdev, enum vaai_op op, char *page)
{
	struct vaai_op_metrics sum = {};
	unsigned int b;
	ssize_t len;
	u64 cmds = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct vaai_op_metrics *m =
			&per_cpu_ptr(vdev->metrics, cpu)->op[op];

		sum.errors += READ_ONCE(m->errors);
		sum.bytes += READ_ONCE(m->bytes);
		sum.lat_us += READ_ONCE(m->lat_us);
		for (b = 0; b < VAAI_LAT_BUCKETS; b++)
			sum.lat[b] += READ_ONCE(m->lat[b]);
	}
	for (b = 0; b < VAAI_LAT_BUCKETS; b++)
		cmds += sum.lat[b];
	len = sysfs_emit(page, "%llu %llu %llu %llu", cmds, sum.errors,
			 sum.bytes, sum.lat_us);
	for (b = 0; b < VAAI_LAT_BUCKETS; b++)
		len += sysfs_emit_at(page, len, " %llu", sum.lat[b]);
	len += sysfs_emit_at(page, len, "\n");
	return len;
}

/* attrib/stats_lock_wait: range-lock waits, and their time in µs. */
ssize_t vaai_metrics_show_lock_wait(struct vaai_dev *vdev, char *page)
{
	u64 waits = 0, us = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct vaai_metrics *m = per_cpu_ptr(vdev->metrics, cpu);

		waits += READ_ONCE(m->lock_waits);
		us += READ_ONCE(m->lock_wait_us);
	}
	return sysfs_emit(page, "%llu %llu\n", waits, us);
}
