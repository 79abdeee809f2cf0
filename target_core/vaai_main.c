// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: module init and LIO backend registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/rcupdate.h>

#include "vaai.h"

/*
 * Blocking store work (file I/O, cache flushes) runs here, off the fabric.
 * Not WQ_MEM_RECLAIM: a rescuer runs the items it rescues one at a time,
 * and ours block on the store for a whole I/O, so one slow store would hold
 * every LUN's commands behind it past the initiators' timeouts.  The cost:
 * memory reclaim must not wait on a LUN this machine is itself logged in to
 * (docs/operations.md says that setup is not supported).
 */
static struct workqueue_struct *vaai_wq;

static void vaai_io_work(struct work_struct *work)
{
	struct vaai_io *io = container_of(work, struct vaai_io, work);

	io->work_fn(io);
}

static void vaai_io_queue_on(struct workqueue_struct *wq, struct vaai_io *io,
			     void (*fn)(struct vaai_io *io))
{
	io->work_fn = fn;
	INIT_WORK(&io->work, vaai_io_work);
	queue_work(wq, &io->work);
}

void vaai_io_queue(struct vaai_io *io, void (*fn)(struct vaai_io *io))
{
	vaai_io_queue_on(vaai_wq, io, fn);
}

/*
 * Large READs and WRITEs are started here rather than in the fabric's
 * context (vaai_rw.c).  Starting one may move all of its data (a RAM disk
 * copies it in submit_bio, a buffered write into the page cache), so only
 * a few start at a time, max_active of them (one per online CPU at load,
 * in all from 6.9; per NUMA node before 6.6, per CPU from 6.6 to 6.8,
 * where the bound does not hold): what LIO runs beside them, a COMPARE
 * AND WRITE among it, competes for the CPUs with that many copies, not
 * with every large command in flight.  Where the store only queues the I/O, starting is
 * short and the bound costs nothing.  What would wait for a range lock
 * goes on to vaai_wq before it waits; what blocks on the device's request
 * queue or a journal (a full queue, an mtime update) still holds a worker
 * here while it does, and the large transfers of other LUNs wait for it.
 */
static struct workqueue_struct *vaai_start_wq;

void vaai_io_queue_start(struct vaai_io *io, void (*fn)(struct vaai_io *io))
{
	vaai_io_queue_on(vaai_start_wq, io, fn);
}

/*
 * EXTENDED COPY and WRITE USING TOKEN run for long, on their own queue: they
 * must not hold up READ/WRITE work.  How many of their chunks move at once
 * is vaai_copy.c's to bound, not the queue's: a copy queued behind others
 * would not see its abort until it started.
 *
 * The queue is WQ_HIGHPRI for the workers that come with it, not for the
 * priority: unbound queues of the same attributes share a pool of workers
 * (per NUMA node or cache domain), and a copy holds several of them,
 * mostly asleep for a chunk slot.  In the ordinary unbound pool they were
 * among the workers that iSCSI initiators on the same machine transmit
 * from: beside four 4 MiB copies a heartbeat's slowest 1 % waited 4.6 ms
 * to reach the target, and its p99 was 2.95x LIO's (docs/ats.md).  The
 * nice -20 pool is one that few queues use.  Each copy work item runs as
 * ordinary or background work (vaai_copy.c), not at the pool's nice -20.
 */
static struct workqueue_struct *vaai_copy_wq;

void vaai_queue_copy(struct work_struct *work)
{
	queue_work(vaai_copy_wq, work);
}

/*
 * A copy that only shares extents is short and sleeps rather than
 * computes: it runs on the submitting CPU, where LIO also completes the
 * command, instead of waking another CPU to start it and to finish it.
 * CPU-intensive, so a long one does not hold up the CPU's other work.
 */
static struct workqueue_struct *vaai_clone_wq;

void vaai_queue_clone(struct work_struct *work)
{
	queue_work(vaai_clone_wq, work);
}

