"""A compilation as a notebook shows it (`Compilation._repr_html_`): a heading, a table of the costs and
times, a table of the rules that fired, the extracted program drawn as a DAG, the explanation, the full
text summary, then every stage collapsible and highlighted (highlight.py)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from . import highlight
from .measure import time_text

if TYPE_CHECKING:
    from .compiler import Compilation

SHOWN_RULES = 8  # rules per ruleset in the table (the text summary lists them all by count)
RULE_CHARS = 110  # a rule's text past this is cut in the table (the whole text in its tooltip)

_CSS = """<style>
.et-table { border-collapse: collapse; margin: 4px 0 8px 0; font-size: 12px; }
.et-table th, .et-table td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
.et-table th { background: #f3f3f3; } .et-table td.n { text-align: right; font-variant-numeric: tabular-nums; }
</style>"""


def html(comp: Compilation) -> str:
    """The rich display of `comp` (module docstring)."""
    summary = comp.summary()
    parts = [_CSS, f"<p><b>{escape(summary.splitlines()[0])}</b> &middot; {escape(comp.options.target.label)}, "
                   f"fastmath={escape(str(comp.options.fastmath))}</p>", _facts(comp), _rules(comp)]
    parts.append(_part("program (estimated time of each kernel)", comp.draw().svg, opened=True))
    parts.append(_part("why: what the optimizer and the lowering decided", f"<pre>{escape(comp.explain())}</pre>"))
    parts.append(_part("summary (text)", f"<pre>{escape(summary)}</pre>"))
    parts.append(highlight.stages_html(comp.texts))
    return "\n".join(parts)


def _part(title: str, body: str, opened: bool = False) -> str:
    return f'<details class="et-part"{" open" if opened else ""}><summary><b>{escape(title)}</b></summary>{body}</details>'


def _facts(comp: Compilation) -> str:
    """Costs, the optimizer's run, the measured time (when measured), the cache and the compile stages' times."""
    report = comp.report
    rows = [("estimated cost", f"{time_text(report.cost_before)} traced &rarr; <b>{time_text(report.cost_after)}</b> extracted"),
            ("optimizer", escape(f"{report.iterations} iteration(s), stopped: {report.stop_reason}, {report.enodes:,} e-nodes, "
                                 f"{report.seconds * 1e3:.0f} ms"))]
    if comp.timing is not None:
        rows.append(("measured", escape(str(comp.timing))))
    rows.append(("cache", escape(str(comp.cache))))
    rows.append(("compile time", escape(", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in comp.timings.items()))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="et-table">{body}</table>'


def _rules(comp: Compilation) -> str:
    """Each ruleset's most matched rules with their counts, and how many more."""
    rows = []
    for rs in comp.report.rulesets:
        shown, rest = rs.matches[:SHOWN_RULES], rs.matches[SHOWN_RULES:]
        for i, (rule, n) in enumerate(shown):
            head = f'<td rowspan="{len(shown) + bool(rest)}">{escape(rs.name)}</td>' if i == 0 else ""
            flat = " ".join(rule.split())
            cut = flat if len(flat) <= RULE_CHARS else flat[:RULE_CHARS] + " ..."
            rows.append(f'<tr>{head}<td class="n">{n}</td><td title="{escape(flat)}"><code>{escape(cut)}</code></td></tr>')
        if rest:
            rows.append(f'<tr><td class="n">{sum(n for _, n in rest)}</td><td>{len(rest)} more rule(s)</td></tr>')
    if not rows:
        return "<p>no rule matched</p>"
    return f'<table class="et-table"><tr><th>ruleset</th><th>matches</th><th>rule</th></tr>{"".join(rows)}</table>'
