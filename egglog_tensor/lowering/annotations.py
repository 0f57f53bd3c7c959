"""The `et.*` annotations: what the emitter tells the lowering stages about each op, in the IR itself.

A choice the optimizer made for one op (its tiles, its lanes, its rows) travels as a discardable
attribute on that op, the way MLIR compilers carry a lowering configuration (IREE's
`lowering_config`): MLIR's own passes clone, tile and fuse ops between the emitter and the stage
that reads the choice, and an attribute moves with its op where a table kept beside the module
would go stale. What a stage *decides* comes back as a typed record instead (stages/stage.py
facts), and what several stages share about contractions is the contraction plan (plan.py).
Every annotation one module writes and another reads is named here.
"""

from __future__ import annotations

# on ops, from the term (lowering/emit.py)
TILES = "et.tiles"  # contraction: cache tile sizes per loop (tiling.tag); read by plan.py
VEC = "et.vec"  # contraction: register tile sizes (the vectorized shape); read by plan.py
ROWS = "et.rows"  # linalg op of fuse_rows / fuse_rows_tiled (rows per block, or unit); read by stages/rows.py, plan.py
LANES = "et.lanes"  # reduction: elements its innermost loop accumulates side by side; read by stages/lanes.py
# on the kernel function and its arguments (lowering/emit.py)
OUTPUT = "et.output"  # argument attribute of each output buffer; read by stages/loops.py (streaming stores)
PLAIN_STORES = "et.plain_stores"  # function: never stream stores (kernel(..., streaming=False)); read by stages/loops.py
FASTMATH = "et.fastmath"  # function: approximate functions allowed (fastmath "afn": the rational tanh); read by stages/math.py
# written by a stage's script, read by a later part of the stage
ID = "et.id"  # contraction: its index in the contraction plan, the tile script's match (tiling.py)
KCHUNK = "et.kchunk"  # k loop of a chunked masked tile (tiling.py), summed from zero by stages/tile.py's rewrite
