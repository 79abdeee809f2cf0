#!/bin/sh
# Fibre Channel without FC hardware: two FCoE ports in VN2VN mode over a veth
# pair, in the test and demo guest.  LIO's tcm_fc serves port 0 (the target),
# the kernel's libfc initiator uses port 1.
#   topology.sh up        veth pair and FCoE controllers in VN2VN mode, not enabled
#   topology.sh wwpn 0|1  the port's WWPN, as naa.<16 hex digits>
#   topology.sh host 0|1  the port's SCSI host (hostN)
#   topology.sh enable    let the ports log in; only once port 1 has an ACL on port 0
#   topology.sh down      remove it all
# Order matters: tcm_fc has no demo mode, so without an ACL for the
# initiator's WWPN it refuses the PRLI, and ports enabled before the ACL
# exists leave the remote port without a SCSI target id.
set -eu
VETH=vaaifc

ctlr() { ls -d /sys/class/net/$VETH$1/ctlr_* 2>/dev/null | head -n 1; }
host() { basename "$(ls -d "$(ctlr "$1")"/host* | head -n 1)"; }

case "${1:-}" in
up)
	modprobe fcoe
	modprobe tcm_fc
	ip link show ${VETH}0 >/dev/null 2>&1 ||
		ip link add ${VETH}0 type veth peer name ${VETH}1
	for i in 0 1; do
		ip link set $VETH$i mtu 9000 up
		[ -n "$(ctlr $i)" ] || echo $VETH$i > /sys/bus/fcoe/ctlr_create
		# As the mode file spells it: 7.2 no longer ignores case.
		echo VN2VN > "$(ctlr $i)/mode"
	done
	;;
wwpn)
	sed 's/^0x/naa./' "/sys/class/fc_host/$(host "${2:?port 0 or 1}")/port_name"
	;;
host)
	host "${2:?port 0 or 1}"
	;;
enable)
	for i in 0 1; do echo 1 > "$(ctlr $i)/enabled"; done
	;;
down)
	for i in 0 1; do
		[ -n "$(ctlr $i)" ] || continue
		echo 0 > "$(ctlr $i)/enabled" || true
		echo $VETH$i > /sys/bus/fcoe/ctlr_destroy || true
	done
	ip link del ${VETH}0 2>/dev/null || true
	;;
*)
	echo "usage: $0 up|wwpn 0|1|host 0|1|enable|down" >&2
	exit 2
	;;
esac
