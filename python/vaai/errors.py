"""Errors raised by the vaai Python layer."""

from rtslib_fb.utils import RTSLibError


class VaaiError(RTSLibError):
    """A vaai operation failed; the message says what and how to fix it."""
