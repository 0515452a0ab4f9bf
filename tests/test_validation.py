"""The constraints every user value is checked by (causefs.core.validation), against their
definitions written here: interval membership from the four kinds of interval, sizes in
bytes from the units' powers of two, the messages' one form ``name=value: requirement``."""

import math
from collections.abc import Mapping

import numpy as np
import pytest

from causefs.core.validation import (
    BOOLEAN,
    NONE,
    SEED,
    ByteSize,
    InstanceOf,
    Interval,
    InvalidParameterError,
    Options,
    PartSpec,
    annotated_constraints,
    check_annotated,
    check_choice,
    check_options,
    check_value,
    config_value,
    constructor_defaults,
    constructor_options,
    construct,
    parse_bytes,
    same_value,
)

#: which ends belong to the interval, by its ``closed``
ENDS = {"both": (True, True), "left": (True, False), "right": (False, True),
        "neither": (False, False)}


def member(value, low, high, closed) -> bool:
    """``low (<|<=) value (<|<=) high`` as written in interval notation."""
    with_low, with_high = ENDS[closed]
    above = low is None or value > low or (with_low and value == low)
    below = high is None or value < high or (with_high and value == high)
    return above and below


@pytest.mark.parametrize("closed", sorted(ENDS))
@pytest.mark.parametrize("low, high", [(0, 1), (-2.5, None), (None, 3), (None, None), (1, 1)])
def test_an_interval_holds_the_numbers_its_notation_says(closed, low, high):
    points = [-3, -2.5, -1, 0, 0.5, 1, 1.5, 3, 4]
    for value in points:
        assert Interval(float, low, high, closed=closed).is_satisfied_by(value) \
            == member(value, low, high, closed), (value, low, high, closed)
        if float(value).is_integer():
            assert Interval(int, low, high, closed=closed).is_satisfied_by(int(value)) \
                == member(value, low, high, closed), (value, low, high, closed)


def test_an_interval_takes_finite_numbers_of_its_kind_only():
    reals = Interval(float)
    assert all(reals.is_satisfied_by(v) for v in (0, 1.5, np.float32(2), np.int64(-3)))
    assert not any(reals.is_satisfied_by(v) for v in
                   (True, False, math.inf, -math.inf, math.nan, "1", None, 1j, [1.0]))
    integers = Interval(int, 0)
    assert all(integers.is_satisfied_by(v) for v in (0, 7, np.int64(3), np.uint8(200)))
    assert not any(integers.is_satisfied_by(v) for v in (1.0, np.float64(2), True, -1))
    assert SEED.is_satisfied_by(0) and SEED.is_satisfied_by(2**32 - 1)
    assert not SEED.is_satisfied_by(2**32) and not SEED.is_satisfied_by(-1)


def test_an_interval_normalizes_to_a_python_number_of_its_kind():
    for value, kind, expected in [(1, float, 1.0), (np.float32(0.5), float, 0.5),
                                  (np.int64(3), int, 3), (np.uint8(7), int, 7)]:
        normal = Interval(kind).normalize(value)
        assert normal == expected and type(normal) is kind


@pytest.mark.parametrize("constraint, text", [
    (Interval(float, 0, closed="neither"), "a real number > 0"),
    (Interval(float, 0, closed="right"), "a real number > 0"),
    (Interval(float, 0), "a real number >= 0"),
    (Interval(float, 0, closed="left"), "a real number >= 0"),
    (Interval(float, None, 1, closed="left"), "a real number < 1"),
    (Interval(float, None, 1, closed="right"), "a real number <= 1"),
    (Interval(float, 0, 1), "a real number >= 0 and <= 1"),
    (Interval(float, 0, 1, closed="neither"), "a real number > 0 and < 1"),
    (Interval(int, 1), "an integer >= 1"),
    (Interval(int), "an integer"),
    (Options(["a", "b"]), "one of 'a', 'b'"),
    (Options([None, 2]), "one of None, 2"),
    (NONE, "None"),
    (BOOLEAN, "true or false"),
    (ByteSize(), "a number of bytes >= 1 or a size such as '8GB' (units B, KB, MB, GB, TB)"),
    (PartSpec(), "a registered name, a mapping with a 'name' key, or an instance"),
])
def test_a_constraint_completes_must_be(constraint, text):
    assert str(constraint) == text


