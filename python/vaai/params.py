"""Pure helpers for the backend's configfs files: no I/O, tested on the host."""

import re

from rtslib_fb.utils import RTSLibError, normalize_wwn

from .errors import VaaiError

MIN_BLOCK = 512
_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_INFO_KEYS = ("Path", "Store", "Bytes", "Readonly", "Online")


def parse_size(text):
    """Bytes from '4096', '64M', '1.5G', '2T' (binary units); VaaiError otherwise."""
    if isinstance(text, int):
        size = text
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(text))
        if not m:
            raise VaaiError(
                f"size {text!r} is not a number of bytes with an optional "
                "K, M, G or T suffix (e.g. 64M, 10G)"
            )
        size = int(float(m.group(1)) * _SUFFIXES[m.group(2).lower()])
    if size < MIN_BLOCK:
        raise VaaiError(f"size {text} is smaller than one {MIN_BLOCK}-byte block")
    return size


def control_string(path, size=None, readonly=False, online=True, unmap_unit=0, lbprz=False):
    """The line written to the device's `control` file.  online=False: the
    LUN is enabled with its store closed (a block device only another node
    may open now); size then says how big it is, unmap_unit and lbprz what
    the store will say of deallocation when it is opened."""
    if not path or not str(path).startswith("/"):
        raise VaaiError(f"path {path!r} must be absolute")
    if any(c in str(path) for c in ",\n="):
        raise VaaiError(f"path {path!r} may not contain ',', '=' or a newline")
    fields = [f"path={path}"]
    if size is not None:
        fields.append(f"size={parse_size(size)}")
    fields.append(f"readonly={bool(readonly):d}")
    if not online:
        if size is None:
            raise VaaiError("a LUN enabled with its store closed needs its size")
        fields.append("online=0")
        if unmap_unit:
            fields.append(f"unmap_unit={int(unmap_unit)}")
        if lbprz:
            fields.append("lbprz=1")
    return ",".join(fields)


def parse_info(text):
    """The backend's own `Key: value` lines of `info`, as a dict.

    LIO core prefixes its own status line; those keys are not ours and are
    left out.
    """
    out = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(": ")
        if sep and key in _INFO_KEYS:
            out[key] = value.strip()
    return out


def fc_wwn(text):
    """A Fibre Channel port name in rtslib's form, naa. and 16 hex digits,
    from the forms admins copy around: 20:00:00:25:b5:00:00:0f,
    0x20000025b500000f, naa.20000025b500000f, 2000-0025-b500-000f."""
    s = str(text).strip().lower()
    if s.startswith("naa."):
        s = s[4:]
    elif s.startswith("0x"):
        s = s[2:]
    digits = re.sub(r"[:\-]", "", s)
    if not re.fullmatch(r"[0-9a-f]{16}", digits) or (
        s != digits
        and not re.fullmatch(
            r"([0-9a-f]{2}:){7}[0-9a-f]{2}|"
            r"([0-9a-f]{4}-){3}[0-9a-f]{4}",
            s,
        )
    ):
        raise VaaiError(
            f"{text!r} is not a Fibre Channel WWPN: give 16 hex digits, e.g. "
            "20:00:00:25:b5:00:00:0f or naa.20000025b500000f"
        )
    if digits[0] not in "125":
        raise VaaiError(
            f"WWPN {text}: an FC port name starts with NAA type 1, 2 or 5 (its first hex digit)"
        )
    return "naa." + digits


def initiator_name(text, fabric="iscsi"):
    """An initiator or target name for an ACL or target, normalised (an iSCSI
    IQN, EUI or NAA name; an FC WWPN); VaaiError saying the form otherwise."""
    if fabric in ("tcm_fc", "qla2xxx", "fc"):
        return fc_wwn(text)
    try:
        return normalize_wwn(("iqn", "naa", "eui"), str(text).strip())[0]
    except RTSLibError:
        raise VaaiError(
            f"{text!r} is not an iSCSI name: give an IQN such as "
            "iqn.1998-01.com.vmware:esxi01-4c2f1b7e (see the host's "
            "Storage Adapters page), or an eui. or naa. name"
        ) from None


CHAP_MIN_SECRET = 12


def chap_pair(text, where="CHAP credentials"):
    """(user, secret) from 'user:secret'.  Initiators differ in what they take
    (Microsoft's wants 12 to 16 characters); 12 is the floor they share.
    A refusal never repeats the text: it may be a secret."""
    user, sep, secret = str(text).partition(":")
    if not sep or not user or not secret:
        raise VaaiError(f"{where}: give them as USER:SECRET")
    if len(secret) < CHAP_MIN_SECRET:
        raise VaaiError(
            f"{where}: the secret is {len(secret)} characters; use at least "
            f"{CHAP_MIN_SECRET} (initiators such as Microsoft's refuse shorter ones)"
        )
    return user, secret


# LIO's IEEE company id for a device that was given none (wwn/company_id).
LIO_COMPANY_ID = 0x001405
NAA_SERIAL_DIGITS = 25


def naa_designator(serial, company_id=LIO_COMPANY_ID):
    """The NAA IEEE Registered Extended designator (16 bytes) LIO reports in
    VPD page 0x83 for a device with this unit serial: NAA 6h, the company
    id, then the serial's first 25 hexadecimal digits (other characters
    skipped, missing digits zero).  Hosts know a device by it."""
    digits = [int(c, 16) for c in str(serial) if c in "0123456789abcdefABCDEF"]
    nibbles = [6, *(company_id >> shift & 0xF for shift in (20, 16, 12, 8, 4, 0))]
    nibbles += digits[:NAA_SERIAL_DIGITS]
    nibbles += [0] * (32 - len(nibbles))
    return bytes(hi << 4 | lo for hi, lo in zip(nibbles[::2], nibbles[1::2]))
