"""Every code block of the README and of the documentation runs, so the examples cannot rot.

Blocks are found in ``README.md`` and the site's Markdown and reStructuredText pages
(fenced blocks; ``.. code-block::`` directives). Python blocks of one page run in order in
one interpreter; every shell block runs in ``bash -e`` in a workspace that holds a small
CSV file with a label column (``mine.csv``) and a small real results store
(``results/store``) and a link to ``examples/``, so that commands naming them run as
written from the repository's root. A comment just before a
block says how it runs when not as written (``<!-- docs-test: MODE -->`` in Markdown,
``.. docs-test: MODE`` in reStructuredText):

* ``dry-run``: each ``causefs`` command gets ``dry_run=true``: every job of it is
  composed, checked against its data and planned, nothing is fitted (documented sweeps
  run for hours);
* ``parse``: each ``python script ...`` command is checked by the script's own argument
  parser, which exits before the script runs (benchmarks of hours); ``export`` lines run,
  other commands of the block (git, pip) do not;
* ``console``: ``$ command`` lines run, and each line shown below one must appear in what
  it printed;
* ``skip (reason)``: not run, for the reason given (installing packages, a cluster, the
  internet).

A mode followed by ``slow`` marks the block's test slow (a dry run of sweeps of hundreds
of jobs: Hydra composes every job's configuration, about 0.3 s each); ``.ci/run`` runs
them after the suite.

Blocks in other languages (``text``, ``toml``) are not code to run. Blocks that read the
paper's benchmark files skip without ``$CAUSEFS_DATA``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"),
                *(ROOT / "docs").rglob("*.rst"),
                ROOT / "examples" / "causefs-example-plugin" / "README.md"])
PAGES = [p for p in PAGES if not {"_build", "generated", "_generated", "auto_examples"}
         & set(p.relative_to(ROOT).parts)]
RUNNABLE = {"python", "bash", "console"}
BENCHMARK_NAMES = re.compile(r"\b(jaffe|umist|coil20|usps)\b|\+experiment=")
#: Python that runs a script's argument parser on a command line and stops there
PARSE_ONLY = ("import argparse, os, runpy, sys\n"
              "parse = argparse.ArgumentParser.parse_args\n"
              "def stop(self, *a, **k):\n"
              "    parse(self, *a, **k)\n"
              "    raise SystemExit(0)\n"
              "argparse.ArgumentParser.parse_args = stop\n"
              "sys.argv = sys.argv[1:]\n"
              "sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as python script.py\n"
              "runpy.run_path(sys.argv[0], run_name='__main__')\n")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    mode: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _marker(lines: list, index: int, pattern: str) -> str:
    """The docs-test mode written on the last non-blank line before ``index``."""
    for previous in reversed(lines[:index]):
        if previous.strip():
            found = re.match(pattern, previous.strip())
            return found.group(1).strip() if found else "run"
    return "run"


def _markdown_blocks(page: Path) -> list:
    lines, blocks, index = page.read_text().splitlines(), [], 0
    while index < len(lines):
        opening = re.match(r"^```(\w*)", lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        mode = _marker(lines, index, r"<!-- docs-test: (.*) -->")
        blocks.append(Block(page, index + 1, opening.group(1), mode,
                            "\n".join(lines[index + 1:end]) + "\n"))
        index = end + 1
    return blocks


def _rst_blocks(page: Path) -> list:
    lines, blocks = page.read_text().splitlines(), []
    for index, line in enumerate(lines):
        opening = re.match(r"^\.\. code-block:: (\w+)", line)
        if not opening:
            continue
        body = []
        for following in lines[index + 1:]:
            if following.strip() and not following.startswith("   "):
                break
            body.append(following[3:])
        mode = _marker(lines, index, r"\.\. docs-test: (.*)")
        blocks.append(Block(page, index + 1, opening.group(1), mode, "\n".join(body) + "\n"))
    return blocks


def blocks_of(page: Path) -> list:
    found = _rst_blocks(page) if page.suffix == ".rst" else _markdown_blocks(page)
    return [b for b in found if b.language in RUNNABLE]


ALL = [block for page in PAGES for block in blocks_of(page)]
SHELL = [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if "slow" in b.mode.split() else [])
         for b in ALL if b.language != "python" and not b.mode.startswith("skip")]
PYTHON_PAGES = sorted({b.page for b in ALL if b.language == "python"})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A directory with ``mine.csv`` and a small results store, and the environment the
    commands run in (this interpreter's scripts first on PATH)."""
    root = tmp_path_factory.mktemp("workspace")
    rng = np.random.default_rng(0)
    # more features than the command's default n_features_to_select (20)
    table = np.column_stack([rng.random((60, 30)), np.repeat([0, 1, 2], 20)])
    header = ",".join([f"x{j}" for j in range(30)] + ["label"])
    np.savetxt(root / "mine.csv", table, delimiter=",", header=header, comments="",
               fmt="%.6g")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "XDG_CACHE_HOME": str(root / "cache")}
    env.pop("HYDRA_FULL_ERROR", None)
    (root / "examples").symlink_to(ROOT / "examples")  # paths as from the repository's root
    _small_store(root / "results" / "store")
    return root, env


