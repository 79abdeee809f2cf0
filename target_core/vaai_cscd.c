// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: EXTENDED COPY's CSCD descriptors, resolved to LUNs.
 *
 * An identification descriptor (SPC-4 6.4.5.2) names a logical unit by a
 * designator from its Device Identification VPD page.  It resolves only to a
 * LUN mapped to the I_T nexus the command came on: the LUNs of its node ACL,
 * which in demo mode LIO fills with the TPG's LUNs through a dynamic ACL.
 * Upstream LIO once searched every device on the host (CVE-2020-28374), which
 * let an initiator read and write LUNs it was never given.  Only devices of
 * this backend with 3PC enabled take part, through ports whose ALUA state
 * lets them carry I/O.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/percpu-refcount.h>
#include <linux/rculist.h>

#include "vaai_xcopy.h"

#define VAAI_NAA_LEN	16

/* PERSISTENT RESERVE TYPE values (SPC-4 6.16.3.4). */
#define VAAI_PR_WE		0x1
#define VAAI_PR_EA		0x3
#define VAAI_PR_WE_RO		0x5
#define VAAI_PR_EA_RO		0x6
#define VAAI_PR_WE_AR		0x7
#define VAAI_PR_EA_AR		0x8

/*
 * The NAA IEEE Registered Extended designator LIO core reports for @dev in
 * VPD page 0x83: NAA 6h in the first nibble, the 24-bit IEEE company id in
 * the next six, and the hexadecimal digits of the unit serial number in the
 * remaining 25 (other characters skipped, missing digits zero).
 */
static void vaai_dev_naa(struct se_device *dev, u8 *naa)
{
	const char *p = dev->t10_wwn.unit_serial;
	u32 cid = dev->t10_wwn.company_id;
	unsigned int nibble = 7;

	memset(naa, 0, VAAI_NAA_LEN);
	naa[0] = 0x60 | ((cid >> 20) & 0xf);
	naa[1] = cid >> 12;
	naa[2] = cid >> 4;
	naa[3] = (cid & 0xf) << 4;
	for (; *p && nibble < 2 * VAAI_NAA_LEN; p++) {
		int v = hex_to_bin(*p);

		if (v < 0)
			continue;
		naa[nibble / 2] |= nibble & 1 ? v : v << 4;
		nibble++;
	}
}

/*
 * The designator of an identification descriptor, if it is one our LUNs
 * have: binary, of the logical unit, NAA, 16 bytes (bytes 4-27 hold a
 * designation descriptor, SPC-4 7.8.6.1).
 */
static const u8 *vaai_cscd_naa(const u8 *desc)
{
	if ((desc[4] & 0x0f) != 0x01 || (desc[5] & 0x30) != 0x00 ||
	    (desc[5] & 0x0f) != 0x03 || desc[7] != VAAI_NAA_LEN)
		return NULL;
	return &desc[8];
}

/* ALUA access states (SPC-4 6.36, REPORT TARGET PORT GROUPS). */
#define VAAI_ALUA_ACTIVE_OPTIMIZED	0x0
#define VAAI_ALUA_ACTIVE_NON_OPTIMIZED	0x1

/*
 * Whether @lun's port may carry I/O now: its ALUA group Active (optimized
 * or not) and the port not offline.  LIO core checks the LUN a command
 * arrives at; a copy reads or writes others, which must be checked here
 * (a pair's LUN in Standby on this node is not to be written behind the
 * active node's back).  Under rcu_read_lock().
 */
static bool vaai_lun_accessible(struct se_lun *lun)
{
	struct t10_alua_tg_pt_gp *gp = rcu_dereference(lun->lun_tg_pt_gp);
	int state;

	if (atomic_read(&lun->lun_tg_pt_secondary_offline))
		return false;
	if (!gp)
		return true;	/* no ALUA group: LIO core checks nothing either */
	state = READ_ONCE(gp->tg_pt_gp_alua_access_state);
	return state == VAAI_ALUA_ACTIVE_OPTIMIZED ||
	       state == VAAI_ALUA_ACTIVE_NON_OPTIMIZED;
}

/*
 * The first LUN mapped to the command's nexus whose device match() takes,
 * among this backend's devices with 3PC on, whose port is accessible;
 * -ENODEV if none.
 */
static int vaai_cscd_find(struct se_cmd *cmd,
			  bool (*match)(struct se_device *dev, const void *arg),
			  const void *arg, struct vaai_cscd *c)
{
	struct se_session *sess = cmd->se_sess;
	struct se_dev_entry *deve;
	int ret = -ENODEV;

	if (!sess || !sess->se_node_acl)
		return -ENODEV;

	rcu_read_lock();
	hlist_for_each_entry_rcu(deve, &sess->se_node_acl->lun_entry_hlist, link) {
		struct se_lun *lun = deve->se_lun;
		struct se_device *dev = rcu_dereference(lun->lun_se_dev);

		if (!dev || !vaai_dev_is_ours(dev) ||
		    !dev->dev_attrib.emulate_3pc || !match(dev, arg) ||
		    !vaai_lun_accessible(lun))
			continue;
		/* A LUN on its way out, or whose store is closed, is not reachable. */
		if (!percpu_ref_tryget_live(&lun->lun_ref))
			break;
		if (!vaai_store_get(to_vaai_dev(dev))) {
			percpu_ref_put(&lun->lun_ref);
			break;
		}
		c->lun = lun;
		c->vdev = to_vaai_dev(dev);
		c->info.readonly = deve->lun_access_ro || lun->lun_access_ro ||
				   c->vdev->params.readonly;
		ret = 0;
		break;
	}
	rcu_read_unlock();
	return ret;
}

