"""Syntax colour for stage texts: a small MLIR lexer (Pygments has none) beside Pygments' LLVM and
assembly lexers, for the terminal (`python -m egglog_tensor inspect`) and notebooks (HTML)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from pygments import highlight as _pygmentize
from pygments.formatters import HtmlFormatter, TerminalFormatter
from pygments.lexer import Lexer, RegexLexer, bygroups
from pygments.lexers import GasLexer, LlvmLexer, PythonLexer, TextLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace


class MlirLexer(RegexLexer):
    """MLIR's generic and custom assembly: SSA values, symbols, attribute and type aliases, dialect ops, types."""

    name = "MLIR"
    aliases = ["mlir"]
    filenames = ["*.mlir"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"%[\w$.#-]+(:\d+)?", Name.Variable),  # SSA values (and result groups %0:2)
            (r"\^[\w$.-]+", Name.Label),  # block labels
            (r"@[\w$.-]+", Name.Function),  # symbols
            (r"#[\w$.-]+", Name.Constant),  # attribute aliases and dialect attributes
            (r"![\w$.-]+", Keyword.Type),  # type aliases and dialect types
            (r"\b((\d+|\?)x)+([iuf]\d+|bf16|index)?", Keyword.Type),  # a shaped type's shape and element type: 64x?xf32
            (r"\b(memref|tensor|vector|index|[iuf]\d+|bf16|tf32|none|complex)\b", Keyword.Type),
            (r"\b([a-z_]\w*)(\.)([\w.]+)", bygroups(Name.Namespace, Punctuation, Name.Builtin)),  # dialect.op
            (r"\b(affine_map|affine_set|dense|array|loc|true|false|unit|attributes|ins|outs|to|step|iter_args|in)\b", Keyword),
            (r"0x[0-9a-fA-F]+|[-+]?\d+\.\d*([eE][-+]?\d+)?|[-+]?\d+([eE][-+]?\d+)?", Number),
            (r"->|=|\*|\+|-", Operator),
            (r"[(){}\[\]<>,:?]", Punctuation),
            (r"\w+", Text),
            (r".", Text),
        ]
    }


def lexer_for(stage: str) -> Lexer:
    """The lexer of a stage's text, by the stage's name (egglog_tensor/compiler.py's stage names)."""
    if stage in ("traced", "extracted"):
        return PythonLexer()  # egglog-python terms read as Python expressions
    if stage in ("optimizer", "provenance"):
        return TextLexer()
    if stage.startswith("llvm-ir"):
        return LlvmLexer()
    if stage == "asm":
        return GasLexer()
    return MlirLexer()


def terminal(text: str, stage: str) -> str:
    """The text with ANSI colours, for a terminal."""
    return _pygmentize(text, lexer_for(stage), TerminalFormatter())


HTML_BUDGET = 600_000  # characters of highlighted HTML per display; stages past it are shown plain, to keep notebooks light
_CSS = "et-hl"


def style() -> str:
    """The <style> block `html` output needs, once per display."""
    return f"<style>{HtmlFormatter(nobackground=True).get_style_defs('.' + _CSS)}</style>"


def html(text: str, stage: str) -> str:
    """The text as HTML highlighted with CSS classes (scoped to `.et-hl`: put `style()` beside it)."""
    return _pygmentize(text, lexer_for(stage), HtmlFormatter(cssclass=_CSS, nobackground=True))


def stages_html(texts: Mapping[str, str]) -> str:
    """Each stage collapsible, highlighted until HTML_BUDGET is spent and plain after it."""
    parts, spent = [style()], 0
    for name, text in texts.items():
        body = html(text, name) if spent < HTML_BUDGET else f'<div class="{_CSS}"><pre>{escape(text)}</pre></div>'
        spent += len(body)
        parts.append(f"<details><summary>{escape(name)}</summary>{body}</details>")
    return "\n".join(parts)
