"""The bufferize stage: tensors become buffers (MLIR's one-shot bufferization), then strided copies
become loops (lowering/copies.py) and large temporaries arguments the caller lends (lowering/workspace.py).

Its input is linalg on tensors, memref function arguments read with `bufferization.to_tensor ...
restrict` and written with `bufferization.materialize_in_destination ... restrict writable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from .. import copies, workspace
from .stage import Stage


@dataclass(frozen=True)
class Workspace:
    """What the bufferize stage decided: the temporaries the caller lends, (shape, NumPy dtype name)
    of each trailing argument, in order."""

    buffers: tuple[tuple[tuple[int, ...], str], ...]

    def arrays(self) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
        """(shape, dtype) of each buffer, as the call passes them."""
        return tuple((shape, np.dtype(name)) for shape, name in self.buffers)


@dataclass(frozen=True)
class Bufferize(Stage):
    """Tensors become buffers; strided copies become linalg.copy loops; large temporaries lent arguments."""

    name: ClassVar[str] = "bufferize"
    passes: ClassVar[tuple[str, ...]] = (
        "eliminate-empty-tensors",
        "empty-tensor-to-alloc-tensor",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "canonicalize",
        "buffer-deallocation-pipeline",
        "canonicalize",
    )

    def rewrite(self, module: ir.Module) -> Workspace:
        copies.explicit(module)
        return Workspace(tuple((shape, dtype.name) for shape, dtype in workspace.hoist(module)))
