#!/bin/sh
# Build the module for one kernel into build/module/KVER/, so modules for
# several kernels sit side by side.  The directory holds relative links to
# target_core/'s sources (kbuild writes its objects next to them).  Headers
# on the host are used as they are; a kernel whose headers are only in the
# unstable chroot (tests/vm/newest-kernel.sh) is built there, with the
# repository bind-mounted in a private mount namespace.
# --tree builds another tree of modules the same way: tests/kmod (the test
# aids the guest suites load) into build/kmod/KVER/.
# Usage: kbuild.sh [--tree DIR] KVER KDIR [make arguments...]
set -eu

tree=target_core out=module
if [ "$1" = --tree ]; then
	tree=$2 out=$(basename "$2")
	shift 2
fi
kver=$1 kdir=$2
shift 2
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${VAAI_SID_ROOT:-/var/cache/vaai/sid-root}
moddir=build/$out/$kver

cd "$REPO"
# One level of subdirectories (target_core/parse/), linked file by file.
for d in "$tree" "$tree"/*/; do
	[ -d "$d" ] || continue
	sub=${d#"$tree"} sub=${sub#/} sub=${sub%/}
	out_dir=$moddir${sub:+/$sub} up=../../..${sub:+/..}
	mkdir -p "$out_dir"
	for f in "$out_dir"/*; do		# sources that are gone
		[ -L "$f" ] && [ ! -e "$f" ] && rm -f "$f"
	done
	for f in "$d"/Kbuild "$d"/*.c "$d"/*.h; do
		[ -e "$f" ] || continue
		f=${f#./} f=$(echo "$f" | sed 's://*:/:g')
		ln -sfn "$up/$f" "$out_dir/$(basename "$f")"
	done
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
