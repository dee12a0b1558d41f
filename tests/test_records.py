"""ringfence.rfcore.records: the light record decorator keeps the dataclass semantics we rely on."""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar

import pytest

from ringfence.rfcore.records import (FrozenInstanceError, asdict, field, fields, is_record, record,
                            replace)


@record
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    KIND: ClassVar[str] = "point"


@record
class Box:
    corner: Point
    items: list = field(default_factory=list)
    secret: str = field(default="", repr=False, compare=False)


@record(frozen=False)
class Counter:
    n: int = 0
    seen: list = field(default_factory=list)


def test_init_positional_keyword_and_defaults():
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, ())
    assert Point(1, 2) == Point(x=1, y=2)
    with pytest.raises(TypeError):
        Point()
    with pytest.raises(TypeError):
        Point(1, 2, (), 4)
    with pytest.raises(TypeError):
        Point(1, z=3)


def test_default_factory_is_fresh_per_instance():
    a, b = Box(Point(1)), Box(Point(1))
    a.items.append(1)
    assert b.items == []


def test_equality_hash_and_class_identity():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2, ("a",))) == hash(Point(1, 2, ("a",)))
    assert len({Point(1), Point(1), Point(2)}) == 2

    @record
    class Other:
        x: int
        y: int = 0
        tags: tuple = ()

    assert Point(1) != Other(1)
    # compare=False fields take no part in equality
    assert Box(Point(1), secret="a") == Box(Point(1), secret="b")


def test_repr_matches_dataclass_style_and_hides_repr_false():
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())"
    assert repr(Box(Point(1), secret="s3cret")) == "Box(corner=Point(x=1, y=0, tags=()), items=[])"


def test_frozen_refuses_assignment_and_deletion():
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2
    with pytest.raises(AttributeError):
        del p.y
    assert p.x == 1


def test_mutable_record_assigns_and_is_unhashable():
    c = Counter()
    c.n += 1
    c.seen.append("a")
    assert (c.n, c.seen) == (1, ["a"])
    with pytest.raises(TypeError):
        hash(c)


def test_classvar_is_not_a_field():
    assert [f.name for f in fields(Point)] == ["x", "y", "tags"]
    assert Point.KIND == "point"


def test_replace_asdict_fields_is_record():
    b = Box(Point(1, 2, ("t",)), [Point(3)])
    assert replace(b.corner, y=5) == Point(1, 5, ("t",))
    with pytest.raises(TypeError):
        replace(b.corner, nope=1)
    assert asdict(b) == {"corner": {"x": 1, "y": 2, "tags": ("t",)},
                         "items": [{"x": 3, "y": 0, "tags": ()}], "secret": ""}
    assert is_record(b) and is_record(Box) and not is_record({}) and not is_record(dict)
    with pytest.raises(TypeError):
        fields(object())


def test_refuses_mutable_default_and_bad_order():
    with pytest.raises(ValueError):
        @record
        class Bad:
            items: list = []
    with pytest.raises(TypeError):
        @record
        class Order:
            a: int = 1
            b: int


def test_inheritance_and_post_init_and_own_methods():
    @record
    class Base:
        a: int

    @record
    class Child(Base):
        b: int = 2

        def __post_init__(self):
            if self.a < 0:
                raise ValueError("a must be >= 0")

        def __repr__(self):
            return "custom"

    assert Child(1) == Child(1, 2) and Child(1).b == 2
    assert repr(Child(1)) == "custom"
    with pytest.raises(ValueError):
        Child(-1)


def test_hot_path_does_not_import_dataclasses():
    # The point of the module: the per-command paths never pay for dataclasses/inspect.
    code = ("import sys, classifier, classifier.verdict, profiles.model, profiles.load, "
            "ringfence.session.gate, ringfence.session.governor, ringfence.session.runner, compiler.execute; "
            "print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_init_is_compiled_on_first_use_and_then_replaced():
    @record
    class Lazy:
        a: int
        b: int = 2

    from ringfence.rfcore import records

    stub = Lazy.__init__
    assert Lazy(1) == Lazy(1, 2)
    assert Lazy.__init__ is stub                # the generic one serves the first calls
    assert Lazy(a=3).b == 2
    with pytest.raises(TypeError):
        Lazy()
    for i in range(records.COMPILE_AFTER):
        assert Lazy(i).a == i
    assert Lazy.__init__ is not stub            # then the compiled one replaced the stub
    assert Lazy(a=3).b == 2
    with pytest.raises(TypeError):
        Lazy()

    @record
    class Sub(Lazy):
        c: int = 3

    assert Sub(1) == Sub(1, 2, 3)
    assert repr(Sub(1)) == f"{Sub.__qualname__}(a=1, b=2, c=3)"


@pytest.mark.parametrize("calls", [1, 100])   # the generic __init__, then the compiled one
def test_generic_and_compiled_init_agree(calls):
    seen = []

    @record
    class R:
        a: int
        b: list = field(default_factory=list)
        c: str = "c"

        def __post_init__(self):
            seen.append(self.a)

    for _ in range(calls):
        r = R(1)
    assert (r.a, r.b, r.c) == (1, [], "c") and R(1).b is not R(1).b
    assert R(2, [3], c="d") == R(a=2, b=[3], c="d")
    for bad in [lambda: R(), lambda: R(1, [], "c", 4), lambda: R(1, a=2), lambda: R(1, z=2)]:
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(AttributeError):
        r.a = 5                                  # frozen either way
    assert seen[-1] == 2

    @record(frozen=False)
    class M:
        x: int = 0

    for _ in range(calls):
        m = M(x=4)
    m.x = 5
    assert m.x == 5
