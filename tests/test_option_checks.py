"""Every option of a part (QP backend, block, kernel), of a dataset generator and of a
plugin part is checked by the same rules, named in one line; values are normalized so
that equal settings are one job in the results store."""

import re

import numpy as np
import pytest

from causefs.blocks import (
    ConfoundersBlock,
    DecorrelationWeightsBlock,
    DensityRatioWeightsBlock,
    EmbeddingBlock,
    SampleWeightsBlock,
    SpectralEmbeddingBlock,
)
from causefs.core.validation import (
    Interval,
    InvalidParameterError,
    check_annotated,
    check_value,
    construct,
)
from causefs.datasets import load_dataset, make_causal, make_digits_border, make_shifted_clusters
from causefs.engine import part_spec, resolve_qp
from causefs.kernels import LinearKernel
from causefs.model.settings import Settings
from causefs.qp.cvxpy_backend import CvxpyBackend
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend
from causefs.qp.projected_gradient import ProjectedGradientBackend


@pytest.mark.parametrize("factory, options, message", [
    (GradientProjectionCGBackend, {"rtol": -1}, "rtol=-1: must be a real number >= 0"),
    (GradientProjectionCGBackend, {"rtol": float("nan")}, "rtol=nan"),
    (GradientProjectionCGBackend, {"max_iter": 0}, "max_iter=0: must be an integer >= 1"),
    (GradientProjectionCGBackend, {"max_iter": 2.5}, "max_iter=2.5"),
    (GradientProjectionCGBackend, {"projection_steps": -1}, "projection_steps=-1"),
    (GradientProjectionCGBackend, {"cg_rtol": 1.5}, "cg_rtol=1.5"),
    (ProjectedGradientBackend, {"stall_iter": 0}, "stall_iter=0"),
    (ProjectedGradientBackend, {"max_iter": "x"}, "max_iter='x'"),
    (CvxpyBackend, {"solver": "SCIPY"}, "solver='SCIPY': must be one of"),  # an LP solver
    (CvxpyBackend, {"solver_options": 5}, "solver_options=5: must be"),
    (EmbeddingBlock, {"max_iter": -1}, "max_iter=-1"),
    (EmbeddingBlock, {"tol": "abc"}, "tol='abc'"),
    (ConfoundersBlock, {"irrelevant_tol": 2}, "irrelevant_tol=2"),
    (ConfoundersBlock, {"irrelevant_tol": -0.1}, "irrelevant_tol=-0.1"),
    (SpectralEmbeddingBlock, {"seed": -1}, "seed=-1"),
    (DensityRatioWeightsBlock, {"seed": "abc"}, "seed='abc'"),
    (DensityRatioWeightsBlock, {"seed": -1}, "seed=-1: must be an integer >= 0"),
    (DensityRatioWeightsBlock, {"C": 0}, "C=0: must be a real number > 0"),
    (DensityRatioWeightsBlock, {"max_ratio": 1}, "max_ratio=1: must be a real number > 1"),
    (DensityRatioWeightsBlock, {"max_pairs": 0}, "max_pairs=0: must be an integer >= 1"),
    (DecorrelationWeightsBlock, {"penalty": -1}, "penalty=-1: must be a real number >= 0"),
    (DecorrelationWeightsBlock, {"max_iter": -1}, "max_iter=-1: must be an integer >= 0"),
    (DecorrelationWeightsBlock, {"tol": -1}, "tol=-1: must be a real number >= 0"),
    (SampleWeightsBlock, {"qp": "abc"}, "qp='abc': must be a QP backend"),
])
def test_part_options_are_checked(factory, options, message):
    with pytest.raises(InvalidParameterError, match="^" + re.escape(f"part.{message}")):
        construct("part", factory, options)


@pytest.mark.parametrize("generator, options, message", [
    (make_shifted_clusters, {"train_bias": "abc"}, "train_bias='abc'"),
    (make_shifted_clusters, {"seed": -1}, "seed=-1"),
    (make_shifted_clusters, {"n_groups": 5}, "n_groups=5: must be < n_clusters = 4"),
    (make_shifted_clusters, {"n_causal": 7}, "n_causal=7: must be a multiple of 4"),
    (make_shifted_clusters, {"n_noise": -1}, "n_noise=-1"),
    (make_shifted_clusters, {"n_train": 2}, "n_train=2: must be an integer >= 4"),
    (make_shifted_clusters, {"separation": float("inf")}, "separation=inf"),
    (make_digits_border, {"border_noise": -1}, "border_noise=-1"),
    (make_digits_border, {"border_levels": (1,)}, "border_levels=(1,)"),
    (make_digits_border, {"border_levels": [-4, 40]}, "border_levels=[-4, 40]"),
    (make_digits_border, {"train_size": 1.5}, "train_size=1.5"),
    (make_digits_border, {"seed": -1}, "seed=-1"),
    (make_causal, {"n_features": 5}, "n_causal=10: with n_spurious=10 exceeds n_features=5"),
])
def test_generator_options_are_checked(generator, options, message):
    with pytest.raises(InvalidParameterError, match="^" + re.escape(message)):
        generator(**options)


def test_a_data_directory_of_another_type_is_named():
    with pytest.raises(ValueError, match=r"data directory \['a'\]: must be a directory path"):
        load_dataset("jaffe", data_home_path=["a"])


class CarelessKernel(LinearKernel):
    """A plugin part that annotates its options and checks none."""

    name = "careless"

    def __init__(self, scale: float = 1.0, n_terms: int | None = None, label: str = "x"):
        self.scale, self.n_terms, self.label = scale, n_terms, label


@pytest.mark.parametrize("options, message", [
    ({"scale": "big"}, "kernel.scale='big': must be a real number"),
    ({"n_terms": 2.5}, "kernel.n_terms=2.5: must be an integer or None"),
    ({"label": 3}, "kernel.label=3: must be a string"),
    ({"scale": True}, "kernel.scale=True"),
])
def test_annotations_of_a_plugin_part_are_its_rules(options, message):
    with pytest.raises(InvalidParameterError, match="^" + re.escape(message)):
        construct("kernel", CarelessKernel, options)
    assert construct("kernel", CarelessKernel, {"scale": 2, "n_terms": None}).scale == 2


def test_values_are_normalized_where_checked():
    assert check_value("alpha", 1, Interval(float, 0)) == 1.0
    assert type(check_value("alpha", 1, Interval(float, 0))) is float
    assert type(check_value("k", np.int64(3), Interval(int, 1))) is int
    assert Settings(alpha=1, beta=0).alpha == 1.0 and type(Settings(beta=0).beta) is float
    # an int and a float keep their meanings where both are allowed (count and fraction)
    assert Settings(n_features_to_select=1).n_features_to_select == 1
    assert isinstance(Settings(n_features_to_select=1.0).n_features_to_select, float)
    assert check_annotated("kernel", CarelessKernel, {"scale": 2}) == {"scale": 2.0}
    spec = part_spec(resolve_qp({"name": "gradient_projection_cg", "rtol": 1}))
    assert spec == part_spec(resolve_qp({"name": "gradient_projection_cg", "rtol": 1.0}))
    assert type(spec["rtol"]) is float and spec["max_iter"] == 5000  # defaults included
