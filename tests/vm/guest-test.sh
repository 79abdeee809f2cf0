#!/bin/sh
# Inside the guest: the conformance suites (default: all of tests/guest).
# Usage: guest-test.sh [PYTEST_ARGS...]
[ $# -gt 0 ] || set -- tests/guest
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEs \
	--junitxml="build/vm/guest-junit-$(uname -r).xml" "$@"
