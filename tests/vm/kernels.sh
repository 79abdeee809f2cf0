#!/bin/sh
# The kernels the module is built and tested on, one release a line:
# Debian 12's own (linux-image-amd64, 6.1), Debian 12's 6.12
# (linux-image-6.12-amd64, from its security archive) and the newest
# Debian kernel (unstable's, in the chroot tests/vm/newest-kernel.sh made).
# tests/vm/deps.sh installs all three; this only reads what is installed.
set -eu

. "$(dirname "$0")/debian-pkgs.sh"
missing() { echo "kernels: $1 is not installed; run tests/vm/deps.sh" >&2; exit 1; }

for meta in linux-image-amd64 linux-image-6.12-amd64; do
	kver=$(kernel_release_of $meta)
	[ -n "$kver" ] || missing $meta
	echo "$kver"
done
kver=$(kernel_release_of linux-headers-amd64 "${VAAI_SID_ROOT:-/var/cache/vaai/sid-root}")
[ -n "$kver" ] && [ -f "/lib/modules/$kver/vmlinuz" ] || missing "unstable's kernel"
echo "$kver"
