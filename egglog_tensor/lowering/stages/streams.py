"""The streams stage: the stores the loops stage marked `nontemporal` carry an access group through
LLVM's vectorizer; after O3 the vector ones proved aligned become non-temporal (steps 2 and 3 of
loops.py's streaming stores).

2. `access_groups` (this stage, after conversion to LLVM): those stores carry an
   `llvm.access.group` instead (a marker LLVM's vectorizer keeps on the vector stores it makes;
   `!nontemporal` on a scalar store would stop it vectorizing the loop on CPUs without SSE4A).
3. `mark` (lowering/llvm.py, after `opt -O3`): each marked vector store whose alignment LLVM
   proved to be its full width (from the masked pointer, the row length and the vector loop's
   step) gets `!nontemporal`; other marked stores (loop remainders, rows not a multiple of 64
   bytes) stay plain stores. It returns how many it marked, as a `Streamed` record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from .stage import Stage

def access_groups(module: ir.Module) -> None:
    """Step 2: `nontemporal` LLVM-dialect stores carry an access group instead (in place)."""
    group: ir.Attribute | None = None

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal group
        if op.name == "llvm.store" and "nontemporal" in op.attributes:
            group = group or ir.ArrayAttr.get([ir.Attribute.parse("#llvm.access_group<id = distinct[0]<>>")])
            del op.attributes["nontemporal"]
            op.attributes["access_groups"] = group
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


_VECTOR_STORE = re.compile(r"^(\s*store <(\d+) x (\w+)> .*, align (\d+))(, .*!llvm\.access\.group !\d+.*)$", re.MULTILINE)
_ELEMENT_BYTES = {"float": 4, "double": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}
_METADATA_ID = re.compile(r"^!(\d+) = ", re.MULTILINE)


@dataclass(frozen=True)
class Streamed:
    """What step 3 decided: how many vector stores it made non-temporal."""

    stores: int


def mark(llvm_ir: str) -> tuple[str, Streamed]:
    """Step 3: `!nontemporal` on each marked vector store aligned to its 16, 32 or 64 bytes (optimized LLVM IR text)."""
    if "!llvm.access.group" not in llvm_ir:
        return llvm_ir, Streamed(0)
    ids = [int(n) for n in _METADATA_ID.findall(llvm_ir)]
    node = f"!{max(ids, default=-1) + 1}"
    stores = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal stores
        size = int(match[2]) * _ELEMENT_BYTES.get(match[3], 0)
        if size not in (16, 32, 64) or int(match[4]) < size:
            return match[0]
        stores += 1
        return f"{match[1]}{match[5]}, !nontemporal {node}"

    marked = _VECTOR_STORE.sub(replace, llvm_ir)
    return (f"{marked}\n{node} = !{{i32 1}}\n" if stores else llvm_ir), Streamed(stores)


@dataclass(frozen=True)
class Streams(Stage):
    """Stores the loops stage marked nontemporal carry an access group that LLVM's vectorizer keeps."""

    name: ClassVar[str] = "streams"

    def rewrite(self, module: ir.Module) -> None:
        access_groups(module)
