#!/bin/sh
# Build, once, the sanitizer kernel `make test-debug` boots: Debian's
# linux-source-6.1 configured by virtme-ng for a guest (`vng --kconfig`),
# with tests/vm/debug.config merged on top.  The tree is cached outside the
# repository, keyed by the source package's version and a hash of the
# fragment (and of the virtme-ng that wrote the base config), so a second run
# builds nothing.  Prints the tree's path on stdout, the rest on stderr.
# Usage: debug-kernel.sh
set -eu

REPO=$(cd "$(dirname "$0")/../.." && pwd)
FRAGMENT=$REPO/tests/vm/debug.config
CACHE=${VAAI_DEBUG_KERNEL_CACHE:-/var/cache/vaai/debug-kernel}
VNG=${VAAI_VNG:-/var/cache/vaai/venv/bin/vng}
JOBS=${VAAI_DEBUG_JOBS:-2}
SRC_PKG=linux-source-6.1
TARBALL=/usr/src/$SRC_PKG.tar.xz
BUILD_PKGS="$SRC_PKG bc bison flex libelf-dev libssl-dev xz-utils"

say() { echo "debug-kernel: $*" >&2; }

. "$REPO/tests/vm/debian-pkgs.sh"
# shellcheck disable=SC2086
install_missing $BUILD_PKGS
[ -x "$VNG" ] || { say "$VNG not found; run tests/vm/deps.sh"; exit 1; }

version=$(dpkg-query -W -f='${Version}' $SRC_PKG)
hash=$({ cat "$FRAGMENT"; "$VNG" --version; } | sha256sum | cut -c1-12)
top=$CACHE/$version-$hash
tree=$top/linux
if [ -f "$top/built" ]; then
	echo "$tree"
	exit 0
fi

mkdir -p "$top"
# Two engineers starting `make test-debug` at once: the second waits for
# the first build instead of racing it in the same tree.
exec 9>"$top/lock"
flock 9
if [ -f "$top/built" ]; then
	echo "$tree"
	exit 0
fi

if [ ! -f "$tree/Makefile" ]; then
	say "unpacking $TARBALL ($SRC_PKG $version) into $top"
	rm -rf "$top/unpack"
	mkdir "$top/unpack"
	tar -xJf "$TARBALL" -C "$top/unpack"
	mv "$top/unpack/$SRC_PKG" "$tree"
	rmdir "$top/unpack"
fi

# Every option the fragment sets, as the final .config must spell it.
# "=m" is also met by "=y"; "is not set" by the option's absence.
check_config() {
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			opt=${line%%=*} want=${line#*=}
			got=$(grep "^$opt=" "$tree/.config" | cut -d= -f2-) || got=""
			[ "$got" = "$want" ] || { [ "$want" = m ] && [ "$got" = y ]; } || {
				say "$opt: wanted $want, .config has ${got:-nothing}"
				bad=1
			}
			;;
		"# CONFIG_"*" is not set")
			opt=${line#"# "} opt=${opt%% *}
			if grep -q "^$opt=" "$tree/.config"; then
				say "$opt: wanted unset, .config has $(grep "^$opt=" "$tree/.config")"
				bad=1
			fi
			;;
		esac
	done < "$FRAGMENT"
	return $bad
}

cd "$tree"
if [ ! -f "$top/configured" ]; then
	say "configuring (vng --kconfig, then $FRAGMENT)"
	# An empty HOME: no ~/.config/virtme-ng of whoever runs this changes
	# the base config behind the cache key's back.  vng runs
	# virtme-configkernel from PATH, which is beside it in its venv.
	mkdir -p "$top/home"
	HOME=$top/home PATH=$(dirname "$VNG"):$PATH "$VNG" --kconfig >&2
	scripts/kconfig/merge_config.sh -m .config "$FRAGMENT" >&2
	make olddefconfig >&2
	check_config || { say "the fragment did not stick; see above"; exit 1; }
	touch "$top/configured"
fi

say "building bzImage and modules with -j$JOBS at nice 19; log: $top/build.log"
start=$(date +%s)
# nice alone does not yield to a VM started from another session: with
# autogroup scheduling, nice ranks tasks only within their session's group.
# A session of its own, with that group's nice at 19 too, does.
setsid -w sh -c 'echo 19 > /proc/self/autogroup 2>/dev/null
	exec nice -n 19 make -j"$1" bzImage modules' sh "$JOBS" \
	> "$top/build.log" 2>&1 || {
	tail -n 30 "$top/build.log" >&2
	say "build failed; log: $top/build.log"
	exit 1
}
end=$(date +%s)
# Interrupted and resumed builds report only the last part.
say "built in $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"
echo "$(( end - start ))" > "$top/build-seconds"
[ -f Module.symvers ] || { say "no Module.symvers after the build"; exit 1; }
touch "$top/built"
echo "$tree"