def test_options_are_compared_by_type_and_value():
    options = Options([1, "auto", None, True])
    assert options.is_satisfied_by(1) and options.is_satisfied_by("auto")
    assert options.is_satisfied_by(None) and options.is_satisfied_by(True)
    assert not options.is_satisfied_by(1.0)  # 1.0 == 1, but not of the type of 1
    assert not Options([1]).is_satisfied_by(True)  # True == 1: not an option here
    assert not Options([True]).is_satisfied_by(1)
    assert not options.is_satisfied_by("Auto") and not options.is_satisfied_by(0)
    assert check_choice("solver", "auto", ["auto", "exact"]) == "auto"
    with pytest.raises(InvalidParameterError,
                       match=r"^solver='fast': must be one of 'auto', 'exact'$"):
        check_choice("solver", "fast", ["auto", "exact"])


def test_instances_exclude_booleans_unless_asked_for():
    numbers = InstanceOf((int, float), "a number")
    assert numbers.is_satisfied_by(3) and numbers.is_satisfied_by(2.5)
    assert not numbers.is_satisfied_by(True)  # a bool is an int, but not a number here
    assert InstanceOf((int, bool), "an int or bool").is_satisfied_by(True)
    assert InstanceOf(bool, "true or false").is_satisfied_by(False)
    assert not BOOLEAN.is_satisfied_by(1) and not BOOLEAN.is_satisfied_by("no")


def test_a_part_is_named_by_a_name_a_mapping_with_a_name_or_an_instance():
    spec = PartSpec()
    assert spec.is_satisfied_by("rbf") and spec.is_satisfied_by({"name": "rbf", "x": 1})
    assert spec.is_satisfied_by(object())
    assert not any(spec.is_satisfied_by(v) for v in
                   ("", {"bandwidth": 1}, {"name": 3}, None, True, 3, 2.5))


@pytest.mark.parametrize("value, expected", [
    (1, 1), (2e9, 2_000_000_000), ("1B", 1), ("1KB", 1024), ("2 kb", 2048),
    ("1.5MB", 3 * 2**19), ("8GB", 8 * 2**30), (" 1 tb ", 2**40), ("512", 512),
    ("0.5KB", 512), ("1e3", 1000), ("512 MB", 512 * 2**20),
    # not a size: below one byte, not finite, not a number, a boolean
    (0.5, None), (0, None), ("0.5B", None), ("-1GB", None), (math.inf, None),
    ("inf", None), ("nan", None), ("GB", None), ("eightGB", None), (True, None),
    ("1 0MB", None), ("1 G B", None),  # spaces within the number or the unit
    (None, None), ([1], None),
])
def test_a_size_is_a_number_of_bytes_in_powers_of_1024(value, expected):
    parsed = parse_bytes(value)
    assert parsed == expected and (parsed is None or type(parsed) is int)
    assert ByteSize().is_satisfied_by(value) == (expected is not None)


def test_same_value_compares_floats_up_to_rounding_and_nothing_else_loosely():
    assert same_value(0.1 + 0.2, 0.3) and same_value(1, 1.0) and same_value(1.0, 1)
    assert not same_value(1.0, 1.001) and not same_value(True, 1.0)
    assert not same_value(1.0, True) and not same_value("1", 1.0) and not same_value(1.0, "1")
    assert same_value("a", "a") and not same_value("a", "b") and same_value(None, None)
    assert not same_value(1, 2)


def test_check_value_takes_the_first_constraint_met_and_names_all_when_none_is():
    assert check_value("k", 5, Interval(int, 1), NONE) == 5
    assert check_value("k", None, Interval(int, 1), NONE) is None
    with pytest.raises(InvalidParameterError,
                       match=r"^k=0: must be an integer >= 1 or None$"):
        check_value("k", 0, Interval(int, 1), NONE)
    with pytest.raises(InvalidParameterError, match=r"^alpha='x': must be a real number$"):
        check_value("alpha", "x", Interval(float))


class Part:
    name = "thing"  # how the messages name the part

    def __init__(self, alpha: float = 1.0, k: int | None = None, name: str = "p",
                 flags: list = (), *, scale: int | float = 2, raw=None):
        self.alpha, self.k = alpha, k
        if alpha > 10:
            raise InvalidParameterError(f"alpha={alpha}: must be a real number <= 10")
        if name == "bad":
            raise ValueError("a part needs a name")
        if name == "":
            raise InvalidParameterError("a part needs a name")


def test_a_constructor_says_its_options_and_defaults():
    assert constructor_options(Part) == ["alpha", "k", "name", "flags", "scale", "raw"]
    assert constructor_defaults(Part, skip=("raw",)) == {
        "alpha": 1.0, "k": None, "name": "p", "flags": (), "scale": 2}

    def required(x, y=3, *args, **kwargs):
        return x

    assert constructor_options(required) == ["x", "y"]
    assert constructor_defaults(required) == {"y": 3}


