#!/bin/sh
# In a guest booted on the package tests' root, after guest-init.sh loaded
# target_core_vaai with modprobe: the module is DKMS's and carries VERSION,
# and the packaged vaaictl (not the tree's) serves a LUN whose data reads
# back as written, also after plain targetctl saved, cleared and restored
# it through the packaged rtslib hook; the packaged exporter's collector
# serves its metrics without root.
# Usage: guest-serve.sh VERSION
set -eu
want=$1
unset PYTHONPATH PYTHONUSERBASE	# the installed packages, not the tree
fail() { echo "guest-serve: FAIL: $*" >&2; exit 1; }

path=$(modinfo -n target_core_vaai)
case $path in */updates/dkms/*) ;; *) fail "module from $path, not DKMS's" ;; esac
got=$(cat /sys/module/target_core_vaai/version)
[ "$got" = "$want" ] || fail "module version $got, want $want"
v=$(readlink -f "$(command -v vaaictl)")
[ "$v" = /usr/bin/vaaictl ] || fail "vaaictl is $v, not the package's"

img=$VAAI_SCRATCH/pkg.img
vaaictl create pkg "$img" --size 64M
vaaictl export pkg loopback
find_disk() {
	disk=
	for _ in $(seq 60); do
		for d in /sys/block/sd*; do
			[ -e "$d/device/model" ] || continue
			[ "$(tr -d ' ' <"$d/device/model")" = VAAI ] && disk=/dev/${d##*/}
		done
		[ -n "$disk" ] && [ -b "$disk" ] && return 0
		sleep 1
	done
	fail "no disk for the LUN"
}
find_disk

head -c 4194304 /dev/urandom >"$VAAI_SCRATCH/data"
dd if="$VAAI_SCRATCH/data" of="$disk" bs=1M oflag=direct status=none
dd if="$disk" bs=1M count=4 iflag=direct status=none | cmp - "$VAAI_SCRATCH/data" ||
	fail "data read back from $disk differs"
sg_inq "$disk" | grep -q "Product identification: VAAI" || fail "sg_inq $disk"

targetcli ls | grep -q "o- pkg " || fail "plain targetcli does not list vaai/pkg"
targetctl save "$VAAI_SCRATCH/saved.json"
targetctl clear
[ -z "$(ls /sys/kernel/config/target/core/vaai_* 2>/dev/null)" ] ||
	fail "targetctl clear left vaai objects"
targetctl restore "$VAAI_SCRATCH/saved.json"
find_disk
dd if="$disk" bs=1M count=4 iflag=direct status=none | cmp - "$VAAI_SCRATCH/data" ||
	fail "data read back from $disk after targetctl restore differs"
vaaictl stats pkg

# What the packaged exporter unit serves, as an unprivileged user (systemd's
# DynamicUser makes one up; nobody stands in): stats --prometheus is one
# scrape of the same collector, through Debian's prometheus_client.  (The
# minimal root has no iproute2 to bring lo up for HTTP; the main guest
# suites test the endpoint.)
unit=/lib/systemd/system/vaai-exporter.service
# shellcheck disable=SC2016
grep -qx 'ExecStart=/usr/bin/vaaictl exporter --listen ${LISTEN}' "$unit" ||
	fail "$unit does not run vaaictl exporter"
size=$(setpriv --reuid=65534 --regid=65534 --clear-groups vaaictl stats --prometheus |
	awk '$1 ~ /^vaai_lun_size_bytes[{]lun="pkg",/ { print $2 + 0 }')
[ "$size" = 67108864 ] || fail "nobody's scrape gave vaai/pkg a size of '$size'"
vaaictl delete pkg
echo "guest-serve: module $got from $path served $disk; 4 MiB read back," \
	"also after targetctl save, clear and restore"
