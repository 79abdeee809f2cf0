#!/bin/sh
# Inside the guest: the conformance suites (default: all of tests/guest but
# libiscsi's, which `make test-libiscsi` runs in a boot of its own).
# Usage: guest-test.sh [PYTEST_ARGS...]
[ $# -gt 0 ] || set -- tests/guest --ignore=tests/guest/test_libiscsi.py
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEs \
	--junitxml="build/vm/guest-junit-$(uname -r).xml" "$@"