def test_annotations_of_simple_types_are_the_rules_of_the_options():
    rules = annotated_constraints(Part)
    assert set(rules) == {"alpha", "k", "name", "flags", "scale"}  # raw: no annotation
    assert check_annotated("p", Part, {"alpha": 2, "scale": 3, "raw": object()})["alpha"] \
        == 2.0
    checked = check_annotated("p", Part, {"alpha": 2, "scale": 3, "k": None})
    assert type(checked["alpha"]) is float and type(checked["scale"]) is int
    assert checked["k"] is None
    for options, message in [({"alpha": "x"}, r"^p\.alpha='x': must be a real number$"),
                             ({"k": 1.5}, r"^p\.k=1\.5: must be an integer or None$"),
                             ({"name": 3}, r"^p\.name=3: must be a string$"),
                             ({"flags": "a"}, r"^p\.flags='a': must be a list$"),
                             ({"alpha": True}, r"^p\.alpha=True: must be a real number$")]:
        with pytest.raises(InvalidParameterError, match=message):
            check_annotated("p", Part, options)

    def unevaluable(x: "NoSuchType" = 1):  # noqa: F821
        return x

    assert annotated_constraints(unevaluable) == {}


def test_unknown_options_are_named_with_the_accepted_ones():
    with pytest.raises(InvalidParameterError,
                       match=r"^kernel\.bandwith: unknown option; the options of 'rbf' are "
                             r"alpha, flags, k, name, raw, scale$"):
        check_options("kernel", Part, {"bandwith": 1, "zz": 2, "alpha": 1}, "rbf")
    with pytest.raises(InvalidParameterError, match=r"the options of 'Part' are alpha"):
        check_options("kernel", Part, {"bandwith": 1})  # no name given: the class's

    def nothing():
        return None

    with pytest.raises(InvalidParameterError, match=r"the options of 'nothing' are none$"):
        check_options("x", nothing, {"a": 1})

    def anything(**options):
        return options

    check_options("x", anything, {"a": 1})  # takes any keyword: nothing to refuse


def test_construct_names_the_option_under_its_key():
    made = construct("method", Part, {"alpha": 2, "k": 3})
    assert made.alpha == 2 and made.k == 3
    with pytest.raises(InvalidParameterError,
                       match=r"^method\.alpha=11: must be a real number <= 10$"):
        construct("method", Part, {"alpha": 11})
    # a refusal naming no option is told under the key; another error names the part
    with pytest.raises(InvalidParameterError, match=r"^method: a part needs a name$"):
        construct("method", Part, {"name": ""})
    with pytest.raises(InvalidParameterError, match=r"^method=thing: a part needs a name$"):
        construct("method", Part, {"name": "bad"})
    with pytest.raises(InvalidParameterError,
                       match=r"^method\.nope: unknown option; the options of 'thing' are"):
        construct("method", Part, {"nope": 1})


    class Unnamed:  # no name attribute: the class's own name
        def __init__(self, a=1):
            raise ValueError("never")

    with pytest.raises(InvalidParameterError, match=r"the options of 'Unnamed' are a$"):
        construct("method", Unnamed, {"nope": 1})
    with pytest.raises(InvalidParameterError, match=r"^method=Unnamed: never$"):
        construct("method", Unnamed)


def test_a_configuration_holds_scalars_lists_and_mappings_only():
    assert config_value((1, "a", None, (2.5, True))) == [1, "a", None, [2.5, True]]
    assert config_value({1: (2,), "b": {"c": ()}}) == {"1": [2], "b": {"c": []}}
    converted = config_value({"x": (1,)})
    assert isinstance(converted, dict) and not isinstance(converted["x"], tuple)
    for value in (np.arange(2), object(), {1, 2}, b"x"):
        with pytest.raises(TypeError, match="cannot be written in a configuration"):
            config_value(value)
    assert isinstance(config_value({"m": {}}), Mapping)


def test_masked_positions_lists_the_masked_values_in_row_order():
    from causefs.core.validation import masked_positions

    mask = np.zeros((3, 4), dtype=bool)
    mask[2, 0] = mask[1, 3] = True
    values = np.ma.masked_array(np.arange(12.0).reshape(3, 4), mask=mask)
    assert masked_positions(values).tolist() == [[1, 3], [2, 0]]
    assert masked_positions(np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])).tolist() == [[1]]
    # nothing masked, or not a masked array: none, whatever the shape
    for plain in (np.ma.masked_array(np.ones((2, 2))), np.ones((2, 2)), [1, 2]):
        assert masked_positions(plain).size == 0
