"""The lowering stages, one module per stage, each a small frozen class with its name and options.

A compilation's MLIR (linalg on tensors from lowering/emit.py) goes through them in this order:

    rows          rows.py           fuse_rows kernels as one loop over row blocks (transform script)
    strips        strips.py         two reductions of one large input's outer axes as one loop over column strips (script)
    parallel      parallel.py       cpu-openmp: each linalg op split into one chunk per thread (script), but
                                    those the contraction plan (lowering/plan.py) gives the tile stage
    tile          tile.py           contractions tiled and vectorized as the plan says (lowering/tiling.py's script),
                                    k blocks from zero
    bufferize     bufferize.py      tensors -> buffers; strided copies as loops, large temporaries lent
    flatten       flatten.py        elementwise ops over contiguous buffers as one flat loop (script)
    transposes    transposes.py     elementwise ops reading across rows in their inner loop, in square blocks (script)
    lanes         lanes.py          reductions' chosen lanes as loop annotations (script)
    math          math.py           exp and float32 tanh as inline arithmetic
    loops         loops.py          linalg -> scf loops; large outputs' nests versioned for streamed stores
                                    (cpu-openmp: "parallel-loops", the chunks' forall as scf.parallel)
    interleave    interleave.py     long elementwise loops' interleave counts
    vector        vector.py         n-D vector transfers as loops of 1-D ones
    openmp        openmp.py         cpu-openmp: scf.parallel -> omp.parallel of the Target's threads
    llvm          llvm.py           conversions to the LLVM dialect
    streams       streams.py        streamed stores' access groups (made non-temporal after O3)
    loop-metadata loop_metadata.py  loop annotations where mlir-translate emits them
    vecmath       vecmath.py        libm calls LLVM vectorizes with libmvec
    debug-info    debuginfo.py      the ops' source lines as LLVM line tables (DILocation, .loc)

`cpu(target)` and `cpu_openmp(target)` are those stages for a Target; lowering/pipelines.py runs
them. A stage's `rewrite` (or, for a script stage, `decided`) may return a typed record of what it
decided (`RECORDS`); the pipeline keeps them by stage name, as `Compilation.facts` does (with
"streams": the stores made non-temporal after O3, counted by streams.mark in lowering/llvm.py).
"""

from __future__ import annotations

from ...target import Target
from .bufferize import Bufferize, Workspace
from .debuginfo import DebugInfo
from .flatten import Flatten, Flattened
from .interleave import Interleave, Interleaved
from .lanes import Lanes
from .llvm import LLVM
from .loop_metadata import LoopMetadata
from .loops import Loops
from .math import Math
from .openmp import OpenMP, Threaded
from .parallel import Parallel
from .rows import Rows
from .stage import Passes, Stage
from .streams import Streamed, Streams
from .strips import Strips
from .tile import Tile
from .transposes import Blocked, Transposes
from .vecmath import Vecmath
from .vector import Vector

__all__ = ["RECORDS", "Passes", "Stage", "Streamed", "Threaded", "Workspace", "Blocked", "cpu", "cpu_openmp"]

RECORDS = {record.__name__: record for record in (Workspace, Flattened, Blocked, Interleaved, Threaded, Streamed)}  # (the cache stores them by name)


def cpu(target: Target) -> tuple[Stage, ...]:
    """The stages of the "cpu" pipeline for `target`."""
    return (Rows(target), Strips(target), Tile(target), Bufferize(), Flatten(), Transposes(), Lanes(target), Math(target), Loops(target),
            Interleave(target), Vector(), LLVM(), Streams(), LoopMetadata(), Vecmath(target), DebugInfo())


def cpu_openmp(target: Target) -> tuple[Stage, ...]:
    """The stages of the "cpu-openmp" pipeline for `target` (its threads compiled in).

    The parallel stage splits each linalg op into one chunk per thread along one loop (scf.forall);
    the chunks' loops stay sequential scf.for (convert-linalg-to-loops) so LLVM vectorizes them;
    forall -> scf.parallel -> omp.parallel/omp.wsloop."""
    return (Rows(target), Strips(target), Parallel(target), Tile(target), Bufferize(), Flatten(), Transposes(), Lanes(target), Math(target),
            Loops(target, parallel=True), Interleave(target), Vector(), OpenMP(target.threads), LLVM(openmp=True),
            Streams(), LoopMetadata(), Vecmath(target), DebugInfo())