static int vaai_attach_hba(struct se_hba *hba, u32 host_id)
{
	pr_debug("HBA %u attached\n", host_id);
	return 0;
}

static void vaai_detach_hba(struct se_hba *hba)
{
}

static struct se_device *vaai_alloc_device(struct se_hba *hba, const char *name)
{
	struct vaai_dev *vdev;

	vdev = kzalloc(sizeof(*vdev), GFP_KERNEL);
	if (!vdev)
		return NULL;
	if (vaai_metrics_init(vdev)) {
		kfree(vdev);
		return NULL;
	}
	if (vaai_online_init(vdev)) {
		vaai_metrics_exit(vdev);
		kfree(vdev);
		return NULL;
	}
	vaai_tp_init(vdev);
	vaai_ua_init(vdev);
	vaai_rlock_init(&vdev->rlock);
	vaai_copies_init(&vdev->copies);
	vaai_odx_dev_init(vdev);
	vaai_alua_peer_init(vdev);
	return &vdev->dev;
}

static int vaai_configure_device(struct se_device *dev)
{
	struct vaai_dev *vdev = to_vaai_dev(dev);
	struct se_dev_attrib *da = &dev->dev_attrib;
	int ret;

	ret = vaai_online_configure(vdev);
	if (ret)
		return ret;

	da->hw_block_size = max_t(u32, vdev->min_block, VAAI_MIN_BLOCK_SIZE);
	da->hw_queue_depth = VAAI_QUEUE_DEPTH;
	/* LIO sets it so on return: the limits below are in these blocks. */
	da->block_size = da->hw_block_size;

	/*
	 * A thin LUN by default where the store can deallocate (LIO leaves
	 * UNMAP and WRITE SAME with UNMAP off); emulate_tpu/tpws still turn
	 * them off.
	 */
	vaai_dev_set_limits(vdev);
	vaai_odx_snap_probe(vdev);
	if (vdev->unmap_unit) {
		da->emulate_tpu = 1;
		da->emulate_tpws = 1;
		da->unmap_zeroes_data = vdev->lbprz;
	}

	if (vdev->store)
		pr_info("%s: %s store %s, %lld bytes%s\n",
			dev->dev_group.cg_item.ci_name, vdev->store->name,
			vdev->params.path, vdev->nr_bytes,
			vdev->params.readonly ? ", read-only" : "");
	return 0;
}

static void vaai_destroy_device(struct se_device *dev)
{
	vaai_odx_tokens_drop(to_vaai_dev(dev));
	vaai_tp_exit(to_vaai_dev(dev));
	vaai_store_close(to_vaai_dev(dev));
}

static void vaai_free_rcu(struct rcu_head *head)
{
	struct se_device *dev = container_of(head, struct se_device, rcu_head);
	struct vaai_dev *vdev = to_vaai_dev(dev);

	vaai_copies_free(&vdev->copies);
	vaai_online_exit(vdev);
	vaai_metrics_exit(vdev);
	kfree(vdev->params.path);
	kfree(vdev);
}

/* LIO core may still look at the device under RCU until a grace period. */
static void vaai_free_device(struct se_device *dev)
{
	call_rcu(&dev->rcu_head, vaai_free_rcu);
}

/*
 * LIO asks before it lets emulate_tpu/tpws be turned on.  A LUN whose store
 * is closed takes what it is declared; online=1 checks it.
 */
static bool vaai_configure_unmap(struct se_device *dev)
{
	struct vaai_dev *vdev = to_vaai_dev(dev);

	return vdev->unmap_unit != 0 || !vaai_online(vdev);
}

/*
 * LIO's contract: the LBA of the last block, not the number of blocks.  A
 * store smaller than one block of the current size (block_size raised after
 * creation) still reports LBA 0; vaai_execute_rw() keeps I/O inside it.
 */
static sector_t vaai_get_blocks(struct se_device *dev)
{
	struct vaai_dev *vdev = to_vaai_dev(dev);
	u64 nr = div_u64(vdev->nr_bytes, dev->dev_attrib.block_size);

	return nr ? nr - 1 : 0;
}

