#!/bin/sh
# A target node of the rig (tests/ha/rig.py) joins a two-node Pacemaker
# cluster over the nodes' own link (10.77.3.0/24): corosync with
# two_node, pacemaker, this tree's resource agent (ha/ocf/pair) and
# vaaictl, and the rig's power switch as the fence agent (fence_rig).
# What it installs goes to the guest's overlays of /etc and /usr.
# Usage: cluster.sh start | wait NODES...
set -eu
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# the logs in the rig's directory, kept when the node's power is cut
LOGS=$VAAI_RIG/$(uname -n)

case ${1:-} in
start)
	mkdir -p /usr/lib/ocf/resource.d/vaai "$LOGS"
	install -m 755 "$REPO/ha/ocf/pair" /usr/lib/ocf/resource.d/vaai/pair
	install -m 755 "$REPO/tests/ha/fence_rig" /usr/sbin/fence_rig
	echo "RIG=$VAAI_RIG" > /etc/vaai-rig
	rm -f /usr/local/bin/vaaictl
	printf '#!/bin/sh\nPYTHONPATH=%s/python exec /usr/bin/python3 -m vaai "$@"\n' \
		"$REPO" > /usr/local/bin/vaaictl
	chmod 755 /usr/local/bin/vaaictl
	mkdir -p /etc/corosync
	cat > /etc/corosync/corosync.conf <<XEOF
totem {
	version: 2
	cluster_name: vaai-rig
	transport: knet
	crypto_cipher: none
	crypto_hash: none
	# emulated guests: a slow scheduler is not a dead node
	token: 5000
}
nodelist {
	node {
		ring0_addr: 10.77.3.1
		name: node1
		nodeid: 1
	}
	node {
		ring0_addr: 10.77.3.2
		name: node2
		nodeid: 2
	}
}
quorum {
	provider: corosync_votequorum
	two_node: 1
}
logging {
	to_syslog: no
	to_stderr: no
	to_logfile: yes
	logfile: $LOGS/corosync.log
}
XEOF
	# nothing of a cluster the host may have had
	rm -rf /var/lib/pacemaker/cib /var/lib/corosync
	mkdir -p /var/lib/corosync /var/lib/pacemaker/cib /var/lib/pacemaker/pengine \
		/var/log/pacemaker /run/crm
	chown -R hacluster:haclient /var/lib/pacemaker /var/log/pacemaker /run/crm
	corosync </dev/null >"$LOGS/corosync.out" 2>&1
	PCMK_logfile=$LOGS/pacemaker.log setsid pacemakerd </dev/null >"$LOGS/pacemakerd.out" 2>&1 &
	;;
wait)
	# until crm_mon shows every node named online
	shift
	online() {
		out=$(crm_mon -1 2>/dev/null) || return 1
		for node; do
			printf '%s\n' "$out" | grep -Eq "Online: \[.* $node( |\])" || return 1
		done
	}
	n=0
	until online "$@"; do
		n=$((n + 1))
		[ $n -lt 240 ] || { printf '%s\n' "${out:-no crm_mon}"; exit 1; }
		sleep 1
	done
	;;
*)
	echo "usage: $0 start | wait NODES..." >&2
	exit 2
	;;
esac
