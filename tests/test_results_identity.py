"""Results that say what produced them: the code's identity and the installed plugins in
the store key and result.json, and result.json against its documented schema."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import resources

import numpy as np
import pytest
from hydra import compose, initialize_config_module

import causefs.app.cli as cli
from causefs.app import provenance
from causefs.app.configs import register_configs
from causefs.app.store import SCHEMA_VERSION

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

jsonschema = pytest.importorskip("jsonschema")

register_configs()
SCHEMA = json.loads(resources.files("causefs.app").joinpath("result.schema.json").read_text())
FAST = ["evaluation.n_runs=2", "n_features_to_select=4", "evaluation.rhos=[4]"]


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _run(tmp_path, *overrides):
    cfg = composed(*FAST, "store.enabled=true", f"store.dir={tmp_path / 'store'}", *overrides)
    return cli.run(cfg, output_dir=tmp_path / "run")


# -- the code's identity -----------------------------------------------------------------

def test_source_hash_sees_every_source_edit_and_nothing_else(tmp_path):
    copy = tmp_path / "causefs"
    shutil.copytree(provenance.package_root(), copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    first = provenance.source_sha256(copy)
    assert first == provenance.source_sha256(provenance.package_root())  # same files
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (copy / "notes.txt").write_text("not code")
    assert provenance.source_sha256.__wrapped__(copy) == first
    engine = copy / "engine.py"
    engine.write_text(engine.read_text() + "\n# a comment is an edit\n")
    assert provenance.source_sha256.__wrapped__(copy) != first
    (copy / "conf" / "schedule" / "full.yaml").write_text("name: full\n")
    assert provenance.source_sha256.__wrapped__(copy) not in (first,)


def test_a_resumed_job_after_a_code_update_is_computed_again(tmp_path, capsys, monkeypatch):
    first = _run(tmp_path, "method=laplacian_score")
    assert first["job"]["code"] == provenance.code_identity()
    assert _run(tmp_path, "method=laplacian_score")["key"] == first["key"]
    assert "already in" in capsys.readouterr().out
    updated = {**provenance.code_identity(), "source_sha256": "f" * 64}
    monkeypatch.setattr(cli, "code_identity", lambda: updated)
    second = _run(tmp_path, "method=laplacian_score")
    assert "skipped" not in capsys.readouterr().out and second["key"] != first["key"]
    plugin = {**provenance.code_identity(), "plugins": {"some-plugin": "1.0"}}
    monkeypatch.setattr(cli, "code_identity", lambda: plugin)
    assert _run(tmp_path, "method=laplacian_score")["key"] not in (first["key"], second["key"])


def _fake_plugin(root, version):
    """A plugin distribution installed into ``root``: a module and its dist-info."""
    (root / "fakeplugin_mod.py").write_text(textwrap.dedent("""
        from causefs.plugins import hookimpl

        @hookimpl
        def causefs_register_blocks(registry):
            pass
        """))
    info = root / f"causefs_fake_plugin-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: causefs-fake-plugin\n"
                                   f"Version: {version}\n")
    (info / "entry_points.txt").write_text("[causefs]\nfake = fakeplugin_mod\n")


@pytest.mark.parametrize("version", ["1.2.3", "2.0"])
def test_installed_plugins_and_their_versions_are_the_codes_identity(tmp_path, version):
    _fake_plugin(tmp_path, version)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("CAUSEFS_DISABLE_PLUGIN_AUTOLOAD", None)
    code = subprocess.run(
        [sys.executable, "-c", "import json; from causefs.app.provenance import code_identity; "
         "print(json.dumps(code_identity()))"], capture_output=True, text=True, env=env,
        check=True)
    assert json.loads(code.stdout)["plugins"]["causefs-fake-plugin"] == version
    shown = subprocess.run([sys.executable, "-m", "causefs", "--version"], capture_output=True,
                           text=True, env=env, check=True).stdout
    assert shown.startswith(f"causefs {provenance.__version__} (source sha256 ")
    assert f"plugin causefs-fake-plugin {version}" in shown


# -- result.json against its schema ------------------------------------------------------

def _validate(result):
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(json.dumps(result)))


@pytest.mark.parametrize("overrides", [
    ["method.max_iter=2"],                                               # CAUSE-FS on digits
    ["method=mcfs", "dataset=synthetic", "dataset.n_samples=80", "dataset.n_features=12",
     "dataset.n_causal=3", "dataset.n_spurious=3"],                      # causal recovery
    ["method=laplacian_score", "dataset=shifted_clusters", "dataset.n_train=80",
     "dataset.n_test=60",
     "evaluation.all_features=false"],                                   # a test environment
    ["method=all_features", "evaluation.enabled=false"],                 # no metrics
])
def test_result_json_is_what_its_schema_documents(tmp_path, overrides):
    result = _run(tmp_path, *overrides)
    _validate(result)
    written = json.loads((tmp_path / "run" / "result.json").read_text())
    _validate(written)
    stored = json.loads((tmp_path / "store" / f"{result['key']}.json").read_text())
    _validate(stored)
    assert written["schema"] == stored["schema"] == SCHEMA_VERSION
    assert SCHEMA["properties"]["schema"]["const"] == SCHEMA_VERSION
    order = np.argsort(-np.asarray(result["scores"]), kind="stable")
    assert result["features_best_first"] == order.tolist()
    assert result["selected_features"] == order[:4].tolist()
    if result["job"]["method"] == "causefs":
        jsonschema.validate(result["details"], {**SCHEMA["$defs"]["causefs_details"],
                                                "$defs": SCHEMA["$defs"]})
        # the settings the fit ran with, and the objective's terms with their weights
        assert result["details"]["settings"]["max_iter"] == 2
        assert result["details"]["settings"]["schedule"] == {"name": "auto"}
        assert result["details"]["schedule"] == "ablation_I"  # auto without Z
        assert result["details"]["selection_frequency"] is None  # not asked for
        assert result["details"]["nuisance_share"] is None  # no Z
        assert [t["name"] for t in result["details"]["terms"]] == [
            "regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion"]
        assert result["details"]["terms"][0] == {"name": "regression", "alpha": 1.0}


@pytest.mark.parametrize("change", [
    lambda r: r.update(ranking=r["features_best_first"]),        # an undocumented field
    lambda r: r.pop("features_best_first"),                      # a documented one missing
    lambda r: r["job"].pop("code"),                              # no code identity
    lambda r: r["job"]["code"].pop("plugins"),
    lambda r: r["metrics"]["selected"]["4"].pop("n_runs"),
])
def test_the_schema_check_can_fail(tmp_path, change):
    result = json.loads(json.dumps(_run(tmp_path, "method=laplacian_score")))
    change(result)
    with pytest.raises(jsonschema.ValidationError):
        _validate(result)
