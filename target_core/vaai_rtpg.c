// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: REPORT TARGET PORT GROUPS (SPC-4 6.36), with the
 * ports of a peer node this node cannot hold.
 *
 * A pair of nodes presents one device through two target port groups,
 * each node's port in its own.  LIO reports the groups of a device with
 * the ports this machine exports it through, and no group without one.
 * An iSCSI node can hold its peer's portal group, disabled, so that its
 * port is reported; a Fibre Channel node cannot: tcm_qla2xxx refuses a
 * target for a WWPN that no local HBA has.  The device's
 * attrib/alua_peer_ports declares the ports of the peer's group instead
 * ("<group id>:<relative port id>[,...]", or "none"); the group itself,
 * its id and its access state, is an ALUA group of LIO's like any other,
 * made on this node without members, set Standby or Active as the pair
 * moves.  This file answers REPORT TARGET PORT GROUPS for every vaai
 * device: LIO's groups and ports, the declared ports in the peer's group.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <scsi/scsi_proto.h>

#include "vaai.h"

/*
 * Most the reply holds here, whatever the allocation length: 16 groups
 * of 255 ports each.  The rest is counted in RETURN DATA LENGTH.
 */
#define VAAI_RTPG_MAX_LEN \
	(VAAI_RTPG_EXT_HDR_LEN + 16 * (VAAI_RTPG_GROUP_LEN + 255 * VAAI_RTPG_PORT_LEN))

/* The longest alua_peer_ports= worth reading, spaces and all. */
#define VAAI_PEER_PORTS_TEXT	128

void vaai_alua_peer_init(struct vaai_dev *vdev)
{
	spin_lock_init(&vdev->peer_lock);
}

/* IMPLICIT TRANSITION TIME: that of the group of the port asked. */
static u8 vaai_rtpg_trans_secs(struct se_cmd *cmd)
{
	struct t10_alua_tg_pt_gp *gp;
	u8 secs = 0;

	rcu_read_lock();
	gp = rcu_dereference(cmd->se_lun->lun_tg_pt_gp);
	if (gp)
		secs = min_t(int, gp->tg_pt_gp_implicit_trans_secs, U8_MAX);
	rcu_read_unlock();
	return secs;
}

/*
 * Is rtpi the port of one of this device's LUNs here?  A declared peer
 * port that is would be reported twice, in two groups; the port this
 * node holds is the one reported.  Called under tg_pt_gps_lock.
 */
static bool vaai_rtpg_port_here(struct se_device *dev, u16 rtpi)
{
	struct t10_alua_tg_pt_gp *gp;
	struct se_lun *lun;
	bool here = false;

	list_for_each_entry(gp, &dev->t10_alua.tg_pt_gps_list, tg_pt_gp_list) {
		spin_lock(&gp->tg_pt_gp_lock);
		list_for_each_entry(lun, &gp->tg_pt_gp_lun_list, lun_tg_pt_gp_link) {
			if (vaai_lun_rtpi(lun) == rtpi) {
				here = true;
				break;
			}
		}
		spin_unlock(&gp->tg_pt_gp_lock);
		if (here)
			break;
	}
	return here;
}

static void vaai_rtpg_fill(struct se_device *dev,
			   const struct vaai_alua_peer *peer,
			   struct vaai_rtpg_out *o)
{
	struct t10_alua_tg_pt_gp *gp;
	struct se_lun *lun;
	unsigned int i;

	spin_lock(&dev->t10_alua.tg_pt_gps_lock);
	list_for_each_entry(gp, &dev->t10_alua.tg_pt_gps_list, tg_pt_gp_list) {
		const struct vaai_rtpg_group g = {
			.id = gp->tg_pt_gp_id,
			.state = READ_ONCE(gp->tg_pt_gp_alua_access_state),
			.supported = gp->tg_pt_gp_alua_supported_states,
			.status = gp->tg_pt_gp_alua_access_status,
			.pref = gp->tg_pt_gp_pref,
		};

		vaai_rtpg_group(o, &g);
		spin_lock(&gp->tg_pt_gp_lock);
		list_for_each_entry(lun, &gp->tg_pt_gp_lun_list, lun_tg_pt_gp_link)
			vaai_rtpg_port(o, vaai_lun_rtpi(lun));
		spin_unlock(&gp->tg_pt_gp_lock);
		if (peer->nr && gp->tg_pt_gp_valid_id &&
		    gp->tg_pt_gp_id == peer->group) {
			for (i = 0; i < peer->nr; i++)
				if (!vaai_rtpg_port_here(dev, peer->rtpi[i]))
					vaai_rtpg_port(o, peer->rtpi[i]);
		}
		vaai_rtpg_group_end(o);
	}
	spin_unlock(&dev->t10_alua.tg_pt_gps_lock);
}

