#!/bin/sh
# open-iscsi as the initiator in the test/demo guest (or on any Debian host).
#   initiator.sh start                 initiator name, iscsi_tcp, iscsid
#   initiator.sh name                  print this initiator's IQN
#   initiator.sh login  IQN [IP[:PORT]]  CHAP from $CHAP_USER/$CHAP_PASS, and
#                                      the target's from $CHAP_USER_IN/$CHAP_PASS_IN
#   initiator.sh logout IQN [IP[:PORT]]
set -eu
NAME_FILE=/etc/iscsi/initiatorname.iscsi
DEFAULT_IQN=iqn.2026-11.org.vaai:initiator

iqn() { sed -n 's/^InitiatorName=//p' "$NAME_FILE"; }

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
login)
	portal=${3:-127.0.0.1:3260}
	iscsiadm -m discovery -t sendtargets -p "$portal" >/dev/null
	set_node() { iscsiadm -m node -T "$2" -p "$portal" -o update -n "$3" -v "$4"; }
	if [ -n "${CHAP_USER:-}" ]; then
		set_node - "$2" node.session.auth.authmethod CHAP
		set_node - "$2" node.session.auth.username "$CHAP_USER"
		set_node - "$2" node.session.auth.password "$CHAP_PASS"
		if [ -n "${CHAP_USER_IN:-}" ]; then
			set_node - "$2" node.session.auth.username_in "$CHAP_USER_IN"
			set_node - "$2" node.session.auth.password_in "$CHAP_PASS_IN"
		fi
	fi
	iscsiadm -m node -T "$2" -p "$portal" --login >/dev/null
	;;
logout)
	portal=${3:-127.0.0.1:3260}
	iscsiadm -m node -T "$2" -p "$portal" --logout >/dev/null
	iscsiadm -m node -T "$2" -p "$portal" -o delete >/dev/null
	;;
*)
	echo "usage: $0 start|name|login IQN [PORTAL]|logout IQN [PORTAL]" >&2
	exit 2
	;;
esac
