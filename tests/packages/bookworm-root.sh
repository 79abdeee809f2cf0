#!/bin/sh
# A Debian 12 root for the package tests, made once with debootstrap and
# cached: the dependencies of vaai-dkms and vaai-tools (dkms, a compiler,
# python3-rtslib-fb, targetcli-fb), Debian 12's 6.1 headers and the host's
# 6.1 modules (hard links), so the guest can boot 6.1 on it, and the
# packages of the 6.12 kernel downloaded but not installed: the tests
# install them as an admin's kernel upgrade would, without the network.
# The tests work on a copy (tests/packages/conftest.py).  Prints the
# cached root's path on stdout, the rest on stderr.
# Usage: bookworm-root.sh KVER_6.1 KVER_6.12
set -eu

old=$1 new=$2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${VAAI_BOOKWORM_ROOT:-/var/cache/vaai/bookworm-root}
MIRROR=${VAAI_BOOKWORM_MIRROR:-http://deb.debian.org/debian}
# What the guest needs besides the packages' dependencies, to serve a LUN.
GUEST_PKGS="kmod udev procps sg3-utils util-linux"
DEPS="dkms gcc make openssl python3-rtslib-fb targetcli-fb linux-headers-$old"

say() { echo "bookworm-root: $*" >&2; }
in_root() { chroot "$CACHE" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }

. "$REPO/tests/vm/debian-pkgs.sh"
install_missing debootstrap

key=$(echo "$old $new $DEPS $GUEST_PKGS" | sha256sum | cut -c1-12)
if [ "$(cat "$CACHE.key" 2>/dev/null)" = "$key" ]; then
	echo "$CACHE"
	exit 0
fi
exec 9>"$CACHE.lock"
flock 9
rm -rf "$CACHE" "$CACHE.key"
say "making a Debian 12 root in $CACHE"
debootstrap --variant=minbase bookworm "$CACHE" "$MIRROR" >&2
cp /etc/resolv.conf "$CACHE/etc/resolv.conf"
cat >"$CACHE/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
# Nothing of the root's own starts while packages are installed in it.
printf '#!/bin/sh\nexit 101\n' >"$CACHE/usr/sbin/policy-rc.d"
chmod 755 "$CACHE/usr/sbin/policy-rc.d"
in_root apt-get update -q >&2
# shellcheck disable=SC2086
in_root apt-get install -y -q --no-install-recommends $DEPS $GUEST_PKGS >&2
in_root apt-get install -y -q --no-install-recommends --download-only \
	"linux-image-$new" "linux-headers-$new" >&2

# The 6.1 kernel's modules, as on the host, for booting the guest on this
# root; hard links: depmod and dkms replace files, never write into them.
mods=/lib/modules/$old
for f in "$mods"/*; do
	case $(basename "$f") in build | source) continue ;; esac
	cp -al "$f" "$CACHE$mods/"
done
echo "$key" >"$CACHE.key"
echo "$CACHE"