static sense_reason_t vaai_rtpg_execute(struct se_cmd *cmd)
{
	struct vaai_dev *vdev = to_vaai_dev(cmd->se_dev);
	bool ext = VAAI_RTPG_FORMAT(cmd->t_task_cdb) == VAAI_RTPG_FMT_EXTENDED;
	u32 cap = min_t(u32, cmd->data_length, VAAI_RTPG_MAX_LEN);
	struct vaai_alua_peer peer;
	struct vaai_rtpg_out o;
	u8 *buf;
	u32 len;

	if (!cap) {
		vaai_cmd_done_len(cmd, SAM_STAT_GOOD, 0);
		return TCM_NO_SENSE;
	}
	buf = kzalloc(cap, GFP_KERNEL);
	if (!buf)
		return TCM_OUT_OF_RESOURCES;
	spin_lock(&vdev->peer_lock);
	peer = vdev->peer;
	spin_unlock(&vdev->peer_lock);

	vaai_rtpg_begin(&o, buf, cap, ext, vaai_rtpg_trans_secs(cmd));
	vaai_rtpg_fill(cmd->se_dev, &peer, &o);
	len = vaai_rtpg_end(&o);
	vaai_cmd_complete_data(cmd, buf, min(len, cap));
	kfree(buf);
	return TCM_NO_SENSE;
}

bool vaai_rtpg_match(const u8 *cdb)
{
	return cdb[0] == MAINTENANCE_IN &&
	       (cdb[1] & 0x1f) == MI_REPORT_TARGET_PGS;
}

sense_reason_t vaai_rtpg_parse(struct se_cmd *cmd)
{
	return vaai_cdb_parse(cmd, vaai_rtpg_cdb_check, VAAI_XFER_IN, false,
			      vaai_rtpg_execute);
}

/* A number as show prints it, in decimal, or in hex after 0x. */
static int vaai_alua_peer_u16(char *s, u16 *v)
{
	s = strim(s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return kstrtou16(s + 2, 16, v);
	return kstrtou16(s, 10, v);
}

/* "<group>:<rtpi>[,<rtpi>...]" or "none" into *p; 0 or -EINVAL. */
static int vaai_alua_peer_parse(char *s, struct vaai_alua_peer *p)
{
	char *port;
	u16 rtpi;
	int i;

	memset(p, 0, sizeof(*p));
	s = strim(s);
	if (!strcmp(s, "none"))
		return 0;
	port = strchr(s, ':');
	if (!port)
		return -EINVAL;
	*port++ = '\0';
	if (vaai_alua_peer_u16(s, &p->group))
		return -EINVAL;
	while ((s = strsep(&port, ",")) != NULL) {
		/* 0 is reserved (SPC-4 7.8.6.7) */
		if (vaai_alua_peer_u16(s, &rtpi) || !rtpi ||
		    p->nr == VAAI_PEER_PORTS_MAX)
			return -EINVAL;
		for (i = 0; i < p->nr; i++)
			if (p->rtpi[i] == rtpi)
				return -EINVAL;
		p->rtpi[p->nr++] = rtpi;
	}
	return p->nr ? 0 : -EINVAL;
}

static ssize_t vaai_alua_peer_show(struct config_item *item, char *page)
{
	struct vaai_dev *vdev = vaai_attrib_dev(item);
	struct vaai_alua_peer p;
	ssize_t len;
	int i;

	spin_lock(&vdev->peer_lock);
	p = vdev->peer;
	spin_unlock(&vdev->peer_lock);
	if (!p.nr)
		return sysfs_emit(page, "none\n");
	len = sysfs_emit(page, "%u:", p.group);
	for (i = 0; i < p.nr; i++)
		len += sysfs_emit_at(page, len, "%s%u", i ? "," : "", p.rtpi[i]);
	return len + sysfs_emit_at(page, len, "\n");
}

static ssize_t vaai_alua_peer_store(struct config_item *item, const char *page,
				    size_t count)
{
	struct vaai_dev *vdev = vaai_attrib_dev(item);
	struct vaai_alua_peer p;
	char *buf;
	int ret;

	if (count > VAAI_PEER_PORTS_TEXT)
		return -EINVAL;
	buf = kstrndup(page, count, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = vaai_alua_peer_parse(buf, &p);
	kfree(buf);
	if (ret) {
		pr_err("%s: alua_peer_ports wants <group id>:<relative port id>[,...] (at most %u ports, none 0) or none\n",
		       vaai_dev_name(vdev), VAAI_PEER_PORTS_MAX);
		return ret;
	}
	spin_lock(&vdev->peer_lock);
	vdev->peer = p;
	spin_unlock(&vdev->peer_lock);
	return count;
}

/* The ports of the peer node's target port group (this file's head). */
struct configfs_attribute vaai_attr_alua_peer_ports = {
	.ca_name	= "alua_peer_ports",
	.ca_mode	= 0644,
	.ca_owner	= THIS_MODULE,
	.show		= vaai_alua_peer_show,
	.store		= vaai_alua_peer_store,
};
