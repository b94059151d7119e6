"""The README stays true: its op table is the current coverage, its test command is CI's."""
from __future__ import annotations

from pathlib import Path

from hexnn_import.summary import markdown_op_table, op_coverage

ROOT = Path(__file__).resolve().parent.parent


def test_readme_op_table_is_current() -> None:
    assert markdown_op_table(op_coverage()) in (ROOT / "README.md").read_text(), \
        "regenerate the README's op table with `hexnn-import ops --markdown`"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    cmd = next(line.strip() for line in readme if line.strip().startswith("python3 -m pip") and "pytest" in line)
    assert cmd in (ROOT / ".ci" / "run").read_text()


def test_readme_quick_start_model_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    line = next(l for l in readme.splitlines() if l.startswith("python3 -m pip install . && hexnn-import"))
    assert (ROOT / line.split()[-1]).is_file()


def test_readme_and_docs_link_only_inside_the_repository() -> None:
    """A clone has no ../shared: every relative link of the README and docs/ resolves in the checkout."""
    import re

    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        assert "../shared" not in text, page
        for target in re.findall(r"\]\(([^)#]+)\)", text):
            if "://" not in target:
                assert (page.parent / target).exists(), (page.name, target)
