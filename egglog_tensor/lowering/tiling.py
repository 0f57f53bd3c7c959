"""Tiling and vectorization of contractions with MLIR's transform dialect.

The emitter tags each contraction (`linalg.matmul`, `batch_matmul`, `matvec`, `vecmat`, `dot`)
with two attributes, one entry per loop of the op's iteration domain (linalg's order):

    et.tiles = [...]   cache tile sizes (0: that loop is not tiled at this level)
    et.vec   = [...]   register tile sizes inside a cache tile; the vectorized shape

For `linalg.matmul` (loops m, n, k) that is `et.tiles = [TM, TN, TK]`, `et.vec = [mr, nr, 1]`, with
nr a multiple of the SIMD width: the term's choice (`tag`). The tile policy (lowering/policy.py:
`choose_tiles`, `packing`, `padded_loops`, ...) picks them from the Target's caches and the element
size; the contraction plan (lowering/plan.py, made once and read by the parallel stage too) says
what is done to each tagged contraction: its tiles, epilogue, padding, panels, packed operands and
zero fill. `transform_script` builds from it the transform-dialect script that the "tile" stage
of the CPU pipelines applies, on tensors, before bufferization: typed IR made with the bindings' transform
builders (lowering/scripts.py), each handle a Python value passed from the function that makes it to those
that use it (a matvec epilogue's partial sums, `Sums`, to its vectorization after the cleanup); a
contraction's part of the script starts with a note, a string `transform.param.constant` naming its loops and tiles.

What the script does to a matmul (BLIS-like loop order):

    scf.forall n by TN                     B packed once, panel-major (n/nr, k, nr) (when "P"): a
                                           transpose copying nr-wide rows as vectors, one column
                                           block of panels per iteration (the threads share it)
    scf.forall (m, n) by (TM, TN)          parallel over output blocks (omp with cpu-openmp); the C
                                           block accumulates in a contiguous buffer, copied in
                                           before the k loop and out after it
      scf.for k by TK                      the A block (TM x TK) copied to a contiguous buffer (L2)
        scf.for n by nr                    B's TK x nr micro-panel: read in place from packed B, or
                                           (when "B") copied to a contiguous buffer (L1)
          scf.for m by mr                  register tiles, peeled so full tiles are static
          scf.for k by 1                   vector<mr x nr> accumulator hoisted into registers,
                                           vector.contract -> outer products -> vector.fma; it
                                           starts from zero at each k step and is added to C after
                                           it (lowering/accumulate.py); more than K_CHUNK_STEPS k
                                           steps run in chunks, each summed into a zero-filled
                                           block then added to C's (`_k_steps`)

Each copy of a block or micro-panel is a nofold `transform.structured.pad` of that operand of
the tile, bufferized with linalg.copy (`bufferize_to_allocation`); `packing` decides which. Read
in place, rows a power-of-two stride apart map to the same cache sets: B's TK panel rows to one
L1 set (always packed), the rows of an A or C block to a few L2 sets (packed when they would take
more than half the ways: at 2048^3, 256 rows 8 KiB apart fill all 16; measured +7% on two cores,
+8% on one; not at 1024^3, where they take half). Only full, static blocks and panels are packed
(a partial one's pad bufferizes to a memref.copy runtime call, or not at all; in a partial column
block, a packed A block or B micro-panel fails to bufferize), and A and C only with several k
steps (with one, an A block is contiguous rows already and C is written once).

When several row blocks share B (`policy.packs_panels`), a GEMM packs A and B once, in panels per k step
(`_pack_panels`, `_panel_matmul`): a generic over (m1, n1, k1, m0, n0, k0) whose A is (k/TK, m/mr,
TK, mr), B (k/TK, n/nr, TK, nr) and C blocks (TN/nr, TM/mr, mr, nr), accumulated in L2 and unpacked
into C once per block (column panel outer: the register tile after this one is the next KiB, which
the L2 prefetcher streams in; row panel outer, its loads of C took 3% of the samples at 2048^3).
No copy at any k step, no fill or copy of C; 1024^3 and 2048^3 measured 7-10% faster than the
B-only scheme below (one and two cores). An elementwise epilogue's matmul is packed
so too, its block unpacked into a block-sized buffer the epilogue reads. Any m, n and k: the packs
pad A's last panel of rows, B's last of columns and the last k step with zeros (masked vector reads;
`panel_k` picks a k step dividing k when there is one), and the blocks at the edges are partial (C's
unpack masked there). 1000^3 on two cores: 0.55x NumPy in partial blocks read in place -> ~0.9x.

B is packed once up front ("P", `_prepacked_matmul`) instead of micro-panel by micro-panel when
several row blocks would copy the same panels and B does not fit L2 (packed B, like a temporary
product, is then a buffer the caller lends: lowering/workspace.py). `transform.structured.pack` splits n into (n/nr, nr), so the matmul becomes a
generic over (m, n/nr, k, nr) reading B packed and C as (m, n/nr, nr), C's own memory (reshapes,
no copy). 2048^3 on two cores: +3-5% (B's panels were copied once per row block, 4 times; the
copies were ~5% of the time).

A batch_matmul is tiled the same way, its forall running over (batch, m, n) blocks: each block
(1 x TM x TN x K) is generalized, its unit batch dim folded away (rank-reducing slices) and the
result specialized back to a 2-D linalg.matmul, which then gets the loops above (`_batch_block`;
its B micro-panels packed per block, never once up front). Vectorizing the unit batch dim instead
leaves a 4-D vector.contract that the outer-product lowering turns into scalar code.
(8, 256, 256, 256) float32 on two cores: 63.6 ms as scalar loops -> 0.97 ms (NumPy 1.34 ms).

A matmul whose only user is an elementwise generic reading it element for element (bias,
activation: `Contraction.epilogue`) is computed block by block inside that generic's loop instead: the forall
tiles the epilogue, and the matmul and its zero fill are fused into it (fuse_into_containing_op),
so each output block gets its epilogue while it is in cache and no full-size product is stored.
A matmul whose only user is a matvec taking it as its matrix (`(a @ b) @ x`) is reduced the same
way (`_matvec_epilogue`): the forall runs over row blocks of y and a loop over the column blocks
inside it, the matmul and its fill are fused into that loop, and each TM x TN block of the product,
computed into a block-sized buffer, is reduced into y while it is in L2; with B packed once, the
matvec is packed like the product so that the two still fuse, and A is packed once too, in panels
of mr rows interleaved by k (`_prepacked_matvec_epilogue`, `Contraction.panels`): each register tile reads
its A values as one contiguous stream instead of mr rows of an A block copied at every k step
(2048, two cores: 1.03-1.07x, one core 1.05x). The product is never filled, stored whole nor read
back (exact: only the matvec's summation order, unspecified as in NumPy, changes).

Outside the panel path, partial tiles (sizes not divisible by the tiles) are the peeled remainder
loops, vectorized with masks, except a partial register tile of rows: a 2-D matmul without an
epilogue whose m is not a multiple of mr (and large enough) runs on copies of A and C padded with
zero rows (`padded_loops`, "(padded)" in the script's comment), its tiles those of the padded loops
(`padded_tiles`); and the last register tile of columns when every column block is full: it is
vectorized TN % nr wide (`_vectorize_remainder`), so its accumulator stays in registers across the
k loop.

Matvec and dot split the reduction into vector-wide partial sums (tile_reduction_using_for) so the
hot loop is an elementwise fma on rows; vecmat keeps its parallel dim in the vector, and its
threads split the rows of A (`_vecmat`: each reads whole rows). A long k of these three is summed
in blocks (`k_block`, the k entry of et.tiles), each from zero, so no chain is much longer than
max(K_STEPS, sqrt(k)).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import loop as loop_ops
from mlir.dialects.transform import structured, tensor, vector

from ..target import Target
from . import scripts
from .annotations import ID, KCHUNK, TILES, VEC
from .payload import as_operation, element_bytes, loop_extents
from .plan import Contraction, Plan
from .policy import MIN_WORK, Tiles, choose_tiles, divisor_tile, fit, simd_lanes

def _ints(values: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# --- the transform script -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Script:
    """The handles every part of the tile script uses: the payload root and its functions; and the
    contractions (`Contraction.ident`) whose zero fill it splits by row blocks: "rows" in the plan and
    still a linalg.fill (not split over threads by the parallel stage)."""

    root: ir.Value
    funcs: ir.Value
    fills: frozenset[int]


class Sums(NamedTuple):
    """Handles to a reduction split into partial sums (`tile_reduction_using_for`), vectorized after the tiling."""

    fill: ir.Value
    part: ir.Value
    comb: ir.Value


def _match(s: _Script, t: Contraction) -> ir.Value:
    """The contraction `t` (et.id)."""
    return scripts.match(s.root, (t.op,), {ID: t.ident})


def _epilogue(op: ir.Value) -> ir.Value:
    """The epilogue of the matmul `op` (`Contraction.epilogue`: its result's only user)."""
    return scripts.consumers_of(op, 0)


def _peel(loop: ir.Value) -> ir.Value:
    """Peel the scf.for `loop`: its full iterations, then the remainder loop (returned)."""
    return scripts.peel(loop)[1]


def _pack(t: Contraction, target: ir.Value, operand: int | None, dims: list[int], copy_back: bool = False,
          multiple: list[int] | None = None) -> ir.Value:
    """Operand `operand` (0: A, 1: B, 2: C) of the tile `target` copied into a contiguous buffer: a
    nofold pad along the loops `dims`, bufferized with linalg.copy; returns the padded tile.
    The copy of the output operand is copied back after the tile's loops (`copy_back`). With
    `operand` None, every operand is padded along `dims` to a `multiple` (copied only where that
    changes its shape)."""
    zero = ir.Attribute.parse(("0.0" if t.elem.startswith(("f", "bf")) else "0") + f" : {t.elem}")
    padded, pad, _ = scripts.pad(target, [zero] * 3, dims, [int(n == operand) for n in range(3)],
                                 "linalg.copy" if copy_back else "none", multiple)
    scripts.bufferize_to_allocation(pad)
    return padded


def _matmul_family(s: _Script, t: Contraction, i: int) -> Sums | None:
    """forall over output blocks (C block packed); k cache loop (A block packed); n by nr (B
    micro-panel packed); peeled m register loop; k by 1, vectorized. What is packed: `packing`.
    A batch_matmul's forall also runs over the batch; each block is then a 2-D matmul (`_batch_block`).
    Returns a matvec epilogue's partial sums (`_reduce_blocks`), vectorized later."""
    if len(t.loops) == 4:
        _batch_block(s, t, i)
        return None
    packed = t.packed
    if "P" in packed:
        if t.epilogue is not None and t.reduce is None:  # (A and B in panels: `Contraction.packed`)
            op = _match(s, t)
            _panel_matmul(s, t, i, op, _epilogue(op))
            return None
        return _prepacked_matvec_epilogue(s, t, i, packed) if t.reduce else _prepacked_matmul(s, t, i, packed)
    tm, tn, _ = t.tiles
    op = _match(s, t)
    if t.pad:
        op = _pad_whole(t, op)
    sums = None
    if t.epilogue is None:
        block, _ = scripts.tile_using_forall(op, [tm, tn, 0])
    elif t.reduce is not None:
        block, sums = _matvec_epilogue(s, t, op)
    else:  # the forall tiles the epilogue; the matmul (and its zero fill) computes each block inside it
        epilogue = _epilogue(op)
        init = scripts.producer_of(op, 2)
        _, loop = scripts.tile_using_forall(epilogue, [tm, tn])
        block, loop = scripts.fuse_into(op, loop)
        scripts.fuse_into(init, loop)
    _block_loops(t, i, packed, block)
    return sums


def _matvec_epilogue(s: _Script, t: Contraction, op: ir.Value) -> tuple[ir.Value, Sums]:
    """`(a @ b) @ x`: the forall runs over row blocks of y and a loop over the column blocks inside
    it; the matmul `op` and its zero fill are fused into that loop, so each TM x TN block of the product
    is computed into a block-sized buffer (L2) and reduced into y (TM rows by mr, TN split into kv-wide
    partial sums) right away: the product is never stored whole, nor filled, nor read back.
    Returns the product's block and the partial sums (`_reduce_blocks`)."""
    tm, tn, _ = t.tiles
    mr, kv = t.reduce
    matvec = _epilogue(op)
    init = scripts.producer_of(op, 2)
    return _reduce_blocks(op, matvec, init, [[tm, 0], [0, tn], [mr, 0], [0, kv]])


def _reduce_blocks(matmul: ir.Value, matvec: ir.Value, init: ir.Value, sizes: list[list[int]]) -> tuple[ir.Value, Sums]:
    """The matvec `matvec` tiled by row blocks (forall) and column blocks (for) with the matmul
    `matmul` and its fill `init` fused into both loops; its block tiled by rows and split into
    partial sums (`sizes`: those four tile sizes). Returns the matmul's block and the partial sums."""
    rows, cols, row, lanes = sizes
    block, loop = scripts.tile_using_forall(matvec, rows)
    matmul_rows, loop = scripts.fuse_into(matmul, loop)
    fill_rows, _ = scripts.fuse_into(init, loop)
    cols_block, (col_loop,) = scripts.tile_using_for(block, cols)
    matmul_block, col_loop = scripts.fuse_into(matmul_rows, col_loop)
    scripts.fuse_into(fill_rows, col_loop)
    row_block, _ = scripts.tile_using_for(cols_block, row)
    fill, part, comb, _ = scripts.tile_reduction_using_for(row_block, lanes)
    return matmul_block, Sums(fill, part, comb)


def _pad_whole(t: Contraction, target: ir.Value) -> ir.Value:
    """The matmul `target` computed on copies of A and C padded with zero rows to whole register tiles
    (`padded_loops`), the result copied back out of C's; returns the padded matmul."""
    return _pack(t, target, None, [0], copy_back=True, multiple=[t.vec[0]])


def _batch_block(s: _Script, t: Contraction, i: int) -> None:
    """A batch_matmul: the forall runs over (batch, m, n) blocks; each block (1 x TM x TN x K) is
    made a 2-D linalg.matmul on rank-reduced slices (generalize, fold the unit batch dim, specialize:
    vectorizing the unit dim instead leaves a contraction the outer-product lowering does not take)
    and gets the loops of a 2-D block, marked et.micro for the vectorizer (the tags do not survive)."""
    flat = dataclasses.replace(t, loops=t.loops[1:], tiles=t.tiles[1:], vec=t.vec[1:])
    tm, tn, _ = flat.tiles
    block, loop = scripts.tile_using_forall(_match(s, t), [1, tm, tn, 0])
    scripts.generalize(block)
    scripts.apply_patterns(loop, structured.apply_patterns_linalg_fold_unit_extent_dims_via_slices)
    block = scripts.specialize(scripts.match(loop, ("linalg.generic",)))
    _mark_micro(i, block)
    _block_loops(flat, i, t.packed, block)


def _block_loops(t: Contraction, i: int, packed: frozenset[str], block: ir.Value) -> None:
    """Inside the forall's block `block` of a 2-D matmul: the k loop (`_k_loop`), n by nr (B
    micro-panel packed or read in place), m by mr (peeled), k by 1."""
    _, n, _ = t.loops
    _, tn, tk = t.tiles
    mr, nr, _ = t.vec
    tile = _k_loop(t, i, packed, [0, 1], [0, 0, tk], block)
    if "B" in packed:
        panel, (n_loop,) = scripts.tile_using_for(tile, [0, nr, 0])
        _, (m_loop, _) = scripts.tile_using_for(_pack(t, panel, 1, [2]), [mr, 0, 1])
    else:
        _, (n_loop, m_loop, _) = scripts.tile_using_for(tile, [mr, nr, 1], [1, 0, 2])
    _peel_rows(t, i, m_loop, "linalg.matmul")
    if tn % nr or n % tn:
        rest = _peel(n_loop)
        if _static_columns(t):  # its register tiles: marked for `_vectorize_remainders`
            _annotate(i, "et.rem", scripts.match(rest, ("linalg.matmul",)))


def _peel_rows(t: Contraction, i: int, m_loop: ir.Value, op: str) -> None:
    """Peel the last, partial register tile of rows off the m loop `m_loop` (when TM or m is not a
    multiple of mr); with `_static_rows`, its register tiles (`op`) are marked et.remrows for
    `_vectorize_remainders`."""
    (m, _, _), (tm, _, _), (mr, _, _) = t.loops[-3:], t.tiles[-3:], t.vec[-3:]
    if tm % mr or m % tm:
        rest = _peel(m_loop)
        if _static_rows(t):
            _annotate(i, "et.remrows", scripts.match(rest, (op,)))


def _static_rows(t: Contraction) -> bool:
    """Whether the last register tile of rows has the same static height (TM % mr) in every row block
    (TM divides m): it is then vectorized to its height, its accumulator kept in registers and
    restarted at each k step like a full tile's (a masked one reads and writes C at every k step and
    sums a whole chunk of k in one chain: `_masked`)."""
    (m, _, _), (tm, _, _), (mr, _, _) = t.loops[-3:], t.tiles[-3:], t.vec[-3:]
    return tm % mr > 0 and m % tm == 0


def _static_columns(t: Contraction) -> bool:
    """Whether the last register tile of columns has the same static width (TN % nr) in every column
    block (the column blocks are all full: TN divides n, so none has a dynamic size), of at most
    one SIMD vector (LLVM splits a wider odd one into pieces it spills: 20 wide at 500^3, 2x slower)."""
    (_, n, _), (_, tn, _), (_, nr, _) = t.loops[-3:], t.tiles[-3:], t.vec[-3:]
    return 0 < tn % nr <= simd_lanes(t.itemsize, t.target) and n % tn == 0


def _vectorize_remainders(s: _Script, t: Contraction, i: int, op: str, size: Callable[[int, int], list[int]]) -> None:
    """The last register tiles of rows and of columns where their size is static (`_static_rows`,
    `_static_columns`), vectorized at that size (`size(rows, columns)`: the vector sizes), not masked
    to mr x nr: a masked accumulator is not hoisted out of the k loop (its masked reads and writes
    stayed in it: 9 loads and 8 stores per 8 FMAs at 200^3), one of the tile's own size is. (Rows
    left over in a partial row block are still masked.)"""
    (tm, tn, _), (mr, nr, _) = t.tiles[-3:], t.vec[-3:]
    rows, columns = tm % mr if _static_rows(t) else mr, tn % nr if _static_columns(t) else nr
    for marks, shape in (({"et.rem": i, "et.remrows": i}, (rows, columns)), ({"et.rem": i}, (mr, columns)), ({"et.remrows": i}, (rows, nr))):
        if shape != (mr, nr):
            scripts.vectorize(scripts.match(s.funcs, (op,), marks), size(*shape))


K_CHUNK_STEPS = 128  # k steps of a matmul's k loop that accumulate into one zero-filled block (lowering/accumulate.py)


def _masked(t: Contraction) -> bool:
    """Whether a block of the matmul has a masked register tile (peeled rows, or peeled columns not
    vectorized to their own width, `_static_columns`): its accumulator is read from and written to C
    at every k step, so it is not restarted per k step (lowering/accumulate.py) and sums a chunk's
    k products in one chain."""
    (m, n, _), (tm, tn, _), (mr, nr, _) = t.loops[-3:], t.tiles[-3:], t.vec[-3:]
    return (bool(tm % mr or m % tm) and not _static_rows(t)) or (bool(tn % nr or n % tn) and not _static_columns(t))


MASKED_CHUNK = 256  # k products a masked register tile sums in one chain, at least (`chunk_steps`)


def chunk_steps(t: Contraction) -> int:
    """k steps per chunk of a matmul's k loop: K_CHUNK_STEPS, or about max(MASKED_CHUNK, sqrt(k))
    products where a masked register tile sums its chunk in one chain (`_masked`): its chains are
    then a chunk's products and one add per chunk, not all k products (float32 (2, 9, 2^16) @
    (2, 2^16, 20): 6.6e-5 -> 8.9e-7, NumPy 8.8e-7); the cost is a fill and an add of the block
    per chunk. At least 2 steps: a chunk loop of one step is folded away by canonicalization, its
    et.kchunk mark with it, and the tile would sum all k products in one chain again (k steps of 256
    on AVX2's 6-row tiles: float32 (2, 16, 2^16) @ (2, 2^16, 16) 7e-4 -> 1e-6)."""
    k, tk = t.loops[-1], t.tiles[-1]
    # (a peeled tile of static rows too: on AVX-512's 8-row tiles, 9 rows' 1-row tile summed 2^15 products in one chain)
    return max(2, round(max(MASKED_CHUNK, math.sqrt(k)) / tk)) if _masked(t) or _static_rows(t) else K_CHUNK_STEPS


def _k_steps(t: Contraction, i: int, tile: ir.Value, steps: list[int]) -> ir.Value:
    """The k loop of the matmul block `tile` (tile sizes `steps`: one k step); with more than
    `chunk_steps` steps, in a loop over chunks of that many, each chunk's k loop marked et.kchunk
    (summed into a zero-filled block, then added to the block: lowering/accumulate.py), so no sum
    of k steps is longer than a chunk. Returns the k step's tile."""
    chunk = chunk_steps(t)
    chunked = t.loops[-1] > t.tiles[-1] * chunk
    if chunked:
        tile, _ = scripts.tile_using_for(tile, [s * chunk for s in steps])
    step, (k_loop,) = scripts.tile_using_for(tile, steps)
    if chunked:
        _annotate(i, KCHUNK, k_loop)
    return step




def _k_loop(t: Contraction, i: int, packed: frozenset[str], c_dims: list[int], sizes: list[int], block: ir.Value) -> ir.Value:
    """Inside the forall's block `block`: the C block packed (accumulated in a contiguous buffer
    across the k loop, copied out once; padded along `c_dims`), the k loop (tile `sizes`), the A
    block packed at each k step. Returns the k step's tile."""
    tile = block
    if "C" in packed:
        tile = _pack(t, tile, 2, c_dims, copy_back=True)
    tile = _k_steps(t, i, tile, sizes)
    if "A" in packed:
        tile = _pack(t, tile, 0, [2])
    return tile


def _split_pack(pack: ir.Value, threads: list[int], rows: list[int], vector: list[int], order: list[int] | None = None) -> None:
    """The pack `pack` split over the threads (forall, tile sizes `threads`) and lowered to a transpose
    copying `rows`-sized tiles as vectors of `vector`, its loops in `order` (an interchange of the
    transpose's dims)."""
    tiled, _ = scripts.tile_using_forall(pack, threads)
    _, _, transpose = scripts.lower_pack(scripts.cast(tiled, scripts.op_type("linalg.pack")))
    row, _ = scripts.tile_using_for(transpose, rows, order)
    scripts.vectorize(row, vector)


def _split_padded_pack(pack: ir.Value, threads: list[int], inner: tuple[int, int]) -> None:
    """A pack that pads (its two inner tiles `inner`), split over the threads and vectorized tile by
    tile, its reads masked (lowered, its pad of a slice of dynamic size was a copy to a buffer through
    memrefCopy)."""
    tiled, _ = scripts.tile_using_forall(pack, threads)
    row, _ = scripts.tile_using_for(tiled, [1, 1])
    scripts.vectorize(row, [1, 1, *inner])


def _reshaped_unpack(compute: ir.Value) -> None:
    """The unpack of `compute`'s result lowered (an unpack whose inner tiles are innermost: a reshape)."""
    scripts.lower_unpack(scripts.consumers_of(compute, 0, scripts.op_type("linalg.unpack")))


def _annotate(i: int, attribute: str, *handles: ir.Value) -> None:
    """Annotate each op of `handles` with `attribute` = i (an i64)."""
    value = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
    for handle in handles:
        scripts.annotate(handle, attribute, value)


def _mark_micro(i: int, *handles: ir.Value) -> None:
    """Mark the register tiles `handles` et.micro = i (the vectorizer's match: the tags do not survive)."""
    _annotate(i, "et.micro", *handles)


def _vectorize_marked(s: _Script, t: Contraction, i: int) -> None:
    """Vectorize the ops marked et.micro = i (`_mark_micro`), remainder tiles with masks."""
    scripts.vectorize(scripts.match(s.funcs, (), {"et.micro": i}), list(t.vec))


def _pack_b(t: Contraction, source: ir.Value) -> tuple[ir.Value, ir.Value]:
    """`transform.structured.pack` of the matmul `source` splitting n into (n / nr, nr): it becomes
    a generic over (m, n1, k, n0) reading B as (n1, k, n0) (pack_transpose) and C as (m,
    n1, n0). B's pack is split over column blocks (forall, the threads) and lowered to a transpose
    copying nr-wide rows as vectors. Returns the generic (typed linalg.generic, and as any op)."""
    tn, nr = t.tiles[1], t.vec[1]
    packed = scripts.pack(source, [0, nr, 0])
    generic, pack_b, _ = scripts.pack_transpose(scripts.producer_of(packed, 1, scripts.op_type("linalg.pack")), packed, outer=[1, 0])
    _split_pack(pack_b, [tn // nr, 0], [1, 1, 0], [1, 1, nr])
    return generic, scripts.cast(generic, transform.AnyOpType.get())


def _pack_panels(t: Contraction, source: ir.Value) -> tuple[ir.Value, ir.Value]:
    """`transform.structured.pack` of the matmul `source` splitting m, n and k into (m / mr, mr), (n /
    nr, nr) and (k / TK, TK): a generic over (m1, n1, k1, m0, n0, k0) reading A as (k1, m1,
    k0, m0), B as (k1, n1, k0, n0) and C as (n1, m1, m0, n0) (pack_transpose: the row panels of a
    column panel, which the block loops visit in turn, are contiguous in C's block). Each register
    tile's A (and B) values of a k step are one contiguous stream, and the A (B) block of a k step is
    contiguous too (a block of mr-row panels K apart crowded its L2 sets: 2048^3 ran 13% slower).
    Both packs are split over the threads (forall) and lowered to transposes copying vectors (A's 16
    k steps of a register tile at a time), in the order that reads their rows front to back: A a panel
    of mr rows across all k steps, B a row across all its column panels (k step outer, panel inner:
    1024^3 and 2048^3 on two cores 1-4% faster than panel by panel, 9 rotated rounds).
    Returns the generic (as any op) and C's unpack."""
    (m, n, k), (tm, tn, tk) = t.loops, t.tiles
    mr, nr = t.vec[0], t.vec[1]
    pack_type = scripts.op_type("linalg.pack")
    generic = scripts.pack(source, [mr, nr, tk])
    generic, pack_a, _ = scripts.pack_transpose(scripts.producer_of(generic, 0, pack_type), generic, outer=[1, 0], inner=[1, 0])
    generic, pack_b, _ = scripts.pack_transpose(scripts.producer_of(generic, 1, pack_type), generic, inner=[1, 0])
    unpack = scripts.consumers_of(generic, 0, scripts.op_type("linalg.unpack"))
    generic, _, unpack = scripts.pack_transpose(unpack, generic, outer=[1, 0], unpack=True)
    if m % mr or k % tk:
        _split_padded_pack(pack_a, [0, tm // mr], (tk, mr))
    else:
        _split_pack(pack_a, [0, tm // mr], [1, 1, 16, 0], [1, 1, 16, mr], [1, 0, 2, 3])
    if n % nr or k % tk:
        _split_padded_pack(pack_b, [0, tn // nr], (tk, nr))
    else:
        _split_pack(pack_b, [0, tn // nr], [1, 1, 1, 0], [1, 1, 1, nr], [0, 2, 1, 3])
    return scripts.cast(generic, transform.AnyOpType.get()), unpack


def _packed_block_loops(t: Contraction, i: int, packed: frozenset[str], block: ir.Value) -> None:
    """Inside the block `block` of the generic over (m, n1, k, n0) (`_pack_b`): the k loop, n1 by 1
    (each TK x nr micro-panel read in place from packed B), m by mr (peeled), k by 1, marked et.micro."""
    tk, mr = t.tiles[2], t.vec[0]
    panel, _ = scripts.tile_using_for(_k_loop(t, i, packed, [0, 1, 3], [0, 0, tk, 0], block), [0, 1, 0, 0])
    tile, (m_loop, _) = scripts.tile_using_for(panel, [mr, 0, 1, 0])
    _mark_micro(i, tile)
    _peel_rows(t, i, m_loop, "linalg.generic")


def _prepacked_matmul(s: _Script, t: Contraction, i: int, packed: frozenset[str]) -> None:
    """B packed once, panel-major (`_pack_b`), then the blocks. C is read as (m, n1, n0), its own
    row-major layout (its pack and unpack lower to expand_shape / collapse_shape: no copy). The block
    loops are those of `_matmul_family`, with each TK x nr micro-panel read in place from B's."""
    tm, tn = t.tiles[0], t.tiles[1]
    nr = t.vec[1]
    if t.panels:
        _panel_matmul(s, t, i, _match(s, t))
        return
    op = _match(s, t)
    if t.ident in s.fills:  # its zero fill, split by row blocks (`Contraction.fill`)
        scripts.tile_using_forall(scripts.producer_of(op, 2), [tm, 0])
    if t.pad:
        op = _pad_whole(t, op)
    generic, any_generic = _pack_b(t, op)
    # C: (m, n) -> (m, n / nr, nr) and back are reshapes
    scripts.lower_pack(scripts.producer_of(generic, 2, scripts.op_type("linalg.pack")))
    _reshaped_unpack(generic)
    block, _ = scripts.tile_using_forall(any_generic, [tm, tn // nr, 0, 0])
    _packed_block_loops(t, i, packed, block)


def _panel_matmul(s: _Script, t: Contraction, i: int, op: ir.Value, epilogue: ir.Value | None = None) -> None:
    """A GEMM with A and B packed once, in panels (`_pack_panels`): its C is (n / nr, m / mr, mr, nr),
    each register tile's accumulators contiguous. Its pack of C's zero fill folds into a fill of that
    layout; the forall tiles C's unpack by TM x TN blocks, the generic and its fill fused into it, so
    each block is accumulated in a block-sized buffer (L2) and unpacked into C once after its k loop,
    register tile by register tile, as vectors: C is neither filled, nor copied in and out, and A is
    copied once instead of a TM x TK block at every k step of every block.
    With an elementwise `epilogue`, the forall tiles the epilogue instead and the unpack is fused into
    it too: each block is unpacked into a block-sized buffer (L2) that the epilogue's block reads,
    vectorized as any elementwise loop (math through libmvec, mathapprox.py; vectorized by the
    transform dialect, tanh and exp would be one libm call per element)."""
    (m, n, _), (tm, tn, _) = t.loops, t.tiles
    # (the blocks at the edges are partial: their register tiles of C's unpack are masked)
    unpack_sizes = [1, 1, *t.vec[:2]] if m % tm or n % tn else None
    generic, unpack = _pack_panels(t, op)
    scripts.apply_patterns(s.funcs, transform.apply_patterns_canonicalization)  # pack(fill) -> fill
    init = scripts.producer_of(generic, 2)
    if epilogue is None:
        unpack_block, loop = scripts.tile_using_forall(unpack, [tm, tn])
    else:
        _, loop = scripts.tile_using_forall(epilogue, [tm, tn])
        unpack_block, loop = scripts.fuse_into(unpack, loop)
    block, loop = scripts.fuse_into(generic, loop)
    scripts.fuse_into(init, loop)
    _panel_block_loops(s, t, i, block)
    tile, _ = scripts.tile_using_for(unpack_block, list(t.vec[:2]))
    scripts.vectorize(tile, unpack_sizes)


def _k_unroll(t: Contraction) -> int:
    """k steps per iteration of a panel generic's innermost loop: the largest of 8, 4, 2 dividing TK
    (measured at 1024^3 and 2048^3: 4 and 8 alike, 2 ~4% slower)."""
    return next(u for u in (8, 4, 2) if t.tiles[2] % u == 0)


def _panel_block_loops(s: _Script, t: Contraction, i: int, block: ir.Value) -> None:
    """Inside the block `block` (TM / mr, TN / nr, K / TK, mr, nr, TK) of a panel generic: the k loop,
    a column panel, a row panel and `_k_unroll` k steps, whose unit dims are folded away (rank-reducing
    slices) so that the register tile is a plain (mr, nr, u) contraction (the vectorizer's patterns
    cast away only leading unit dims that are parallel: the unit k1 left a contraction over two
    reduction dims, lowered to scalar code); marked et.micro."""
    panel, _ = scripts.tile_using_for(_k_steps(t, i, block, [0, 0, 1, 0, 0, 0]), [0, 1, 0, 0, 0, 0])
    _, (_, k_loop) = scripts.tile_using_for(panel, [1, 0, 0, 0, 0, _k_unroll(t)])
    scripts.apply_patterns(k_loop, structured.apply_patterns_linalg_fold_unit_extent_dims_via_slices)
    _mark_micro(i, scripts.match(k_loop, ("linalg.generic",)))


def _prepacked_matvec_epilogue(s: _Script, t: Contraction, i: int, packed: frozenset[str]) -> Sums:
    """`_matvec_epilogue` with B packed once (`_pack_b`), or A and B in panels (`_pack_panels`) when
    `Contraction.panels`: the product's blocks are then (TN / nr, TM / mr, mr, nr), and the matvec is packed
    the same way (a generic over (m1, k1, m0, k0) reading the product as the matmul writes it, x as
    (n / nr, nr)), so the product's unpack and the matvec's pack of it fold away and its blocks fuse
    into the matvec's loops as before; the partial sums are nr wide, one per row of the register tile.
    Returns the partial sums."""
    tm, tn = t.tiles[0], t.tiles[1]
    mr, nr = t.vec[0], t.vec[1]
    panels = t.panels
    pack_type = scripts.op_type("linalg.pack")
    op = _match(s, t)
    matvec = _epilogue(op)
    generic = _pack_panels(t, op)[0] if panels else _pack_b(t, op)[1]
    packed_matvec = scripts.pack(matvec, [mr if panels else 0, nr])
    if panels:  # as the product's C
        packed_matvec, _, _ = scripts.pack_transpose(scripts.producer_of(packed_matvec, 0, pack_type), packed_matvec, outer=[1, 0])
    scripts.lower_pack(scripts.producer_of(packed_matvec, 1, pack_type))
    if panels:  # y is (m / mr, mr): a reshape
        _reshaped_unpack(packed_matvec)
    scripts.apply_patterns(s.funcs, transform.apply_patterns_canonicalization)  # pack(unpack(C)) -> C, pack(fill) -> fill
    init = scripts.producer_of(generic, 2)
    any_matvec = scripts.cast(packed_matvec, transform.AnyOpType.get())
    if not panels:
        block, sums = _reduce_blocks(generic, any_matvec, init, [[tm, 0, 0], [0, tn // nr, 0], [mr, 0, 0], [0, 1, nr]])
        _packed_block_loops(t, i, packed, block)
        return sums
    block, sums = _reduce_blocks(generic, any_matvec, init, [[tm // mr, 0, 0, 0], [0, tn // nr, 0, 0], [1, 0, 0, 0], [0, 1, 0, nr]])
    _panel_block_loops(s, t, i, block)
    return sums


def _cleanup(s: _Script) -> None:
    """Peeled tiles get static shapes before vectorization (fold_tensor_empty: an epilogue's matmul
    block becomes a block-sized buffer)."""
    scripts.apply_patterns(s.funcs, tensor.apply_patterns_tensor_fold_tensor_empty, loop_ops.apply_patterns_scf_for_loop_canonicalization,
                           structured.apply_patterns_linalg_tiling_canonicalization, transform.apply_patterns_canonicalization)


def _vectorize_matmul(s: _Script, t: Contraction, i: int, sums: Sums | None) -> None:
    """The register tiles of a matmul: `_vectorize_tagged`; those of a batch_matmul's blocks (2-D
    matmuls marked et.micro); or (B packed once) the generic's, marked et.micro. And those of a
    matvec epilogue: its partial sums `sums` (`_matvec_epilogue`, `_prepacked_matvec_epilogue`)."""
    *_, mr, nr, _ = t.vec
    if len(t.loops) == 4:
        _vectorize_remainders(s, t, i, "linalg.matmul", lambda rows, columns: [rows, columns, 1])
        scripts.vectorize(scripts.match(s.funcs, ("linalg.matmul",), {"et.micro": i}), [mr, nr, 1])
        return
    if "P" in t.packed:  # the generic over (m, n1, k, n0), or (panels) its (mr, nr, u) register tiles
        panels = t.panels
        if not panels:
            _vectorize_remainders(s, t, i, "linalg.generic", lambda rows, _: [rows, 1, 1, nr])
        scripts.vectorize(scripts.match(s.funcs, ("linalg.generic",), {"et.micro": i}),
                          [mr, nr, _k_unroll(t)] if panels else [mr, 1, 1, nr])
        if panels:  # the accumulator's slice of a slice made one: its read and write then match, and are hoisted
            scripts.apply_patterns(s.funcs, tensor.apply_patterns_tensor_merge_consecutive_insert_extract_slice)
        # (a matvec epilogue's partial sums: over (m1, k1, m0, k0), their buffer (m1, m0, k1, k0); or (m, k1, k0))
        sizes = {"part": (1, 1, mr, nr), "comb": (1, mr, 1, nr), "fill": (1, mr, 1, nr)} if panels else \
            dict.fromkeys(("part", "comb", "fill"), (mr, 1, nr))
    else:
        _vectorize_remainders(s, t, i, "linalg.matmul", lambda rows, columns: [rows, columns, 1])
        _vectorize_tagged(s, t, i)
        sizes = dict.fromkeys(("part", "comb", "fill"), t.reduce)
    if t.reduce is not None:
        for part, size in sizes.items():
            scripts.vectorize(getattr(sums, part), list(size))


def _vectorize_tagged(s: _Script, t: Contraction, i: int) -> None:
    """The register tiles (they keep the tags): full tiles are static, remainder tiles get masks."""
    scripts.vectorize(scripts.match(s.funcs, (t.op,), {ID: t.ident}), list(t.vec))


def _matvec(s: _Script, t: Contraction, i: int) -> None:
    """Rows by mr; the reduction split into kv-wide partial sums held in vector registers (a
    partial last step of k and partial row blocks peeled: 2000 x 2047 float32 0.7 -> 0.35 ms on one
    core, 0.3 -> 0.15 ms on two)."""
    (tm, tk), (mr, kv) = t.tiles, t.vec
    block, _ = scripts.tile_using_forall(_match(s, t), [tm, 0])
    rows, (m_loop,) = scripts.tile_using_for(block, [mr, 0])
    fill, part, comb, k_loop = _lane_sums(rows, [0, tk], [0, kv])
    # the partial sums, their init and combination marked (the peels clone them); full register
    # tiles peeled from the partial ones, which are masked
    m, k = t.loops
    _mark_micro(i, part, fill, comb)
    if k % kv or (tk and k % tk):
        _peel(k_loop)
    if tm % mr or m % tm:
        _peel(m_loop)


def _lane_sums(target: ir.Value, block: list[int], lanes: list[int]) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """The reduction of `target` split into vector-wide partial sums (`lanes`: the tile sizes),
    restarted from zero in each k block (`block`: tile sizes of a loop around them, all 0 for one
    block; `k_block`): (their fill, the partial sums, their combination, their loop)."""
    if any(block):
        target, _ = scripts.tile_using_for(target, block)
    return scripts.tile_reduction_using_for(target, lanes)


def _vecmat(s: _Script, t: Contraction, i: int, threads: int) -> None:
    """y = x A: each thread reads whole rows of A, a contiguous stream (row chunks, a page or less
    each, defeat the prefetchers). With several threads the rows are split among them
    (`split_reduction`: k = (S, k / S), one partial y per thread in an S x n buffer, summed
    afterwards) when k divides into S whole steps of kr rows, else column blocks are. A long k is
    split so into blocks of TK rows (`k_block`), each summed from zero into its own partial y (a
    thread's share of them in turn). Inside, y in
    blocks of TN (half of L1), A's rows kr at a time, y read and written nv wide (marked et.micro);
    full register tiles are peeled from the partial ones (a masked k step is scalar code).

    Measured (float32, AMD EPYC, each system alone in its process; before -> after, NumPy): 2048^2
    on two cores 0.22 -> 0.14 ms (0.165), on one 0.44 -> 0.32; 8192^2 on two 7.9 -> 6.6 ms (5.8);
    2047 x 2000 (odd k) on one 2.6 -> 0.31 ms, two 1.7 -> 0.30."""
    (tn, tk), (nv, kr) = t.tiles, t.vec
    n, k = t.loops
    parallel = n * k >= MIN_WORK
    blocks = k // tk if tk and k % tk == 0 else 1
    split = _k_split(k, kr, threads) if parallel and blocks == 1 else blocks
    if n == 1:  # (a split part's unit n is folded away with the split's: a dot, which the part's tiles do not fit)
        split = 1
    op = _match(s, t)
    if split > 1:
        chunk = -(-split // threads) if parallel else split  # a thread's parts
        _, _, parts, _ = scripts.split_reduction(op, split, 0)
        chunks, loop = scripts.tile_using_forall(parts, [chunk, 0, 0])
        if chunk > 1:
            scripts.tile_using_for(chunks, [1, 0, 0])
        scripts.apply_patterns(loop, structured.apply_patterns_linalg_fold_unit_extent_dims_via_slices)  # each part: a 2-D vecmat
        block = scripts.match(loop, ("linalg.generic",))
    else:
        blocks = min(threads, max(1, n // nv)) if parallel else 1
        block, _ = scripts.tile_using_forall(op, [divisor_tile(n, -(-n // blocks), nv), 0])
    chunked = bool(tk and (k // split) % tk)
    if chunked:  # k blocks that do not divide k: a loop over them, each block's k loop a chunk
        block, _ = scripts.tile_using_for(block, [0, tk])
    cols, _ = scripts.tile_using_for(block, [tn, 0])
    tile, (k_loop, n_loop) = scripts.tile_using_for(cols, [nv, kr], [1, 0])
    if chunked:
        _annotate(i, KCHUNK, k_loop)
    _mark_micro(i, tile)
    # full register tiles static, only the last partial ones masked (a masked k step makes scalar code)
    if tn % nv or n % tn:
        _peel(n_loop)
    if (k // split) % kr:
        _peel(k_loop)


def _k_split(k: int, kr: int, threads: int) -> int:
    """Into how many chunks of whole kr-row steps (at most `threads`, at least 8 steps each) a
    vecmat's k divides evenly; 1 if none."""
    return max((s for s in range(2, threads + 1) if k % (s * kr) == 0 and k // s >= 8 * kr), default=1)


def _dot(s: _Script, t: Contraction, i: int) -> None:
    """kv-wide partial sums, restarted in each k block (`k_block`)."""
    fill, part, comb, _ = _lane_sums(_match(s, t), list(t.tiles), list(t.vec))
    _mark_micro(i, part, fill, comb)


def transform_script(module: ir.Module, plan: Plan) -> ir.Module | None:
    """The transform module that tiles and vectorizes every contraction of `module` as `plan` says
    (its target's threads only matter to vecmat's script), or None. Each gets `et.id` = its
    `ident`, the script's match (tags such as et.tiles coincide between ops)."""
    found = plan.contractions
    if not found:
        return None
    i64 = ir.IntegerType.get_signless(64)
    fills: set[int] = set()
    for t, op in zip(found, plan.ops(module), strict=True):
        op.attributes[ID] = ir.IntegerAttr.get(i64, t.ident)
        init = as_operation(op.operands[-1].owner)
        if t.fill == "rows" and init is not None and init.name == "linalg.fill":
            fills.add(t.ident)

    def body(root: ir.Value) -> None:
        s = _Script(root, scripts.match_kernel(root), frozenset(fills))
        later: list[Callable[[], None]] = []  # vectorization, once every contraction is tiled and the tiles are cleaned up
        for i, t in enumerate(found):
            name = t.op.removeprefix("linalg.")
            padded = " (padded)" if t.pad else ""
            scripts.note(f"{t.op} loops {_ints(t.loops)}{padded}: et.tiles = {_ints(t.tiles)}, et.vec = {_ints(t.vec)}")
            if name in ("matmul", "batch_matmul"):
                sums = _matmul_family(s, t, i)
                later.append(functools.partial(_vectorize_matmul, s, t, i, sums))
                continue
            if name == "matvec":
                _matvec(s, t, i)
            elif name == "vecmat":
                _vecmat(s, t, i, plan.target.threads)
            else:
                _dot(s, t, i)
            later.append(functools.partial(_vectorize_marked, s, t, i))
        _cleanup(s)
        for vectorize in later:
            vectorize()
        scripts.apply_patterns(
            s.funcs, loop_ops.apply_patterns_scf_for_loop_canonicalization, structured.apply_patterns_linalg_tiling_canonicalization,
            tensor.apply_patterns_tensor_fold_tensor_subset_ops_into_vector_transfers,
            vector.apply_patterns_vector_transfer_permutation_patterns,
            vector.apply_patterns_vector_reduction_to_contract, vector.apply_patterns_vector_cast_away_vector_leading_one_dim,
            transform.apply_patterns_canonicalization)
        # accumulators: a transfer_read/transfer_write pair of the loop-carried tensor -> registers
        scripts.hoist_loop_invariant_subsets(scripts.match_ops(root, "scf.for"))
        # multi-reductions (matvec's partial sums combined, row by row): one vector.reduction per row
        # ("innerparallel" extracted every lane: matvec 2048^2 0.145 -> 0.120 ms on two cores)
        scripts.apply_patterns(
            s.funcs,
            functools.partial(vector.apply_patterns_vector_lower_contraction, lowering_strategy=vector.VectorContractLowering.OuterProduct),
            vector.apply_patterns_vector_lower_masked_transfers, vector.apply_patterns_vector_transfer_permutation_patterns,
            functools.partial(vector.apply_patterns_vector_lower_multi_reduction,
                              lowering_strategy=vector.VectorMultiReductionLowering.InnerReduction),
            vector.apply_patterns_vector_lower_transpose, vector.apply_patterns_vector_lower_outerproduct,
            transform.apply_patterns_canonicalization)

    return scripts.build(module.context, body)


def tag(op: ir.Operation | ir.OpView, target: Target, cache_tiles: tuple[int, ...] | None = None) -> None:
    """Attach `et.tiles` / `et.vec` to an emitted contraction: choose_tiles' defaults, or the cache
    tiles (TM, TN, TK) of a matmul or batch_matmul that `target.tuning` forces or else the optimizer
    chose (capped at the loop extents; the register tile capped at them). A batch_matmul with a unit m, n or k stays untagged (the
    scalar loops of convert-linalg-to-loops, split over threads by lowering/parallel.py): folding its
    unit batch dim would fold that one too, and what is left is no matmul (`_batch_block`)."""
    op = op.operation
    size = element_bytes(ir.ShapedType(op.results[0].type).element_type)
    loops = loop_extents(op)
    if op.name == "linalg.batch_matmul" and min(loops[1:]) <= 1:
        return
    tiles = choose_tiles(op.name, loops, size, target)
    if op.name in ("linalg.matmul", "linalg.batch_matmul"):
        cache_tiles = target.tuning.matmul_tiles or cache_tiles
    if cache_tiles is not None:  # (TM, TN, TK); a batch_matmul's batch loop goes one at a time
        full = tuple(fit(t, e) for t, e in zip((1,) * (len(loops) - len(cache_tiles)) + tuple(cache_tiles), loops, strict=True))
        # (a register tile larger than the cache tile in m and n left a partial tile in both, whose
        # copy bufferized to a memrefCopy runtime call: (5, 7, 3) on 64^3 failed to link)
        tiles = Tiles(full, tuple(min(v, t) for v, t in zip(tiles.vec, full, strict=True)))
    op.attributes[TILES] = ir.Attribute.parse(_ints(tiles.tiles))
    op.attributes[VEC] = ir.Attribute.parse(_ints(tiles.vec))
