import os
from pathlib import Path

import numpy as np
import pytest

from causefs.datasets import ENV_VAR
from causefs.testing.profiles import load_profile

load_profile()  # causefs-ci unless $CAUSEFS_HYPOTHESIS_PROFILE says causefs-dev


@pytest.fixture(scope="session")
def data_dir():
    """The benchmark data directory ($CAUSEFS_DATA); tests that need it skip without it."""
    path = os.environ.get(ENV_VAR)
    if not path:
        pytest.skip(f"{ENV_VAR} is not set (.ci/run sets it to ../shared/datasets)")
    return Path(path)


@pytest.fixture(scope="session")
def blobs():
    """Small clustered data: 60 samples, 12 features (4 informative), 3 clusters."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 20)
    centers = rng.normal(scale=3.0, size=(3, 4))
    X = np.hstack([centers[labels] + rng.normal(size=(60, 4)), rng.normal(size=(60, 8))])
    return X, labels
