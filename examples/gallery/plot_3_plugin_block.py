"""
Write a block and test it with causefs.testing
==============================================

A plugin adds blocks (variable updates), objective terms, kernels, QP backends,
stopping rules, schedules and selectors.
This example writes one descent block, checks it with the property suite every built-in
block passes (:func:`causefs.testing.check_block`: the objective never rises, the input
state is not mutated, only the declared variables change, the result is valid and
deterministic), and runs it in a schedule. A package makes it a plugin with an entry
point (see the plugin author's guide); here the block instance goes straight into the
schedule.
"""

# %%
# The block
# ---------
# ``ShrinkSelection`` rescales W by the factor among a few candidates (1 included) that
# gives the lowest objective, so it is a descent block by construction, whatever terms
# the schedule's objective has (``derived_for = "*"``: it evaluates J itself).
import matplotlib.pyplot as plt
import numpy as np

from causefs import CauseFS, Schedule, objective
from causefs.blocks import Block
from causefs.engine import resolve_schedule
from causefs.testing import check_block, load_profile


class ShrinkSelection(Block):
    name = "shrink_selection"
    kind = "descent"
    reads = ("X_adjusted", "mu", "W", "F")
    optional_reads = ("S", "groups", "nu", "G", "xi", "gamma", "K")
    writes = ("W",)
    derived_for = "*"

    def __init__(self, factors=(0.5, 0.8, 0.9, 1.0)):
        self.factors = tuple(factors)

    def step(self, state):
        candidates = [state.replace(W=c * state.W) for c in self.factors]
        return min(candidates, key=lambda s: objective(s).total)


# %%
# The property suite
# ------------------
# Random valid states from :mod:`causefs.testing.strategies`; a failing example would
# be shrunk and reported with the state that breaks the contract. ``load_profile``
# (in a plugin's ``conftest.py``) chooses reproducible examples.
load_profile()
check_block(ShrinkSelection(), max_examples=15)
print("ShrinkSelection passed check_block")

# %%
# In a schedule
# -------------
# The full schedule with the new block after the W update. ``check="strict"`` makes the
# scheduler check every block's contract during the fit, naming a block that breaks it.
# The objective as recorded can rise from one iteration to the next: the structural
# blocks (granularity, confounders) change the objective itself (docs/MODEL.md,
# "Descent and monotonicity"); every descent block, the new one included, lowers it.
rng = np.random.default_rng(0)
X = np.vstack([rng.normal(c, 1.0, size=(40, 12))
               for c in (0.0, 3.0, 6.0)])
full = resolve_schedule("full")
loop = (full.loop[0], ShrinkSelection(), *full.loop[1:])
with_block = Schedule("with_shrink", full.init, loop)
schedules = {"full": "full", "with shrink_selection": with_block}
fits = {name: CauseFS(n_clusters=3, schedule=schedule, max_iter=10,
                      tol=0.0, check="strict", random_state=0).fit(X)
        for name, schedule in schedules.items()}

fig, ax = plt.subplots(figsize=(5, 3.2))
for name, fit in fits.items():
    ax.plot(fit.objective_history_[1:], marker="o", label=name)
ax.set_xlabel("iteration")
ax.set_ylabel("objective")
ax.legend()
fig.tight_layout()
