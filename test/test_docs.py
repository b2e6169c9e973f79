"""The docs hold together: every file README.md names under docs/ and every relative link of
README.md and docs/*.md exists, and docs/architecture.md states the layer order
test_architecture.py enforces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_architecture import LAYERS

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = [target for target in LINK.findall(page.read_text(encoding="utf-8"))
               if "://" not in target and not (page.parent / target).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


def test_every_docs_file_the_readme_names_exists():
    named = set(re.findall(r"docs/[\w.-]+\.\w+", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert named, "README.md names no file under docs/"
    assert not [n for n in sorted(named) if not (ROOT / n).exists()]


def test_architecture_states_the_layer_order_the_test_enforces():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    stated = [line.strip().split(" · ") for line in text.splitlines()
              if line.strip().startswith("root · ")]
    assert stated == [list(LAYERS)], f"docs/architecture.md's layer line is not {' · '.join(LAYERS)}"
