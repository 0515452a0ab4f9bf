"""Sphinx configuration of the causefs documentation.

Build (from the repository root, with ``pip install ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python .ci/check_links.py docs/_build/html

The API reference is generated from the docstrings (autosummary + numpydoc), the gallery
from ``examples/gallery`` (sphinx-gallery runs every example while building), and two
tables of the user guide from the code itself (:func:`generate_tables`): the fields of
``result.json`` from its JSON Schema and the benchmark datasets from
``causefs.datasets.BENCHMARKS``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import causefs
from causefs.model import treatments
from causefs.numerics import anchors, neighbors

ROOT = Path(__file__).resolve().parent
GENERATED = ROOT / "_generated"

project = "causefs"
author = "the causefs developers"
copyright = "2026, the causefs developers"
release = version = causefs.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "**/*.codeobj.json",
                    # what benchmarks/make_results.py writes beside the committed figures
                    "results/runs", "results/tables.md"]
templates_path = ["_templates"]

# the Markdown pages (MODEL.md, ERRORS.md, ...) link to each other and to headings
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "substitution"]
# constants the pages quote, read from the code (a page never restates them)
myst_substitutions = {
    "FRESH_EXACT_N": f"{neighbors.FRESH_EXACT_N:,}",
    "FRESH_EXACT_MAX": f"{neighbors.FRESH_EXACT_MAX:,}",
    "FRESH_EXACT_DIMS": f"{neighbors.FRESH_EXACT_DIMS:,}", "EXACT_N": f"{neighbors.EXACT_N:,}",
    "TREE_N": f"{neighbors.TREE_N:,}", "TREE_DIMS": str(neighbors.TREE_DIMS),
    "SHARDED_N": f"{neighbors.SHARDED_N:,}", "LOW_DIMS": str(neighbors.LOW_DIMS),
    "ROW_SPACE_DIMS": str(neighbors.ROW_SPACE_DIMS),
    "ANCHOR_N": f"{anchors.ANCHOR_N:,}", "AUTO_ANCHORS": f"{anchors.AUTO_ANCHORS:,}",
    "TREATMENT_BUDGET": f"{treatments.TREATMENT_BUDGET:.0e}".replace("e+0", "e"),
    "MIN_TREATMENTS": str(treatments.MIN_TREATMENTS),
}

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc docstrings say the types
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"causefs {release}"
# sidebar_includehidden=False: the theme then looks for a page's section navigation and,
# where there is none (a guide page without children), drops the primary sidebar
# instead of showing an empty "Section Navigation" panel (.ci/check_docs_pages.py)
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2,
                      "sidebar_includehidden": False}
html_static_path = ["_static"]
html_css_files = ["causefs.css"]  # output blocks wrap instead of running off the page

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT.parent / "examples" / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
}


def _kind(field: dict) -> str:
    if "const" in field:
        return "const " + json.dumps(field["const"])
    if "enum" in field:
        return "one of " + ", ".join(map(str, field["enum"]))
    if "oneOf" in field:
        return " or ".join(_kind(option) for option in field["oneOf"])
    kind = field.get("type", "any")
    return " or ".join(kind) if isinstance(kind, list) else kind


def _schema_rows(schema: dict, node: dict, prefix: str = "") -> list:
    """(field, type, description) of every documented field of ``node``, depth first."""
    rows = []
    for name, field in node.get("properties", {}).items():
        if "$ref" in field:
            field = schema["$defs"][field["$ref"].rsplit("/", 1)[1]]
        rows.append((prefix + name, _kind(field), field.get("description", "")))
        if field.get("type") == "object" and "properties" in field:
            rows += _schema_rows(schema, field, f"{prefix}{name}.")
    return rows


def _table(header: tuple, rows: list) -> str:
    escape = str.maketrans({"|": "\\|", "\n": " "})
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).translate(escape) for cell in row) + " |"
              for row in rows]
    return "\n".join(lines) + "\n"


def generate_tables() -> None:
    """The generated tables the user guide includes (one source each: the code)."""
    from importlib import resources

    from causefs.datasets import BENCHMARKS

    GENERATED.mkdir(exist_ok=True)
    schema = json.loads(resources.files("causefs.app").joinpath("result.schema.json")
                        .read_text())
    rows = _schema_rows(schema, schema)
    rows += _schema_rows(schema, schema["$defs"]["job"], "job.")
    rows += _schema_rows(schema, schema["$defs"]["causefs_details"], "details.")
    unique = {row[0]: row for row in rows}  # job.* appears under job and in $defs
    (GENERATED / "result_fields.md").write_text(
        _table(("field", "type", "meaning"), [unique[k] for k in sorted(unique)]))
    sections = [
        f"### `{name}`: {b.file}, {b.n_samples} x {b.n_features}, {b.n_classes} classes\n\n"
        f"- source, the original file at a fixed commit: [`{b.source.url}`]({b.source.url})\n"
        f"- licence: {b.source.licence}\n"
        f"- reference: {b.source.reference}\n"
        f"- sha256 of the original file, as far as recorded: `{b.source.sha256}...`\n"
        f"- sha256 of the `.npz` file (MANIFEST.md): `{b.sha256}`\n"
        f"- sha256 of its arrays, verified on every load: `{b.content_sha256}`\n"
        for name, b in BENCHMARKS.items()]
    (GENERATED / "benchmarks.md").write_text("\n".join(sections))


generate_tables()
os.environ.setdefault("OMP_NUM_THREADS", "1")  # the gallery's fits: one BLAS thread


def _skip_metadata_request_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_fit_request & co. (metadata routing, for fit's
    # ``nuisance``); their docstrings cite scikit-learn's own glossary, which this site
    # does not have: documented in CauseFS's docstring instead
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_request_methods)
