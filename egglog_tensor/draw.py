"""Pictures as SVG, with no tool beyond Python: the extracted program as a DAG with the cost of each
kernel (`comp.draw()`), and the e-graph after rewriting, one box per e-class listing its e-nodes
(`f.trace(x).draw_egraph()`). Large e-graphs are cut to the e-classes nearest the root, and say so."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from .graph import Node, topological

if TYPE_CHECKING:
    from .compiler import Compilation
    from .stages import Traced

CHAR_W, ROW_H, PAD, GAP_X, GAP_Y = 7.0, 16.0, 6.0, 24.0, 48.0


@dataclass(frozen=True)
class Picture:
    """An SVG picture: shown by notebooks, `save`d to a file, or read as `svg` text."""

    svg: str

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            f.write(self.svg)


@dataclass
class _Box:
    rows: list[str]
    fill: str
    layer: int = 0
    x: float = 0.0
    y: float = 0.0

    @property
    def w(self) -> float:
        return max(map(len, self.rows)) * CHAR_W + 2 * PAD

    @property
    def h(self) -> float:
        return len(self.rows) * ROW_H + PAD


def _layers(boxes: dict[Hashable, _Box], edges: list[tuple[Hashable, int, Hashable]], roots: Iterable[Hashable]) -> None:
    """Layer = breadth-first distance from the roots (edges of a cyclic e-graph may then point up)."""
    out: dict[Hashable, list[Hashable]] = {}
    for a, _, b in edges:
        out.setdefault(a, []).append(b)
    seen = {r: 0 for r in roots if r in boxes}
    queue = deque(seen)
    while queue:
        a = queue.popleft()
        for b in out.get(a, ()):
            if b not in seen:
                seen[b] = seen[a] + 1
                queue.append(b)
    for key, box in boxes.items():
        box.layer = seen.get(key, 0)


def _svg(boxes: dict[Hashable, _Box], edges: list[tuple[Hashable, int, Hashable]], roots: Iterable[Hashable], note: str = "") -> Picture:
    """Boxes in layers (roots on top), ordered by the mean position of their parents, edges as curves."""
    _layers(boxes, edges, roots)
    rows: dict[int, list[Hashable]] = {}
    for key, box in boxes.items():
        rows.setdefault(box.layer, []).append(key)
    parents: dict[Hashable, list[Hashable]] = {}
    for a, _, b in edges:
        parents.setdefault(b, []).append(a)
    y = PAD + (ROW_H if note else 0)
    width = 0.0
    for layer in sorted(rows):
        keys = rows[layer]
        if layer:  # barycenter of the parents placed above
            keys.sort(key=lambda k: sum(boxes[p].x for p in parents.get(k, [])) / max(len(parents.get(k, [])), 1))
        x = PAD
        for key in keys:
            box = boxes[key]
            box.x, box.y = x, y
            x += box.w + GAP_X
        width = max(width, x)
        y += max(boxes[k].h for k in keys) + GAP_Y
    parts = []
    for a, row, b in edges:  # from the bottom of the source, spread by the row (the e-node) it leaves from
        src, dst = boxes[a], boxes[b]
        x1, y1 = src.x + src.w * (row + 0.5) / len(src.rows), src.y + src.h
        x2, y2 = dst.x + dst.w / 2, dst.y
        mid = (y1 + y2) / 2
        parts.append(f'<path d="M{x1:.0f},{y1:.0f} C{x1:.0f},{mid:.0f} {x2:.0f},{mid:.0f} {x2:.0f},{y2:.0f}" '
                     'fill="none" stroke="#888" marker-end="url(#arrow)"/>')
    for box in boxes.values():
        parts.append(f'<rect x="{box.x:.0f}" y="{box.y:.0f}" width="{box.w:.0f}" height="{box.h:.0f}" rx="4" '
                     f'fill="{box.fill}" stroke="#444"/>')
        for i, text in enumerate(box.rows):
            parts.append(f'<text x="{box.x + PAD:.0f}" y="{box.y + (i + 1) * ROW_H - 2:.0f}">{escape(text)}</text>')
    if note:
        parts.append(f'<text x="{PAD:.0f}" y="{ROW_H - 2:.0f}" fill="#a00">{escape(note)}</text>')
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{y:.0f}" font-family="monospace" font-size="12">'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">'
            '<path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>')
    return Picture(head + "".join(parts) + "</svg>")


def _shape(n: Node) -> str:
    return f"{n.dtype}[{','.join(map(str, n.shape))}]"


def program(comp: Compilation) -> Picture:
    """The extracted program's DAG, outputs on top; a value that ends a kernel shows that kernel's estimated time."""
    from .cost import TensorCostModel

    model = TensorCostModel(comp.options.target)
    costs: dict[int, Any] = {}
    boxes: dict[Hashable, _Box] = {}
    edges = []
    for n in topological(comp.outputs):
        try:
            costs[id(n)] = model.price(n.op, [costs[id(i)] for i in n.inputs], n)
        except Exception:  # (a priced op the model prices elsewhere, e.g. concat: no label)
            costs[id(n)] = None
        rows = [f"{n.op}" + (f" = {n.attrs[0]!r}" if n.op == "const" else ""), _shape(n)]
        c, below = costs[id(n)], [costs[id(i)] for i in n.inputs]
        if c is not None and c.buffer and n.op not in ("arg", "array", "const") and None not in below:
            own = c.done - sum(b.done for b in below)
            if own > 1.0:
                rows.append(f"kernel ~{own / 1e3:,.1f} µs")
        fill = "#e8f0ff" if n.op in ("arg", "array") else "#fff4d6" if len(rows) > 2 else "#ffffff"
        boxes[id(n)] = _Box(rows, fill)
        edges += [(id(n), 0, id(i)) for i in dict.fromkeys(n.inputs)]
    for n in comp.outputs:  # an output is stored: its pending kernel closes there
        c = costs.get(id(n))
        if c is not None and not c.buffer and len(boxes[id(n)].rows) == 2:
            boxes[id(n)].rows.append(f"kernel ~{(model.closed(c) - c.done) / 1e3:,.1f} µs")
            boxes[id(n)].fill = "#fff4d6"
    return _svg(boxes, edges, [id(n) for n in comp.outputs])


def _drawn(sort: str) -> bool:
    """Whether an e-class of this sort is drawn as a box (tensors, programs, their Vecs); others are
    written inside their e-node's label."""
    return sort.endswith((".Tensor", ".Program", ".Tensor]"))


