"""Inside the power-cut guest: export the rig's LUNs (tests/powercut/luns.py)
over iSCSI on every address, each with the identity it had on the first
boot, the LUN files created on that first boot and found again after."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from luns import HOST_IQN, LUN_SIZE, LUNS, TARGET_IQN, backing, wwn  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_iscsi  # noqa: E402


def main():
    for number, lun in enumerate(LUNS):
        path = backing(lun)
        size = None if os.path.exists(path) else LUN_SIZE
        so = VaaiStorageObject(lun.name, path=path, size=size, wwn=wwn(lun))
        so.set_attribute("emulate_write_cache", int(lun.write_cache))
        export_iscsi(so, TARGET_IQN, ip="0.0.0.0", initiators=[HOST_IQN], lun=number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
