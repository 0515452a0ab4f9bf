"""What every part has (causefs.core.parts): shown by its constructor keywords, costs that
keep their own copy of the phases."""

import pytest

from causefs.core.parts import Cost, Part


class Smoother(Part):
    def __init__(self, bandwidth=1.0, kernel="rbf", _cache_size=8):
        self.bandwidth, self.kernel, self._cache_size = bandwidth, kernel, _cache_size
        self.fitted_ = True  # state of its own, not an option
        self._scratch = []


def test_a_part_is_shown_by_its_public_constructor_keywords():
    part = Smoother(bandwidth=2.5, kernel="laplace")
    assert part.options() == {"bandwidth": 2.5, "kernel": "laplace"}
    assert repr(part) == "Smoother(bandwidth=2.5, kernel='laplace')"
    assert repr(Part()) == "Part()"


def test_a_cost_keeps_a_read_only_copy_of_its_phases():
    memory, advice = {"graph": 1e6}, {"graph": "use fewer neighbours"}
    cost = Cost(flops=2.0, memory=memory, advice=advice)
    memory["graph"], advice["other"] = 5.0, "x"  # the caller's dicts change after
    assert dict(cost.memory) == {"graph": 1e6}
    assert dict(cost.advice) == {"graph": "use fewer neighbours"}
    with pytest.raises(TypeError):
        cost.memory["graph"] = 0.0
    with pytest.raises(TypeError):
        cost.advice["graph"] = ""
    assert Part().cost(None) == Cost() and dict(Cost().memory) == {}