def _label(nodes: dict[str, dict], node_id: str, classes: dict[str, dict], simplest: dict[str, str], depth: int = 0) -> str:
    """An e-node's text with its non-tensor children inlined (names, shapes, dtypes: each e-class's
    e-node with the fewest children, a literal before `dtype_of(x)`), tensor children as `·`."""
    node = nodes[node_id]
    op = node["op"]
    args = []
    for child in node["children"]:
        eclass = nodes[child]["eclass"]
        if _drawn(classes.get(eclass, {}).get("type", "")):
            args.append("·")
        else:
            args.append(_label(nodes, simplest[eclass], classes, simplest, depth + 1) if depth < 3 else "…")
    if "·" in op and args.count("·") == op.count("·"):
        return op
    text = op + (f"({', '.join(args)})" if args else "")
    return text if len(text) <= 48 else text[:47] + "…"


def egraph(data: dict, limit: int = 60) -> Picture:
    """The serialized e-graph (egglog's JSON) as boxes of e-classes, at most `limit` of them, nearest the root first."""
    nodes, classes = data["nodes"], data.get("class_data", {})
    drawn = {c for c, d in classes.items() if _drawn(d.get("type", ""))}
    members: dict[str, list[str]] = {}
    for node_id, node in nodes.items():
        members.setdefault(node["eclass"], []).append(node_id)
    simplest = {c: min(ids, key=lambda i: len(nodes[i]["children"])) for c, ids in members.items()}
    roots = [c for c in data.get("root_eclasses", []) if c in drawn] or [c for c in drawn if classes[c]["type"].endswith(".Program")]
    kept: list[str] = []
    queue = deque(roots)
    while queue and len(kept) < limit:
        c = queue.popleft()
        if c in kept:
            continue
        kept.append(c)
        queue.extend(nodes[ch]["eclass"] for n in members.get(c, []) for ch in nodes[n]["children"] if nodes[ch]["eclass"] in drawn)
    boxes = {c: _Box([_label(nodes, n, classes, simplest) for n in members[c]], "#fff4d6" if len(members[c]) > 1 else "#ffffff")
             for c in kept}
    edges = [(c, row, nodes[ch]["eclass"]) for c in kept for row, n in enumerate(members[c])
             for ch in dict.fromkeys(nodes[n]["children"]) if nodes[ch]["eclass"] in boxes]
    left = len(drawn) - len(kept)
    note = f"{left} of {len(drawn)} e-classes not drawn (limit={limit}, nearest the root kept)" if left else ""
    return _svg(boxes, edges, roots, note)


def rewritten_egraph(traced: Traced, limit: int = 60) -> Picture:
    """The e-graph of `traced` after the optimizer's rewriting (run again, on the egglog thread)."""
    from .optimize import rewritten

    data = rewritten(list(traced.outputs), traced.options.schedule(), lambda eg: eg._serialize().to_json(), traced.options.limits)
    return egraph(json.loads(data), limit)
