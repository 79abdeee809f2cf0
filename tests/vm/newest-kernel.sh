#!/bin/sh
# The newest Debian kernel (unstable's linux-image-amd64), for building the
# module against and booting in the guest.  Its headers need a newer
# compiler and C library than Debian 12 has, so they live in a chroot of
# unstable made with debootstrap (VAAI_SID_ROOT); the kernel image and its
# modules are unpacked from the packages into the host's /lib/modules/KVER,
# which the guest sees (it keeps the host's user space), and depmod'ed there.
# Idempotent: a second run with nothing new in unstable changes nothing.
# Prints the kernel release on stdout, the rest on stderr.
# Usage: newest-kernel.sh
set -eu

ROOT=${VAAI_SID_ROOT:-/var/cache/vaai/sid-root}
MIRROR=${VAAI_SID_MIRROR:-http://deb.debian.org/debian}

say() { echo "newest-kernel: $*" >&2; }
in_root() { chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }

REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/tests/vm/debian-pkgs.sh"
install_missing debootstrap kmod

# On a fresh machine nothing has made the cache directory yet.
mkdir -p "$(dirname "$ROOT")"
exec 9>"${ROOT}.lock"
flock 9
if [ ! -x "$ROOT/usr/bin/make" ]; then
	say "making a chroot of unstable in $ROOT"
	rm -rf "$ROOT"
	debootstrap --variant=minbase --include=make sid "$ROOT" "$MIRROR" >&2
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# A mirror that serves a snapshot of unstable serves a Release file past
# its Valid-Until; the packages are still signed and checked.
echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/90vaai"

# Once a day at most: unstable moves, but not every run needs to ask.
stamp=$ROOT/var/lib/apt/vaai-updated
if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
	in_root apt-get update -q >&2
	touch "$stamp"
fi
# The metapackage names the newest kernel; its headers bring their compiler.
in_root apt-get install -y -q --no-install-recommends linux-headers-amd64 >&2
kver=$(kernel_release_of linux-headers-amd64 "$ROOT")
[ -n "$kver" ] || { say "no kernel release in linux-headers-amd64"; exit 1; }

# The image and its modules, as the guest boots them (run.py --kver finds
# /lib/modules/KVER/vmlinuz when /boot has no image of that release).
mods=/lib/modules/$kver
if [ ! -f "$mods/vmlinuz" ] || [ ! -f "$mods/modules.dep" ]; then
	say "unpacking linux-image $kver into $mods"
	debs=$ROOT/var/cache/vaai-kernel
	rm -rf "$debs" && mkdir -p "$debs"
	in_root chown _apt /var/cache/vaai-kernel
	for p in linux-binary linux-modules linux-base; do
		in_root sh -c "cd /var/cache/vaai-kernel &&
			apt-get download -q $p-$kver" >&2
	done
	rm -rf "$debs/x" && mkdir "$debs/x"
	for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$debs/x"; done
	rm -rf "$mods.new"
	cp -a "$debs/x/usr/lib/modules/$kver" "$mods.new"
	rm -rf "$mods" && mv "$mods.new" "$mods"
	rm -rf "$debs"
	depmod -a "$kver"
fi
echo "$kver"
