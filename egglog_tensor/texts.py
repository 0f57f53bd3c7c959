"""The texts of a compilation's stages, by name, made when first read.

A compile prints only what it needs (the linalg MLIR, the LLVM dialect, the LLVM IR): the MLIR
after each lowering stage and the assembly are made when `inspect` first reads one of them, by
running those stages again printed (the stages are deterministic) or generating the assembly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

Remake = Callable[[], Mapping[str, str]]  # the texts it makes, by stage name


class StageTexts(Mapping[str, str]):
    """Stage name -> text, in compilation order; a text not made yet (None) comes from `remake[name]()`,
    which may fill several (one printed run of the pipeline makes every MLIR stage's)."""

    def __init__(self, texts: Iterable[tuple[str, str | None]], remake: Mapping[str, Remake] | None = None) -> None:
        self._texts = dict(texts)
        self._remake = dict(remake or {})
        unmade = [name for name, text in self._texts.items() if text is None and name not in self._remake]
        if unmade:
            raise ValueError(f"no way to make the text of stage(s) {', '.join(unmade)}")

    def __getitem__(self, name: str) -> str:
        text = self._texts[name]
        if text is None:
            made = self._remake[name]()
            self._texts.update((k, v) for k, v in made.items() if self._texts.get(k, "") is None)
            text = self._texts[name]
            assert text is not None, f"remaking stage {name!r} did not make its text"
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def plus(self, texts: Iterable[tuple[str, str | None]], remake: Mapping[str, Remake] | None = None) -> StageTexts:
        """These texts followed by `texts` (their unmade ones from `remake`), without making any."""
        return StageTexts([*self._texts.items(), *texts], {**self._remake, **(remake or {})})

    def made(self) -> dict[str, str | None]:
        """Every stage's text made so far (None: not made): what the compilation cache stores."""
        return dict(self._texts)
