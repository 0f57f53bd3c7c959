"""Draw docs/images/rich-display.png: softmax's compilation as a notebook shows it (`comp` as a cell's
last line: the summary, then each stage collapsible; the linalg stage opened), rendered by a headless
Chromium (Debian's `chromium` package; not a project dependency: the picture is made once, by hand).

    python docs/images/rich_display.py [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import egglog_tensor as et

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: "DejaVu Sans", sans-serif; margin: 16px; background: #fff; }}
.cell {{ border-left: 4px solid #3b7ddd; padding: 4px 12px; }}
.in {{ font-family: "DejaVu Sans Mono", monospace; font-size: 13px; background: #f5f5f5; padding: 8px; margin-bottom: 8px; }}
pre {{ font-size: 12px; margin: 4px 0; }}
summary {{ font-family: "DejaVu Sans Mono", monospace; font-size: 13px; cursor: pointer; color: #333; }}
</style></head><body><div class="cell"><div class="in">{source}</div>{display}</div></body></html>"""

SOURCE = """@et.kernel
def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)

softmax.inspect(x)   # x: 512x256 float32"""


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", default=str(Path(__file__).with_name("rich-display.png")))
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((512, 256), dtype=np.float32)
    display = et.kernel(softmax).inspect(x)._repr_html_().replace("<details><summary>linalg<", "<details open><summary>linalg<", 1)
    source = SOURCE.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>").replace("  ", "&nbsp;&nbsp;")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "display.html"
        page.write_text(PAGE.format(source=source, display=display))
        subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp}/profile", "--hide-scrollbars", "--window-size=1100,1500",
                        f"--screenshot={args.out}", page.as_uri()], check=True, capture_output=True, timeout=120)
    print(args.out)


if __name__ == "__main__":
    main()
