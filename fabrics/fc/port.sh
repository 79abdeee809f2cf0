#!/bin/sh
# One FCoE port in VN2VN mode (no FC switch, no FCF: the ports on one
# Ethernet segment find each other) on an Ethernet interface.  LIO's tcm_fc
# serves such a port as a target; the kernel's libfc logs in from one as an
# initiator.
#   port.sh up IFACE      its FCoE controller in VN2VN mode, not enabled
#   port.sh wwpn IFACE    the port's WWPN, as naa.<16 hex digits>
#   port.sh host IFACE    the port's SCSI host (hostN)
#   port.sh enable IFACE  let it log in to the segment's other ports
#   port.sh down IFACE    its controller removed
# tcm_fc has no demo mode: a target port refuses the PRLI of an initiator
# it has no ACL for, and a remote port that logged in before the ACL
# existed is left without a SCSI target id.  Enable the ports once the
# ACLs are made.
set -eu

ctlr() { ls -d "/sys/class/net/$1"/ctlr_* 2>/dev/null | head -n 1; }
host() { basename "$(ls -d "$(ctlr "$1")"/host* | head -n 1)"; }

iface=${2:?usage: $0 up|wwpn|host|enable|down IFACE}
case $1 in
up)
	modprobe fcoe
	modprobe tcm_fc
	# an FC frame (2112 bytes of payload) in one Ethernet frame
	ip link set "$iface" mtu 9000 up
	[ -n "$(ctlr "$iface")" ] || echo "$iface" >/sys/bus/fcoe/ctlr_create
	# As the mode file spells it: 7.2 no longer ignores case.
	echo VN2VN >"$(ctlr "$iface")/mode"
	;;
wwpn)
	sed 's/^0x/naa./' "/sys/class/fc_host/$(host "$iface")/port_name"
	;;
host)
	host "$iface"
	;;
enable)
	echo 1 >"$(ctlr "$iface")/enabled"
	;;
down)
	[ -n "$(ctlr "$iface")" ] || exit 0
	echo 0 >"$(ctlr "$iface")/enabled" || true
	echo "$iface" >/sys/bus/fcoe/ctlr_destroy || true
	;;
*)
	echo "usage: $0 up|wwpn|host|enable|down IFACE" >&2
	exit 2
	;;
esac
