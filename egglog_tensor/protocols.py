"""egglog-python's `HasDeclarations` check made fast on Python 3.11, with the same answers.

egglog-python asks `isinstance(x, HasDeclarations)` (a runtime-checkable Protocol with the one
attribute `__egg_decls__`) each time it merges declarations: for every expression and rule it
builds. Python 3.11 finds a protocol's attributes anew on each such check by walking its classes
(3.12 keeps them), about a fifth of building the rules (the first kernel of a process) and of
seeding a large program's terms. For this protocol the check is `hasattr(x, "__egg_decls__")`, which
this module makes it, only where typing's check is the slow one and the protocol is as described."""

from __future__ import annotations

import sys
import typing
from typing import Any

from egglog import declarations


def fast_protocol_check() -> bool:
    """Give `HasDeclarations` a metaclass whose instance check is the attribute test; whether it has one."""
    protocol: Any = declarations.HasDeclarations
    meta = type(protocol)
    if getattr(meta, "checks_the_attribute", False):
        return True
    if sys.version_info >= (3, 12) or typing._get_protocol_attrs(protocol) != {"__egg_decls__"}:  # type: ignore[attr-defined]
        return False

    class _HasDeclarationsMeta(meta):  # type: ignore[misc,valid-type]
        checks_the_attribute = True

        def __instancecheck__(cls, instance: object) -> bool:
            return hasattr(instance, "__egg_decls__")

    protocol.__class__ = _HasDeclarationsMeta
    return True
