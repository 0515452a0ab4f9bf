"""The CAUSE-FS model: its settings table, the problem, the objective, the treatment
coding and treatment sets, and the diagnostics of the sample weights."""
