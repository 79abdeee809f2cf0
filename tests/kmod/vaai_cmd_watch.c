// SPDX-License-Identifier: GPL-2.0
/*
 * vaai_cmd_watch: counts the calls that reach a command LIO has already
 * been given back.
 *
 * Once a backend completes a command (target_complete_cmd and its
 * variants), the fabric may free or reuse it at any moment; a backend that
 * maps, unmaps or completes it after that touches memory that is no longer
 * its own.  Over tcm_loop the command lives in the SCSI request and is not
 * freed, so neither KASAN nor any outcome shows the mistake there: it only
 * corrupts another command once in a while.  This module makes it visible
 * on every call: a kprobe on each of the LIO calls a backend makes on a
 * command checks CMD_T_COMPLETE, set by the completion before the fabric
 * is told.  The count is /sys/module/vaai_cmd_watch/parameters/late, which
 * the guest suites read around every test (tests/guest/conftest.py).
 *
 * The completions are watched only with completions=1 (a second
 * completion of one command): every command passes there, and under
 * software emulation the probes cost the suites about 5 % of their time.
 * The data mappings are rare and always watched.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <target/target_core_base.h>

static atomic_t vaai_cmd_watch_late = ATOMIC_INIT(0);

static int vaai_cmd_watch_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&vaai_cmd_watch_late));
}

static const struct kernel_param_ops vaai_cmd_watch_ops = {
	.get = vaai_cmd_watch_get,
};
module_param_cb(late, &vaai_cmd_watch_ops, NULL, 0444);
MODULE_PARM_DESC(late, "calls seen on a command already completed");

static int vaai_cmd_watch_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct se_cmd *cmd = (struct se_cmd *)regs_get_kernel_argument(regs, 0);

	if (!(READ_ONCE(cmd->transport_state) & CMD_T_COMPLETE))
		return 0;
	atomic_inc(&vaai_cmd_watch_late);
	pr_warn_ratelimited("%s on a completed command (opcode %02x), from %pS\n",
			    p->symbol_name, cmd->t_task_cdb ? cmd->t_task_cdb[0] : 0,
			    (void *)regs_get_kernel_stack_nth(regs, 0));
	return 0;
}

#define VAAI_CMD_WATCH(fn) { .symbol_name = #fn, .pre_handler = vaai_cmd_watch_pre }

static bool completions;
module_param(completions, bool, 0444);
MODULE_PARM_DESC(completions, "watch the completions too (every command's)");

/*
 * Every LIO call target_core_vaai makes with a command it may still own:
 * the data mappings first, then the completions.
 */
static struct kprobe vaai_cmd_watch_probes[] = {
	VAAI_CMD_WATCH(transport_kmap_data_sg),
	VAAI_CMD_WATCH(transport_kunmap_data_sg),
	VAAI_CMD_WATCH(target_complete_cmd),
	VAAI_CMD_WATCH(target_complete_cmd_with_length),
	VAAI_CMD_WATCH(target_complete_cmd_with_sense),
};
#define VAAI_CMD_WATCH_MAPPINGS	2

static struct kprobe *vaai_cmd_watch_list[ARRAY_SIZE(vaai_cmd_watch_probes)];
static int vaai_cmd_watch_nr;

static int __init vaai_cmd_watch_init(void)
{
	int i;

	vaai_cmd_watch_nr = completions ? ARRAY_SIZE(vaai_cmd_watch_probes) :
					  VAAI_CMD_WATCH_MAPPINGS;
	for (i = 0; i < vaai_cmd_watch_nr; i++)
		vaai_cmd_watch_list[i] = &vaai_cmd_watch_probes[i];
	return register_kprobes(vaai_cmd_watch_list, vaai_cmd_watch_nr);
}

static void __exit vaai_cmd_watch_exit(void)
{
	unregister_kprobes(vaai_cmd_watch_list, vaai_cmd_watch_nr);
}

module_init(vaai_cmd_watch_init);
module_exit(vaai_cmd_watch_exit);
MODULE_DESCRIPTION("Test aid: calls on LIO commands already completed");
MODULE_LICENSE("GPL");
