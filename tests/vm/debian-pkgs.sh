# Sourced by tests/vm/deps.sh and debug-kernel.sh: install the Debian
# packages of a list that are not installed yet; nothing when all are.
# Messages go to stderr (debug-kernel.sh's stdout is its answer).
install_missing() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing="$missing $p"
	done
	[ -n "$missing" ] || return 0
	echo "$(basename "$0"): installing$missing" >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends $missing >&2
}

# The kernel release a metapackage (linux-image-amd64, linux-headers-amd64)
# depends on, in the root directory $2 (default /); nothing when it is not
# installed there.
kernel_release_of() {
	chroot "${2:-/}" dpkg-query -W -f='${Depends}' "$1" 2>/dev/null | tr ',' '\n' |
		sed -n 's/^ *linux-\(image\|headers\)-\([0-9][^ ]*\).*/\2/p' | head -n 1
}
