#!/bin/sh
# make deb: the Debian packages vaai-dkms and vaai-tools, built with
# Debian's own tooling (dpkg-buildpackage, debhelper, dh-dkms, dh-python)
# from a copy of this tree in build/deb/src, then checked by lintian, which
# must report no error.  Installs the build dependencies it lacks.  The
# packages land in build/deb/.
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/build/deb
# Debian's python3 and tools, not another interpreter first on PATH.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

. "$REPO/tests/vm/debian-pkgs.sh"
install_missing dpkg-dev fakeroot lintian bash-completion debhelper dh-dkms \
	dh-python pybuild-plugin-pyproject python3-all python3-setuptools

rm -rf "$OUT"
mkdir -p "$OUT/src"
(cd "$REPO" && tar --exclude=./build --exclude=./.git -cf - .) |
	tar -C "$OUT/src" -xf -
(cd "$OUT/src" && dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1 || {
	tail -n 30 "$OUT/build.log" >&2
	echo "deb: dpkg-buildpackage failed; log: $OUT/build.log" >&2
	exit 1
}
rm -rf "$OUT/src"
changes=$(ls "$OUT"/vaai_*.changes)
lintian --fail-on error \
	"$changes" >&2 || { echo "deb: lintian reports errors" >&2; exit 1; }
ls "$OUT"/*.deb
