"""The README stays true: its op table is the current coverage, its test command is CI's."""
from __future__ import annotations

from pathlib import Path

import numpy as np

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


def test_readme_python_api_runs_from_the_repository_root(tmp_path: Path) -> None:
    """The README's Python API example, run from the root, where a checkout's ``hexnn_import/`` shadows the
    installed package (issue 21): ``-S`` drops every installed path hook (an editable install's too), so only
    the root folder and the dependencies' site-packages are on the path."""
    import re
    import site
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    code = re.search(r"## Python API\n\n```python\n(.*?)```", (root / "README.md").read_text(), re.S).group(1)
    code = code.replace('"g.hexnn.json"', repr(str(tmp_path / "g.hexnn.json")))  # not into the checkout
    deps = [p for p in site.getsitepackages() if Path(p, "numpy").is_dir()]
    env = {"PYTHONPATH": ":".join(deps), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-S", "-c", code + "\nprint(sorted(out))"], cwd=root, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("['logits']")


def readme_python_blocks() -> list[str]:
    """Every ```python block of the README, as written."""
    import re

    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_python_blocks_run_verbatim_from_any_folder(tmp_path: Path) -> None:
    """Issue 34 finding 2: each Python block of the README runs exactly as written, with the installed package,
    from a folder that is not the checkout (the bundled models come from ``hx.example_file``); the first block
    prints the float model's output names, the second the requantized codes, which are worked by hand here:
    accumulators -2^20, 0, 2^20, 2^30 on [-64, 64) are -1/32, 0, 1/32 and 32 (clamped to 1) in real units,
    quint8 codes of [-1, 1], which hexagon_nn widens to [-1, 128/127] so that 0 is a code (127; step 1/127)."""
    import subprocess
    import sys

    blocks = readme_python_blocks()
    assert len(blocks) == 2, "the README's Python blocks changed: keep this test's expectations with them"
    outs = []
    for code in blocks:
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        outs.append(out.stdout.strip())
    assert outs[0] == "['logits']"
    want = [round(127 + 127 * v) for v in (-1 / 32, 0.0, 1 / 32)] + [255]
    assert outs[1] == str(np.array([want], np.uint8)), outs[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.hexnn.json"]  # the one file the example writes
