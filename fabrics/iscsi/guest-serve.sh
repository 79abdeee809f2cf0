#!/bin/sh
# Inside the serve guest: bring up the NIC QEMU forwards 3260 to, then serve
# build/serve/lun0.img (kept on the host) until the VM is stopped.
set -e
ip link set lo up
nic=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$nic" up
ip addr add 10.0.2.15/24 dev "$nic" 2>/dev/null || true
mkdir -p build/serve
exec /usr/bin/python3 fabrics/iscsi/serve.py build/serve/lun0.img \
	--size "${VAAI_SERVE_SIZE:-8G}" \
	${VAAI_SERVE_INITIATOR:+--initiator "$VAAI_SERVE_INITIATOR"}
