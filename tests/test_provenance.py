"""The provenance stage: each emitted op with the user's source lines, through rewriting."""

from __future__ import annotations

import inspect

import numpy as np

import egglog_tensor as et
from egglog_tensor.graph import Builder
from egglog_tensor.provenance import located


def layer(x, b):
    y = x * np.tanh(b)
    z = y + np.exp(b)
    return np.maximum(z, 0.0)


def chain(A, B, v):
    return (A @ B) @ v


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_each_op_names_the_line_that_made_it():
    comp = et.kernel(layer, target="cpu").inspect(np.ones((64, 32), np.float32), np.ones(32, np.float32))
    assert comp.stages[comp.stages.index("linalg") + 1] == "provenance"
    text = comp.stage("provenance")
    tanh, out = _line(layer, "np.tanh"), _line(layer, "np.maximum")
    assert f"linalg.generic           <- test_provenance.py:{tanh}: y = x * np.tanh(b)\n" in text  # tanh(b), materialized
    # the output's loop: its inputs were rewritten (tanh(b) and exp(b) materialized), so the optimizer made it anew
    assert text.endswith(f"linalg.generic           <- test_provenance.py:{out}: return np.maximum(z, 0.0) [rewritten by the optimizer]")
    assert "(no source line)" not in text


def test_a_reordered_product_keeps_its_line():
    v = np.ones(64, np.float32)
    comp = et.kernel(chain, target="cpu", fastmath=True).inspect(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32), v)
    rows = [r for r in comp.stage("provenance").splitlines() if r.startswith("linalg.matvec")]
    assert len(rows) == 2 and all(f":{_line(chain, '@')}: return (A @ B) @ v [rewritten by the optimizer]" in r for r in rows)


def test_located_matches_through_rewriting():
    b = Builder()
    x = b.make("arg", (), ("x", (4,), "float32", "C"))
    e = b.make("exp", (x,))
    out = b.make("add", (e, e))
    where = located([out], {e: ("f.py", 2), out: ("f.py", 3)}, [b.make("add", (b.make("materialize", (e,)), e))])
    by_op = {w.rewritten: w.lines for w in where.values()}
    assert sorted(by_op[False]) == [("f.py", 2)]  # x and exp: as traced (x takes its reader's line)
    assert by_op[True] == frozenset({("f.py", 2), ("f.py", 3)}) or by_op[True] == frozenset({("f.py", 3)})
