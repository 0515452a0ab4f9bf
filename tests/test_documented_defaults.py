"""Every default a docstring states is the default the signature has.

numpydoc's ``name : type, default=value`` (or ``default value``) line is what a user reads
in the API pages; a default changed in the signature and not in the docstring (or the
reverse) would tell them a wrong number. The check walks every module of the package,
every function and class defined there (a class by its ``__init__``) and every method.
"""

import ast
import importlib
import inspect
import pkgutil
import re

import pytest

import causefs
from causefs.core.parts import Part

#: ``name : type, default=value`` or ``name : type, default value`` in a Parameters list
DOCUMENTED = re.compile(r"^\s*(\w+) : .*?,\s*default[= ](.+?)\s*$", re.M)


def modules():
    names = [causefs.__name__]
    for info in pkgutil.walk_packages(causefs.__path__, prefix="causefs."):
        if ".app" in info.name or info.name.endswith("__main__"):
            continue  # the command line's modules import Hydra, an extra
        names.append(info.name)
    return names


def documented_callables():
    """(qualified name, callable, docstring) of every function, class and method the
    package defines, a class documented on itself or its ``__init__``."""
    seen = set()
    for name in modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module):
            if getattr(obj, "__module__", None) != name or id(obj) in seen:
                continue
            if "__mutmut_" in getattr(obj, "__name__", ""):
                continue  # a mutation run's copies of the functions (docs/MUTATION.md)
            seen.add(id(obj))
            if inspect.isfunction(obj):
                yield f"{name}.{obj.__name__}", obj, obj.__doc__ or ""
            elif inspect.isclass(obj):
                init = obj.__dict__.get("__init__")
                if init is not None:
                    yield (f"{name}.{obj.__name__}", obj,
                           (obj.__doc__ or "") + (init.__doc__ or ""))
                for attribute, member in vars(obj).items():
                    if inspect.isfunction(member) and attribute != "__init__":
                        # an override without a docstring is documented by its base's
                        yield (f"{name}.{obj.__name__}.{attribute}", member,
                               inspect.getdoc(getattr(obj, attribute)) or "")


def cases():
    found = []
    for qualified, function, doc in documented_callables():
        parameters = inspect.signature(function).parameters
        for parameter, text in DOCUMENTED.findall(doc):
            if parameter in parameters:
                found.append(pytest.param(function, parameter, text,
                                          id=f"{qualified}:{parameter}"))
    return found


CASES = cases()


def test_the_walk_finds_the_documented_defaults():
    """The walk reaches the estimator, the blocks and the numerics (a walk that found
    nothing would pass every case below)."""
    ids = {case.id for case in CASES}
    for expected in ("causefs.estimator.CauseFS:n_clusters",
                     "causefs.blocks.descent.embedding.EmbeddingBlock:max_iter",
                     "causefs.numerics.nuisance_effects.conditional_kmeans:n_init",
                     "causefs.kernels.rbf.RBFKernel:n_components"):
        assert expected in ids
    assert len(CASES) > 80


def same(value, documented) -> bool:
    return value == documented and isinstance(value, bool) == isinstance(documented, bool)


@pytest.mark.parametrize("function, parameter, text", CASES)
def test_the_documented_default_is_the_signatures(function, parameter, text):
    default = inspect.signature(function).parameters[parameter].default
    assert default is not inspect.Parameter.empty, f"{parameter} has no default"
    assert same(default, ast.literal_eval(text))


PARTS = [case for case in CASES if inspect.isclass(case.values[0])
         and issubclass(case.values[0], Part) and not inspect.isabstract(case.values[0])]


@pytest.mark.parametrize("part, parameter, text", PARTS)
def test_a_part_built_without_options_holds_the_documented_defaults(part, parameter, text):
    """A part keeps its options as attributes of the same names (its ``repr`` and the
    results store's keys show them), so one built with no option holds the documented
    defaults: what the part runs with, not only what its signature says."""
    if any(p.default is inspect.Parameter.empty
           for p in inspect.signature(part).parameters.values()):
        pytest.skip("the part needs an argument the engine provides")
    assert same(getattr(part(), parameter), ast.literal_eval(text))


def test_the_parts_with_documented_defaults_are_checked_built():
    names = {case.id.split(":")[0].rsplit(".", 1)[1] for case in PARTS}
    assert {"RBFKernel", "DecorrelationWeightsBlock", "DensityRatioWeightsBlock",
            "SpectralEmbeddingBlock", "GradientProjectionCGBackend",
            "ProjectedGradientBackend", "EmbeddingBlock"} <= names
