"""What a Python user expects of a package: licence, citation, changelog, typing marker,
``python -m causefs``, ``--version``, and optional extras that say when they are missing."""

import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import yaml

import causefs
from causefs import CauseFS
from causefs.core.extras import EXTRAS, MissingDependencyError, require

ROOT = Path(__file__).resolve().parents[1]


def test_licence_citation_and_changelog_agree_with_the_package():
    assert ROOT.joinpath("LICENSE").read_text().startswith("BSD 3-Clause License")
    assert 'license = { text = "BSD-3-Clause" }' in ROOT.joinpath("pyproject.toml").read_text()
    citation = yaml.safe_load(ROOT.joinpath("CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == causefs.__version__
    assert citation["license"] == "BSD-3-Clause"
    paper = citation["preferred-citation"]
    assert paper["title"] == "Causally-Aware Unsupervised Feature Selection Learning"
    assert [a["family-names"] for a in paper["authors"]][:2] == ["Shen", "Huang"]
    changelog = ROOT.joinpath("CHANGELOG.md").read_text()
    assert f"## {causefs.__version__}" in changelog


def test_the_package_is_typed():
    assert resources.files("causefs").joinpath("py.typed").is_file()


def test_python_m_causefs_is_the_command():
    out = subprocess.run([sys.executable, "-m", "causefs", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith(f"causefs {causefs.__version__} (source sha256 ")
    helped = subprocess.run([sys.executable, "-m", "causefs", "--help"], capture_output=True,
                            text=True, check=True).stdout
    assert "causefs: CAUSE-FS" in helped


def test_a_missing_extra_is_named():
    with pytest.raises(MissingDependencyError, match=r'the thing needs .no_such_module_x., '
                       r"which is not installed; the 'cvxpy' extra installs it: "
                       r'pip install "causefs\[cvxpy\]"'):
        require("no_such_module_x", "cvxpy", "the thing")
    assert set(EXTRAS) <= set(_extras_of_pyproject())


def test_only_the_missing_module_itself_is_reported_as_an_extra(tmp_path, monkeypatch):
    """A missing package or submodule names the extra; an installed module that fails to
    import, because of a dependency of its own or any other error, raises its own error."""
    with pytest.raises(MissingDependencyError, match="needs 'no_such_package_x.sub', which is not"):
        require("no_such_package_x.sub", "cvxpy", "the thing")  # the package is missing
    with pytest.raises(MissingDependencyError, match="needs 'json.no_such_sub', which is not"):
        require("json.no_such_sub", "cvxpy", "the thing")  # a submodule is missing
    monkeypatch.syspath_prepend(str(tmp_path))
    tmp_path.joinpath("causefs_needs_other.py").write_text("import no_such_dependency_y\n")
    tmp_path.joinpath("causefs_raises_unnamed.py").write_text(
        "raise ModuleNotFoundError('found nothing')\n")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_y") as raised:
        require("causefs_needs_other", "cvxpy", "the thing")
    assert not isinstance(raised.value, MissingDependencyError)
    with pytest.raises(ModuleNotFoundError, match="found nothing") as raised:
        require("causefs_raises_unnamed", "cvxpy", "the thing")
    assert not isinstance(raised.value, MissingDependencyError)
    assert require("json", "cvxpy", "the thing") is sys.modules["json"]


def _extras_of_pyproject():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["optional-dependencies"]


def test_a_fit_that_needs_cvxpy_says_which_extra(blobs, monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # import fails as when not installed
    with pytest.raises(MissingDependencyError, match=r'pip install "causefs\[cvxpy\]"'):
        CauseFS(n_clusters=3, max_iter=1, qp="cvxpy", memory_limit=None).fit(blobs[0])


def test_a_fresh_search_beyond_its_exact_limit_without_faiss_says_which_extra(monkeypatch):
    from causefs.numerics.neighbors import TREE_DIMS, fresh_exact_limit, nearest_candidates

    monkeypatch.setitem(sys.modules, "faiss", None)
    # 'auto' searches points of few dimensions with a k-d tree up to TREE_N: many here
    limit = fresh_exact_limit(TREE_DIMS + 1)
    Y = np.zeros((limit + 1, TREE_DIMS + 1))
    with pytest.raises(MissingDependencyError, match=rf"neighbour search of {limit + 1:,} "
                       rf"points of 33 dimensions .*beyond {limit:,} points.*'exact' does "
                       r"without.*causefs\[faiss\]"):
        nearest_candidates(Y, 3, "auto")
    assert nearest_candidates(Y[:limit], 3, "approximate").shape == (limit, 3)


def test_the_command_without_hydra_says_which_extra(monkeypatch, capsys):
    from causefs.app.commands import causefs as command

    monkeypatch.setitem(sys.modules, "hydra", None)
    assert command([]) == 2
    assert 'pip install "causefs[cli]"' in capsys.readouterr().err
    assert command(["--version"]) == 0  # needs only the core


def test_a_v73_mat_file_without_h5py_says_which_extra(tmp_path, monkeypatch):
    from causefs.datasets import load_file

    path = tmp_path / "v73.mat"
    path.write_bytes(b"MATLAB 7.3 MAT-file".ljust(512, b" ") + b"\x89HDF\r\n\x1a\n" + bytes(64))
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(MissingDependencyError, match=r'causefs\[mat73\]'):
        load_file(path)


def test_report_figures_without_matplotlib_say_which_extra(tmp_path, monkeypatch):
    from causefs.app.report import figures

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"--no-figures does without.*causefs\[cli\]"):
        figures([], {}, tmp_path)


def test_the_core_install_imports_and_fits_without_the_extras():
    """The estimator's import and a default fit below n = 5000 load no optional module."""
    code = ("import sys; from causefs import CauseFS; import numpy as np; "
            "rng = np.random.default_rng(0); X = rng.random((60, 8)); "
            "CauseFS(n_clusters=3, max_iter=2).fit(X); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'hydra', 'omegaconf', 'faiss', 'cvxpy', 'h5py', 'matplotlib'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
