"""comp.draw() and traced.draw_egraph(): SVG pictures of the extracted program and of the e-graph."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

import egglog_tensor as et
from egglog_tensor.graph import topological

SVG = "{http://www.w3.org/2000/svg}"


def _parsed(picture) -> ET.Element:
    root = ET.fromstring(picture._repr_svg_())  # well-formed XML, as a notebook needs
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > 0
    return root


def _texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}text")]


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_program_dag_has_a_box_per_value_and_kernel_times():
    comp = et.kernel(lambda x, b: x * np.tanh(b) + np.exp(b), target="cpu").inspect(np.ones((256, 512), np.float32), np.ones(512, np.float32))
    root = _parsed(comp.draw())
    nodes = topological(comp.outputs)
    assert len(list(root.iter(f"{SVG}rect"))) == len(nodes)
    assert len(list(root.iter(f"{SVG}path"))) - 1 == sum(len(set(map(id, n.inputs))) for n in nodes)  # (one path is the arrow head)
    texts = _texts(root)
    assert texts.count("materialize") == 2 and "float32[256,512]" in texts
    kernels = [t for t in texts if t.startswith("kernel ~")]
    assert len(kernels) == 3  # tanh(b), exp(b) materialized, and the output's loop


def test_the_egraph_lists_each_eclass_alternatives_and_says_what_it_left_out():
    traced = et.kernel(softmax).trace(np.ones((64, 32), np.float32))
    root = _parsed(traced.draw_egraph(limit=1000))
    texts = _texts(root)
    assert any(t.startswith("Tensor.arg(\"x\"") for t in texts) and "materialize(·)" in texts
    assert not any("not drawn" in t for t in texts)
    cut = _texts(_parsed(traced.draw_egraph(limit=3)))
    assert cut[-1].endswith("e-classes not drawn (limit=3, nearest the root kept)") and len(cut) < len(texts)
