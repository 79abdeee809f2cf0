#!/bin/sh
# Inside the guest: the conformance suites (default: all of tests/guest),
# with the test aid that counts calls on completed commands loaded
# (tests/kmod/vaai_cmd_watch.c; make test-kmod), watching the completions
# too when VAAI_WATCH_COMPLETIONS=1 (make test-debug).
# Usage: guest-test.sh [PYTEST_ARGS...]
[ $# -gt 0 ] || set -- tests/guest
[ -d /sys/module/vaai_cmd_watch ] ||
	insmod "build/kmod/$(uname -r)/vaai_cmd_watch.ko" \
		completions="${VAAI_WATCH_COMPLETIONS:-0}" || exit 1
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEs \
	--junitxml="build/vm/guest-junit-$(uname -r).xml" "$@"
