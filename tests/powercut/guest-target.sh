#!/bin/sh
# Inside the power-cut guest (tests/powercut/powercut.py boots it): the file
# systems made on the first boot (VAAI_POWERCUT_FORMAT=1), checked after
# every cut (mounted once to replay their logs, then xfs_repair -n or
# e2fsck -fn), the LUNs exported, then serve until the host kills the guest
# or asks it to stop.
set -eu
ip link set lo up
nic=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$nic" up
ip addr add 10.0.2.15/24 dev "$nic" 2>/dev/null || true

check_fs() { # DEV FS
	dir=/run/vaai/powercut-$2
	mkdir -p "$dir"
	if [ "${VAAI_POWERCUT_FORMAT:-0}" = 1 ]; then
		case $2 in
		xfs) mkfs.xfs -q -f -m reflink=1 "$1" ;;
		ext4) mkfs.ext4 -q -F "$1" ;;
		esac
	else
		mount "$1" "$dir"
		umount "$dir"
		case $2 in
		xfs) check="xfs_repair -n" ;;
		ext4) check="e2fsck -fn" ;;
		esac
		if ! $check "$1" >/dev/null 2>&1; then
			echo "powercut: $2 on $1: $check found damage"
			$check "$1" || true
			exit 1
		fi
		echo "powercut: $2 on $1 clean"
	fi
	mount "$1" "$dir"
}

check_fs /dev/vda xfs
check_fs /dev/vdb ext4
/usr/bin/python3 tests/powercut/target.py
echo "powercut: ready"
while [ ! -e build/powercut/stop ]; do
	sleep 1
done
echo "powercut: stopping"