static bool vaai_cscd_match_naa(struct se_device *dev, const void *want)
{
	u8 naa[VAAI_NAA_LEN];

	if (!(dev->dev_flags & DF_EMULATED_VPD_UNIT_SERIAL))
		return false;
	vaai_dev_naa(dev, naa);
	return !memcmp(naa, want, VAAI_NAA_LEN);
}

/* -ENODEV unless @desc names a LUN this command's nexus may use. */
int vaai_cscd_resolve(struct se_cmd *cmd, const u8 *desc, struct vaai_cscd *c)
{
	const u8 *want = vaai_cscd_naa(desc);

	if (!want)
		return -ENODEV;
	return vaai_cscd_find(cmd, vaai_cscd_match_naa, want, c);
}

static bool vaai_cscd_match_dev(struct se_device *dev, const void *want)
{
	const struct vaai_odx_src *src = want;

	return to_vaai_dev(dev) == src->vdev && to_vaai_dev(dev)->gen == src->gen;
}

/* -ENODEV unless the nexus has a LUN of the device a token was made of. */
int vaai_cscd_resolve_src(struct se_cmd *cmd, const struct vaai_odx_src *src,
			  struct vaai_cscd *c)
{
	return vaai_cscd_find(cmd, vaai_cscd_match_dev, src, c);
}

/*
 * The identification descriptor naming @dev as vaai_cscd_resolve() takes
 * it (SPC-4 6.4.5.2): a ROD token names the LUN that made it this way.
 */
void vaai_cscd_describe(struct se_device *dev, u8 *desc)
{
	memset(desc, 0, VAAI_XCOPY_CSCD_LEN);
	desc[0] = VAAI_CSCD_ID;
	desc[4] = 0x01;			/* binary */
	desc[5] = 0x03;			/* of the logical unit, NAA */
	desc[7] = VAAI_NAA_LEN;
	vaai_dev_naa(dev, &desc[8]);
	put_unaligned_be24(dev->dev_attrib.block_size, &desc[29]);
}

/*
 * The LUN the command came to, as a CSCD: the destination of a WRITE
 * USING TOKEN.  LIO core holds it for the command, and the command its
 * store; the copy holds both too, as it does every CSCD's.
 */
int vaai_cscd_own(struct se_cmd *cmd, struct vaai_cscd *c)
{
	struct se_lun *lun = cmd->se_lun;

	if (!percpu_ref_tryget_live(&lun->lun_ref))
		return -ENODEV;
	if (!vaai_store_get(to_vaai_dev(cmd->se_dev))) {
		percpu_ref_put(&lun->lun_ref);
		return -ENODEV;
	}
	c->lun = lun;
	c->vdev = to_vaai_dev(cmd->se_dev);
	c->info.readonly = vaai_cmd_write_protected(cmd);
	return 0;
}

void vaai_cscd_release(struct vaai_xcopy *xc)
{
	unsigned int i;

	for (i = 0; i < xc->list.nr_cscds; i++) {
		if (!xc->cscd[i].lun)
			continue;
		vaai_store_put(xc->cscd[i].vdev);
		percpu_ref_put(&xc->cscd[i].lun->lun_ref);
		xc->cscd[i].lun = NULL;
	}
}

static bool vaai_cscd_registered(struct se_device *dev, struct se_node_acl *nacl)
{
	struct t10_pr_registration *reg;
	bool found = false;

	spin_lock(&dev->t10_pr.registration_lock);
	list_for_each_entry(reg, &dev->t10_pr.registration_list, pr_reg_list) {
		if (reg->pr_reg_nacl == nacl) {
			found = true;
			break;
		}
	}
	spin_unlock(&dev->t10_pr.registration_lock);
	return found;
}

/*
 * Would a READ (or, for a destination, a WRITE) from this command's
 * initiator to the CSCD's device meet a reservation conflict?  LIO core
 * checks the LUN the command came to; the copy reaches others, and honours
 * their reservations too (SPC-4 5.13.1, table 53).  The nexus is matched by
 * its initiator, as registrations are made per initiator port.
 */
bool vaai_cscd_reserved(struct se_cmd *cmd, struct vaai_cscd *c)
{
	struct se_device *dev = &c->vdev->dev;
	struct se_node_acl *nacl = cmd->se_sess->se_node_acl;
	bool registered = vaai_cscd_registered(dev, nacl);
	struct t10_pr_registration *holder;
	bool conflict = false;

	spin_lock(&dev->dev_reservation_lock);
	if (dev->dev_reservation_flags & DRF_SPC2_RESERVATIONS) {
		conflict = dev->reservation_holder &&
			   dev->reservation_holder != cmd->se_sess;
		goto out;
	}
	holder = dev->dev_pr_res_holder;
	if (!holder || holder->pr_reg_nacl == nacl)
		goto out;
	switch (holder->pr_res_type) {
	case VAAI_PR_WE:
		conflict = c->info.dst;
		break;
	case VAAI_PR_EA:
		conflict = true;
		break;
	case VAAI_PR_WE_RO:
	case VAAI_PR_WE_AR:
		conflict = c->info.dst && !registered;
		break;
	case VAAI_PR_EA_RO:
	case VAAI_PR_EA_AR:
		conflict = !registered;
		break;
	}
out:
	spin_unlock(&dev->dev_reservation_lock);
	return conflict;
}
