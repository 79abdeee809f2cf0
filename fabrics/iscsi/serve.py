"""Serve one persistent vaai LUN over iSCSI until interrupted.

Run in the guest by `make serve` (the guest's port 3260 is forwarded to the
host's 127.0.0.1:3260), or natively on a server whose kernel loads modules.

    serve.py IMAGE [--size 8G] [--ip 0.0.0.0] [--initiator IQN ...]

The LUN is mapped to each --initiator (an ACL each); with none, to the
initiator named in /etc/iscsi/initiatorname.iscsi.
"""

import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from vaai import VaaiStorageObject
from vaai.export import export_iscsi, unexport

TARGET_IQN = "iqn.2026-11.org.vaai:serve"


def local_initiator():
    try:
        with open("/etc/iscsi/initiatorname.iscsi") as f:
            for line in f:
                if line.startswith("InitiatorName="):
                    return [line.split("=", 1)[1].strip()]
    except OSError:
        pass
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("image", help="the LUN's file, created sparse when missing")
    p.add_argument("--size", default="8G", help="size when IMAGE is created")
    p.add_argument(
        "--ip",
        default="0.0.0.0",  # noqa: S104 - a portal on every address
        help="portal address (default: every address)",
    )
    p.add_argument(
        "--initiator",
        action="append",
        default=[],
        help="initiator IQN to map (repeat; default: this machine's)",
    )
    args = p.parse_args()

    initiators = args.initiator or local_initiator()
    args.image = os.path.abspath(args.image)
    exists = os.path.exists(args.image)
    so = VaaiStorageObject("serve", path=args.image, size=None if exists else args.size)
    try:
        export_iscsi(so, TARGET_IQN, ip=args.ip, initiators=initiators)
        print(
            f"serving {args.image} ({so.size} bytes, "
            f"{'existing' if exists else 'new sparse file'}) as {TARGET_IQN} LUN 0 "
            f"on {args.ip}:3260 to {', '.join(initiators) or 'nobody'}"
        )
        print(
            f"from the host:  iscsi-inq iscsi://127.0.0.1/{TARGET_IQN}/0   "
            "(libiscsi-bin; -i IQN to pick the initiator name)",
            flush=True,
        )
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        unexport(so)
        so.delete()
    return 0


if __name__ == "__main__":
    sys.exit(main())
