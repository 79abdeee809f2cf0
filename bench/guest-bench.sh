#!/bin/sh
# Inside the guest: the benchmarks (bench/guest_bench.py).
exec /usr/bin/python3 bench/guest_bench.py build/bench/results.json "$@"
