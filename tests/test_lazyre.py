"""rfcore.lazyre: a module-level pattern compiled only when first used."""

from __future__ import annotations

import re

from ringfence.rfcore.lazyre import lazy


def test_compiles_on_first_use_and_then_behaves_as_the_pattern():
    pat = lazy(r"(a+)(b)?", re.IGNORECASE)
    assert pat._compiled is None                 # nothing compiled at definition
    m = pat.fullmatch("AAb")
    assert m is not None and m.group(1) == "AA" and m.group(2) == "b"
    assert pat._compiled is re.compile(r"(a+)(b)?", re.IGNORECASE)
    assert pat.pattern == r"(a+)(b)?" and pat.flags & re.IGNORECASE
    assert pat.sub("x", "aa-b-ab") == "x-b-x"
    assert [m.group() for m in pat.finditer("ab aab")] == ["ab", "aab"]


def test_a_bad_pattern_fails_where_it_is_used():
    pat = lazy(r"(")
    try:
        pat.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("a bad pattern compiled")


def test_bytes_patterns():
    assert lazy(rb"[\x1b]").search(b"a\x1bb").start() == 1


def test_every_lazy_pattern_in_the_package_compiles():
    """A typo in a lazy pattern would fail only on its first use, inside classify:
    import every module and compile every pattern now."""
    import gc
    import importlib
    import pkgutil

    import ringfence
    from ringfence.rfcore.lazyre import _Lazy

    skip = ("ringfence.__main__", "ringfence.cli", "ringfence.fast.")
    for mod in pkgutil.walk_packages(ringfence.__path__, "ringfence."):
        if not mod.name.startswith(skip):
            importlib.import_module(mod.name)
    found = [obj for obj in gc.get_objects() if isinstance(obj, _Lazy)]
    assert len(found) >= 25                      # the tables really were found
    for pat in found:
        assert isinstance(pat.compiled(), re.Pattern)