static struct target_backend_ops vaai_backend_ops;

bool vaai_dev_is_ours(struct se_device *dev)
{
	return dev->transport == &vaai_backend_ops;
}

static struct target_backend_ops vaai_backend_ops = {
	.name			= "vaai",
	.inquiry_prod		= "VAAI",
	.inquiry_rev		= "0.1",
	.owner			= THIS_MODULE,
	.attach_hba		= vaai_attach_hba,
	.detach_hba		= vaai_detach_hba,
	.alloc_device		= vaai_alloc_device,
	.configure_device	= vaai_configure_device,
	.destroy_device		= vaai_destroy_device,
	.free_device		= vaai_free_device,
	.configure_unmap	= vaai_configure_unmap,
	.set_configfs_dev_params = vaai_set_configfs_dev_params,
	.show_configfs_dev_params = vaai_show_configfs_dev_params,
	.parse_cdb		= vaai_parse_cdb,
	.get_device_type	= sbc_get_device_type,
	.get_blocks		= vaai_get_blocks,
	/* tb_dev_attrib_attrs: LIO's SBC attributes and our counters, at init */
};

static int __init vaai_init(void)
{
	int ret;

	ret = vaai_io_cache_init();
	if (ret)
		return ret;

	ret = vaai_stats_attrs_init(&vaai_backend_ops.tb_dev_attrib_attrs);
	if (ret)
		goto out_cache_exit;

	vaai_wq = alloc_workqueue("vaai_io", WQ_UNBOUND, 0);
	if (!vaai_wq) {
		ret = -ENOMEM;
		goto out_stats_exit;
	}
	vaai_start_wq = alloc_workqueue("vaai_start", WQ_UNBOUND,
					num_online_cpus());
	if (!vaai_start_wq) {
		ret = -ENOMEM;
		goto out_destroy_wq;
	}
	vaai_copy_wq = alloc_workqueue("vaai_copy", WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!vaai_copy_wq) {
		ret = -ENOMEM;
		goto out_destroy_start_wq;
	}
	vaai_clone_wq = alloc_workqueue("vaai_clone",
					VAAI_WQ_PERCPU | WQ_CPU_INTENSIVE, 0);
	if (!vaai_clone_wq) {
		ret = -ENOMEM;
		goto out_destroy_copy_wq;
	}

	ret = vaai_copy_slots_init();
	if (ret)
		goto out_destroy_clone_wq;
	ret = transport_backend_register(&vaai_backend_ops);
	if (ret)
		goto out_slots_exit;
	return 0;

out_slots_exit:
	vaai_copy_slots_exit();
out_destroy_clone_wq:
	destroy_workqueue(vaai_clone_wq);
out_destroy_copy_wq:
	destroy_workqueue(vaai_copy_wq);
out_destroy_start_wq:
	destroy_workqueue(vaai_start_wq);
out_destroy_wq:
	destroy_workqueue(vaai_wq);
out_stats_exit:
	vaai_stats_attrs_exit(vaai_backend_ops.tb_dev_attrib_attrs);
out_cache_exit:
	vaai_io_cache_exit();
	return ret;
}

static void __exit vaai_exit(void)
{
	target_backend_unregister(&vaai_backend_ops);
	vaai_odx_exit();
	destroy_workqueue(vaai_clone_wq);
	destroy_workqueue(vaai_copy_wq);
	destroy_workqueue(vaai_start_wq);
	destroy_workqueue(vaai_wq);
	vaai_copy_slots_exit();
	/* vaai_free_rcu() callbacks must have run before the cache goes. */
	rcu_barrier();
	vaai_stats_attrs_exit(vaai_backend_ops.tb_dev_attrib_attrs);
	vaai_io_cache_exit();
}

module_init(vaai_init);
module_exit(vaai_exit);

MODULE_DESCRIPTION("LIO backend with VAAI/ODX offloads");
MODULE_AUTHOR("vaai developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(VAAI_VERSION);
