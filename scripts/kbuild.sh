#!/bin/sh
# Build the module for one kernel into build/module/KVER/, so modules for
# several kernels sit side by side.  The directory holds relative links to
# target_core/'s sources (kbuild writes its objects next to them).  Headers
# on the host are used as they are; a kernel whose headers are only in the
# unstable chroot (tests/vm/newest-kernel.sh) is built there, with the
# repository bind-mounted in a private mount namespace.
# Usage: kbuild.sh KVER KDIR [make arguments...]
set -eu

kver=$1 kdir=$2
shift 2
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${VAAI_SID_ROOT:-/var/cache/vaai/sid-root}
moddir=build/module/$kver

cd "$REPO"
mkdir -p "$moddir"
for f in "$moddir"/*; do		# sources that are gone
	[ -L "$f" ] && [ ! -e "$f" ] && rm -f "$f"
done
for f in target_core/Kbuild target_core/*.c target_core/*.h; do
	ln -sfn "../../../$f" "$moddir/$(basename "$f")"
done

# One compiler per CPU, unless a parallel make above shares its own.
case " ${MAKEFLAGS:-} " in
*jobserver*|*" -j"*) ;;
*) set -- -j"$(nproc)" "$@" ;;
esac
set -- CONFIG_TARGET_CORE_VAAI=m "$@" modules
if [ -d "$kdir" ]; then
	exec make -C "$kdir" M="$REPO/$moddir" "$@"
fi
if [ -d "$ROOT$kdir" ]; then
	# objtool reads /proc; the chroot's compiler sees the tree at /vaai.
	mkdir -p "$ROOT/vaai"
	exec unshare -m sh -c 'mount --bind "$1" "$2/vaai" &&
		mount -t proc proc "$2/proc" && root=$2 && shift 2 &&
		exec chroot "$root" "$@"' kbuild "$REPO" "$ROOT" \
		make -C "$kdir" M="/vaai/$moddir" "$@"
fi
echo "kbuild: no headers for $kver at $kdir: install linux-headers-$kver," \
	"or run tests/vm/newest-kernel.sh for unstable's kernel" >&2
exit 1
