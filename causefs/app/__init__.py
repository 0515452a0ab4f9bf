"""The experiment application: the ``causefs`` command (Hydra configs, checks, one run),
the results store, the evaluation protocol and its metrics, and ``causefs-report``."""
