#!/bin/sh
# Fibre Channel without FC hardware: two FCoE ports in VN2VN mode
# (fabrics/fc/port.sh) over a veth pair, in the test and demo guest.  LIO's
# tcm_fc serves port 0 (the target), the kernel's libfc initiator uses
# port 1.
#   topology.sh up        veth pair and FCoE controllers in VN2VN mode, not enabled
#   topology.sh wwpn 0|1  the port's WWPN, as naa.<16 hex digits>
#   topology.sh host 0|1  the port's SCSI host (hostN)
#   topology.sh enable    let the ports log in; only once port 1 has an ACL on port 0
#   topology.sh down      remove it all
set -eu
VETH=vaaifc
PORT="$(dirname "$0")/port.sh"

case "${1:-}" in
up)
	ip link show ${VETH}0 >/dev/null 2>&1 ||
		ip link add ${VETH}0 type veth peer name ${VETH}1
	for i in 0 1; do "$PORT" up $VETH$i; done
	;;
wwpn | host)
	"$PORT" "$1" "$VETH${2:?port 0 or 1}"
	;;
enable)
	for i in 0 1; do "$PORT" enable $VETH$i; done
	;;
down)
	for i in 0 1; do
		ip link show $VETH$i >/dev/null 2>&1 && "$PORT" down $VETH$i
	done
	ip link del ${VETH}0 2>/dev/null || true
	;;
*)
	echo "usage: $0 up|wwpn 0|1|host 0|1|enable|down" >&2
	exit 2
	;;
esac
