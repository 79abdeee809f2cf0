#!/bin/sh
# Inside the guest: the demo (python/vaai/demo.py).
exec /usr/bin/python3 -m vaai.demo "$@"
