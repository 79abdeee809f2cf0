#!/bin/sh
# open-iscsi as the initiator in the test/demo guest (or on any Debian host).
#   initiator.sh start                 initiator name, iscsi_tcp, iscsid
#   initiator.sh name                  print this initiator's IQN
#   initiator.sh login  IQN [IP[:PORT]]  CHAP from $CHAP_USER/$CHAP_PASS, and
#                                      the target's from $CHAP_USER_IN/$CHAP_PASS_IN
#   initiator.sh logout IQN [IP[:PORT]]
#   initiator.sh iface NAME IQN        a second initiator identity: an
#                                      open-iscsi iface with its own IQN
# login and logout go through the iface $ISCSI_IFACE (default: open-iscsi's
# own "default"), so one machine logs in to one target as two initiators.
# login sets each NAME=VALUE of $ISCSI_NODE_SETTINGS on the node record
# first (e.g. node.session.timeo.replacement_timeout=5).
set -eu
NAME_FILE=/etc/iscsi/initiatorname.iscsi
DEFAULT_IQN=iqn.2026-11.org.vaai:initiator

iqn() { sed -n 's/^InitiatorName=//p' "$NAME_FILE"; }
IFACE_OPT="-I ${ISCSI_IFACE:-default}"

case "${1:-}" in
start)
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
	[ -s "$NAME_FILE" ] && grep -q '^InitiatorName=' "$NAME_FILE" ||
		echo "InitiatorName=$DEFAULT_IQN" > "$NAME_FILE"
	modprobe iscsi_tcp
	pgrep -x iscsid >/dev/null || iscsid
	;;
name)
	iqn
	;;
iface)
	iscsiadm -m iface -I "$2" >/dev/null 2>&1 ||
		iscsiadm -m iface -I "$2" -o new >/dev/null
	iscsiadm -m iface -I "$2" -o update -n iface.initiatorname -v "$3" >/dev/null
	;;
login)
	portal=${3:-127.0.0.1:3260}
	iscsiadm -m discovery -t sendtargets -p "$portal" $IFACE_OPT >/dev/null
	set_node() { iscsiadm -m node -T "$2" -p "$portal" $IFACE_OPT -o update -n "$3" -v "$4"; }
	# 128 commands queued per LUN, as ESXi's software adapter does
	# (open-iscsi's default is 32); room for two such LUNs per session.
	set_node - "$2" node.session.queue_depth "${ISCSI_QUEUE_DEPTH:-128}"
	set_node - "$2" node.session.cmds_max 256
	set -f # node.conn[0]...: no glob
	for setting in ${ISCSI_NODE_SETTINGS:-}; do
		set_node - "$2" "${setting%%=*}" "${setting#*=}"
	done
	set +f
	if [ -n "${CHAP_USER:-}" ]; then
		set_node - "$2" node.session.auth.authmethod CHAP
		set_node - "$2" node.session.auth.username "$CHAP_USER"
		set_node - "$2" node.session.auth.password "$CHAP_PASS"
		if [ -n "${CHAP_USER_IN:-}" ]; then
			set_node - "$2" node.session.auth.username_in "$CHAP_USER_IN"
			set_node - "$2" node.session.auth.password_in "$CHAP_PASS_IN"
		fi
	fi
	iscsiadm -m node -T "$2" -p "$portal" $IFACE_OPT --login >/dev/null
	;;
logout)
	portal=${3:-127.0.0.1:3260}
	iscsiadm -m node -T "$2" -p "$portal" $IFACE_OPT --logout >/dev/null
	iscsiadm -m node -T "$2" -p "$portal" $IFACE_OPT -o delete >/dev/null
	;;
*)
	echo "usage: $0 start|name|login IQN [PORTAL]|logout IQN [PORTAL]|iface NAME IQN" >&2
	exit 2
	;;
esac