def _small_store(store: Path) -> None:
    """Two real results (Laplacian score and AllFea on small synthetic data)."""
    import contextlib
    import io

    from hydra import compose, initialize_config_module

    from causefs.app.cli import run
    from causefs.app.configs import register_configs

    register_configs()
    for method in ("laplacian_score", "all_features"):
        with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
            cfg = compose(config_name="config", overrides=[
                f"method={method}", "dataset=synthetic", "dataset.n_samples=80",
                "dataset.n_features=20", "evaluation.n_runs=2", "evaluation.rhos=[10]",
                "n_features_to_select=10", "store.enabled=true", f"store.dir={store}"])
        with contextlib.redirect_stdout(io.StringIO()):
            run(cfg, output_dir=store.parent / method)


def _dry_run(command: str) -> str:
    words = shlex.split(command, comments=True)
    if words and words[0] == "causefs":
        words.append("dry_run=true")
    return shlex.join(words)


def _parse_only(command: str) -> str:
    """A ``python script ...`` command checked by the script's parser; ``export`` lines
    as they are; other commands (git, pip) are not run."""
    words = shlex.split(command, comments=True)
    if words[:2] == ["nice", "-n"]:
        words = words[3:]
    if words[:1] == ["python"] and len(words) > 1 and words[1].endswith(".py"):
        return shlex.join([sys.executable, "-c", PARSE_ONLY, str(ROOT / words[1]),
                           *words[2:]])
    return command if words[:1] == ["export"] else ":"


def _lines(code: str) -> list:
    """Commands of a shell block, a line continued by ``\\`` joined to the next."""
    return [line for line in code.replace("\\\n", " ").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _needs_benchmarks(block: Block) -> bool:
    return bool(BENCHMARK_NAMES.search(block.code)) and not os.environ.get("CAUSEFS_DATA")


#: seconds a block may take; a slow block's dry runs of the packaged sweeps compose
#: Hydra's configuration once per job (the paper grid alone has 294): the six of
#: docs/guide/cli.md took over 900 s on a 2-core AMD EPYC without AVX-512 (2026-11-29),
#: where an earlier machine took well under it. CI has 90 minutes.
BLOCK_TIMEOUT, SLOW_BLOCK_TIMEOUT = 900, 2700


def _run(command: str, root: Path, env: dict,
         timeout: float = BLOCK_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=root,
                          env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("block", SHELL)
def test_shell_block_runs(block, workspace):
    root, env = workspace
    if _needs_benchmarks(block):
        pytest.skip("reads the benchmark files: set CAUSEFS_DATA")
    if block.mode == "console":
        _check_console(block, root, env)
        return
    mode = block.mode.split()[0]
    transform = {"run": lambda line: line, "dry-run": _dry_run, "parse": _parse_only}.get(mode)
    assert transform is not None, f"{block.id}: unknown docs-test mode {block.mode!r}"
    script = "\n".join(transform(line) for line in _lines(block.code))
    done = _run(script, root, env, SLOW_BLOCK_TIMEOUT if "slow" in block.mode.split()
                else BLOCK_TIMEOUT)
    assert done.returncode == 0, \
        f"{block.id}:\n{script}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def _check_console(block: Block, root: Path, env: dict) -> None:
    """``$ command`` lines run; the lines shown after one appear in its output."""
    command, expected = None, []
    for line in block.code.splitlines() + ["$ "]:
        if line.startswith("$ "):
            if command:
                done = _run(command, root, env)
                printed = [text.strip() for text in (done.stdout + done.stderr).splitlines()]
                for want in expected:
                    assert want.strip() in printed, f"{block.id}: `{command}` printed\n" \
                        f"{done.stdout}{done.stderr}\nnot:\n{want}"
            command, expected = line[2:].strip(), []
        elif line.strip():
            expected.append(line)


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[str(p.relative_to(ROOT)) for p in
                                                    PYTHON_PAGES])
def test_python_blocks_of_a_page_run_in_order(page, workspace):
    root, env = workspace
    code = "\n".join(b.code for b in ALL if b.page == page and b.language == "python"
                     and not b.mode.startswith("skip"))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    assert done.returncode == 0, f"{page.name}:\n{done.stderr[-3000:]}"


def test_every_page_with_code_is_tested():
    """The collection sees the README and the guide; a new page cannot slip past."""
    tested = {b.page.name for b in ALL}
    assert {"README.md", "cli.md", "selector.md", "datasets.md", "plugins.md",
            "sparse.md", "ERRORS.md"} <= tested
    assert ROOT / "examples" / "causefs-example-plugin" / "README.md" in {b.page for b in ALL}
    assert all(b.mode.split()[0] in {"run", "dry-run", "parse", "console", "skip"}
               for b in ALL), [b.mode for b in ALL]
