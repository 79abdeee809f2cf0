#!/bin/sh
# Inside the guest: the data-path and the thin-provisioning benchmarks.
set -e
/usr/bin/python3 bench/guest_bench.py build/bench/results.json "$@"
/usr/bin/python3 bench/guest_thin.py build/bench/thin.json
