#!/bin/sh
# In a guest booted on the package tests' root, after guest-init.sh loaded
# target_core_vaai with modprobe: the module is DKMS's and carries VERSION,
# and the packaged vaaictl (not the tree's) serves a LUN whose data reads
# back as written.
# Usage: guest-serve.sh VERSION
set -eu
want=$1
unset PYTHONPATH		# the installed package, not python/ of the tree
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
disk=
for _ in $(seq 60); do
	for d in /sys/block/sd*; do
		[ -e "$d/device/model" ] || continue
		[ "$(cat "$d/device/model" | tr -d ' ')" = VAAI ] && disk=/dev/${d##*/}
	done
	[ -n "$disk" ] && [ -b "$disk" ] && break
	sleep 1
done
[ -n "$disk" ] || fail "no disk for the LUN"

head -c 4194304 /dev/urandom >"$VAAI_SCRATCH/data"
dd if="$VAAI_SCRATCH/data" of="$disk" bs=1M oflag=direct status=none
dd if="$disk" bs=1M count=4 iflag=direct status=none | cmp - "$VAAI_SCRATCH/data" ||
	fail "data read back from $disk differs"
sg_inq "$disk" | grep -q "Product identification: VAAI" || fail "sg_inq $disk"
vaaictl stats pkg
vaaictl delete pkg
echo "guest-serve: module $got from $path served $disk; 4 MiB read back"
