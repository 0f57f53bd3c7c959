"""`comp.explain()`: what the optimizer and the lowering decided, in plain sentences, each naming the
stage whose text backs it (`comp.stage(name)`)."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING

from .graph import Node, topological
from .lowering.policy import lowering_target
from .ops import OPS, Kind

if TYPE_CHECKING:
    from .compiler import Compilation


def _value(n: Node) -> str:
    """A value as a sentence names it: its op, shape and dtype."""
    return f"{n.op} ({'x'.join(map(str, n.shape)) or 'scalar'} {n.dtype})"


def _kib(n: Node) -> str:
    from .graph import itemsize

    return f"{n.size * itemsize(n.dtype) / 1024:,.0f} KiB"


def _count(k: int, thing: str) -> str:
    return f"{k} {thing}" + ("" if k == 1 else "s")


def _under(root: Node) -> set[int]:
    """Ids of the nodes a SCHEDULE node's loop computes (its input's DAG)."""
    return {id(n) for n in topological([root.inputs[0]])}


def optimizer(comp: Compilation) -> list[str]:
    r = comp.report
    out = [f"The optimizer ran {r.iterations} iteration(s) of {r.schedule} on an e-graph of {r.enodes:,} e-nodes in "
           f"{r.seconds * 1e3:.0f} ms and stopped: {r.stop_reason}"
           + (f" (a limit of {r.limits}: the program is the best found so far)" if r.hit_limit else "") + ". [optimizer]"]
    if r.fallback:
        out.append(f"Extraction failed, so the traced program was compiled as written: {r.fallback}. [optimizer]")
    elif r.cost_after < r.cost_before:
        out.append(f"It estimates the extracted program at {r.cost_after / 1e3:,.1f} µs against {r.cost_before / 1e3:,.1f} µs "
                   f"as traced ({r.cost_before / r.cost_after:.2g}x). [optimizer]")
    else:
        out.append(f"No rewrite made the program cheaper by the cost model's estimate ({r.cost_after / 1e3:,.1f} µs): "
                   "it is compiled as traced. [optimizer]")
    if r.groups:
        top = ", ".join(f"{g} {n}" for g, n in list(r.groups.items())[:5])
        out.append(f"The rule groups that matched most (matches, not all of them extracted): {top}. [optimizer]")
    return out


def program(comp: Compilation) -> list[str]:
    """Sentences about the extracted program: row loops, materialized values, tiles, lanes, fused chains."""
    nodes = topological(comp.outputs)
    rows = [n for n in nodes if n.op in ("fuse_rows", "fuse_rows_tiled")]
    in_rows = set().union(*map(_under, rows)) if rows else set()
    out = []
    for n in rows:
        ops = sorted({m.op for m in topological([n.inputs[0]]) if OPS[m.op].kind & (Kind.REDUCTION | Kind.ELEMENTWISE)})
        block = f"blocks of {n.attrs[0][0]} rows" if n.op == "fuse_rows_tiled" else "row blocks the lowering sizes"
        out.append(f"Row fusion: {', '.join(ops)} over {n.shape[0]} rows run as one loop over {block}, each block's "
                   "reductions computed first, so the input is read from memory once instead of once per op. [extracted, rows]")
    for n in nodes:
        if n.op == "materialize":
            value, users = n.inputs[0], [m for m in nodes if any(i is n for i in m.inputs)]
            where = ("as a block in cache inside the row loop" if id(n) in in_rows
                     else f"in a buffer of its own ({_kib(value)})")
            widest = max((m.size for m in users), default=value.size)
            why = (f"recomputing it for each of the {widest:,} elements it is broadcast to" if widest > value.size
                   else "recomputing it inside each reader's loop")
            out.append(f"{_value(value)} is computed once and stored {where}, then read by {_count(len(users), 'op')}: "
                       f"the cost model found that cheaper than {why}. [extracted]")
        elif n.op == "materialize_shared":
            out.append(f"{_value(n.inputs[0])} is computed once per row block for all its readers in the row loop. [extracted]")
        elif n.op == "matmul_tiled":
            (a, b), (tm, tn, tk) = n.inputs, n.attrs[0]
            out.append(f"The matmul of {'x'.join(map(str, a.shape))} by {'x'.join(map(str, b.shape))} is tiled in cache blocks "
                       f"TM, TN, TK = {tm}, {tn}, {tk}, which the cost model chose among the tiling ruleset's candidates for "
                       f"this machine's caches. [extracted, tile]")
        elif OPS[n.op].kind & Kind.REDUCTION and len(n.attrs) > 1 and n.attrs[1]:
            out.append(f"The {n.op} of {_value(n.inputs[0])} keeps {n.attrs[1]} vector accumulator lanes, chosen by the cost "
                       "model for its row length. [extracted, lanes]")
    stored = {id(n.inputs[0]) for n in nodes if n.op in ("materialize", "materialize_shared")}
    fused = [n for n in nodes if OPS[n.op].kind & Kind.ELEMENTWISE and n.shape and id(n) not in stored]
    if fused:
        out.append(f"Fused, with no buffer of their own: {_count(len(fused), 'elementwise op')} "
                   f"({', '.join(sorted({n.op for n in fused}))}), each computed inside the loop of the op that reads it. "
                   "[extracted, linalg]")
    return out


_MADE = re.compile(r"\[rewritten by the optimizer(?:: rules ([^\]]+))?\]$", re.MULTILINE)


def provenance(comp: Compilation) -> list[str]:
    """A sentence on the emitted ops the optimizer made and the rules that may have (the provenance stage's rows)."""
    made = _MADE.findall(comp.stage("provenance"))
    if not made:
        return []
    rules = dict.fromkeys(r for names in made for r in names.split(", ") if r)
    return [f"{_count(len(made), 'emitted op')} compute values the optimizer made, not in the traced program"
            + (f"; the rules that matched and build them: {', '.join(rules)} (candidates: egglog keeps no history per node)"
               if rules else "") + ". [provenance]"]


def lowering(comp: Compilation) -> list[str]:
    """Sentences from the lowering stages' facts and texts."""
    out = []
    linalg = Counter(re.findall(r"\blinalg\.(\w+)", comp.stage("linalg")))
    del linalg["yield"], linalg["index"]
    if linalg:
        out.append(f"The emitted program has {_count(sum(linalg.values()), 'linalg op')}: "
                   f"{', '.join(f'{n} x{k}' if k > 1 else n for n, k in linalg.most_common())}. [linalg]")
    facts = comp.facts
    target = lowering_target(comp.options.target, comp.report.cost_after)
    if target.threads < comp.options.target.threads:
        out.append(f"It runs on one thread: the cost model prices it at {comp.report.cost_after / 1e3:.1f} µs, below the "
                   f"{target.tuning.serial_below_ns / 1e3:.0f} µs under which splitting it among threads does not pay (starting them, and the "
                   "cores other libraries' threads spin on beside it, as OpenBLAS's after each NumPy matmul). [optimizer, parallel]")
    elif (threads := facts.get("openmp")) and threads.regions:
        out.append(f"{_count(threads.regions, 'loop nest')} split across {target.threads} threads (OpenMP parallel "
                   "regions). [parallel, openmp]")
    if (flat := facts.get("flatten")) and flat.ops:
        out.append(f"{_count(flat.ops, 'elementwise op')} over contiguous buffers: one flat loop each (no per-row remainder). [flatten]")
    if (streamed := facts.get("streams")) and streamed.stores:
        out.append(f"{_count(streamed.stores, 'vector store')} non-temporal: the output is larger than the L3 cache, so writing "
                   "around the cache saves reading it first. [streams]")
    if (interleaved := facts.get("interleave")) and interleaved.counts:
        out.append(f"LLVM's vectorizer is asked to interleave {', '.join(map(str, interleaved.counts))} vectors in the long math "
                   "loop(s), to hide the latency of the inline polynomials. [interleave]")
    if lent := comp.workspace:
        out.append(f"Lent by each call: {_count(len(lent), 'temporary buffer')} too large for the stack. [bufferize]")
    before, after = comp.stage("linalg"), comp.stage("math")
    for fn in sorted(set(re.findall(r"\bmath\.(\w+)", before))):
        how = ("inline polynomial code" if f"math.{fn}" not in after else "glibc's vector math library (libmvec)")
        out.append(f"{fn} is computed with {how}. [math, vecmath]")
    return out


def gpu_matmuls(comp: Compilation) -> list[str]:
    """On a GPU target, a sentence per matmul: the tile shape the cost model chose and why (gpu/tiles.py)."""
    from .gpu.tiles import candidates
    from .graph import itemsize

    device = comp.options.target.device
    if device is None:
        return []
    out = []
    for n in topological(comp.outputs):
        if n.op not in ("matmul", "matmul_tiled", "einsum_matmul") or not n.inputs[0].ndim == n.inputs[1].ndim in (2, 3):
            continue
        a, b = n.inputs
        *batch, rows, inner = a.shape
        prices = candidates(device, itemsize(n.dtype), (rows, b.shape[-1], inner), math.prod(batch))
        best = min(prices, key=lambda p: p.ns)
        others = "; ".join(p.describe(device) for p in prices if p is not best)
        out.append(f"The matmul of {'x'.join(map(str, a.shape))} by {'x'.join(map(str, b.shape))} is tiled in {best.describe(device)}, "
                   f"the cost model's fastest against {others}. [gpu-reduce]")
    return out


def guarded(comp: Compilation) -> list[str]:
    """Sentences about the data values tracing took as Python values (guards.py)."""
    return [f"Traced for data where {g.kind}() of the value at {g.where} is {g.value!r}: each call computes it first (one "
            "small program for all guards, on the host CPU) and traces again when it differs"
            f"{' (a float guard holds only for an equal value)' if g.kind == 'float' else ''}. [traced]" for g in comp.guards]


def explain(comp: Compilation) -> str:
    """The decisions of one compilation, one sentence per line."""
    return "\n".join(guarded(comp) + optimizer(comp) + program(comp) + provenance(comp) + lowering(comp) + gpu_matmuls(comp))
