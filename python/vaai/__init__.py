"""vaai: rtslib-fb support for the `vaai` LIO backend (target_core_vaai.ko).

Importing this package registers the `vaai` storage object type with
rtslib-fb, so RTSRoot().storage_objects, save_to_file() and
restore_from_file() handle `vaai` backstores like the built-in ones.
"""

from .errors import VaaiError
from .storage import VaaiStorageObject

__all__ = ["VaaiError", "VaaiStorageObject"]
