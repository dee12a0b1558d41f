"""Light records: the small subset of ``dataclasses`` the hot paths use, made cheap.

Why not ``dataclasses``: ``ringfence hook`` / ``check --json`` / ``run`` start a
fresh interpreter per agent command. ``import dataclasses`` pulls ``inspect``
(and through it ``ast``, ``dis``, ``tokenize``...), and every ``@dataclass``
class costs several ``exec`` calls at import time; across the ~40 records on
the run path that was a third of its start-up. ``@record`` generates ONE
``__init__`` per class (one ``exec``) and shares generic ``__eq__``,
``__hash__``, ``__repr__`` and frozen ``__setattr__`` between all records.
The ``__init__`` is compiled only once a class has been instantiated
``COMPILE_AFTER`` times (a generic one binds the arguments until then), so a
record a process builds a few times, or never, costs no exec at all.

Semantics kept from ``@dataclass(frozen=True)`` (the default here):
positional/keyword ``__init__`` in annotation order (base-record fields
first), ``field(default=, default_factory=, repr=, compare=)``, equality only
between instances of the same class, hashing of the compared values for frozen
records (``__hash__ = None`` for mutable ones), ``repr`` as ``Name(a=1, b=2)``,
assignment and deletion raise ``FrozenInstanceError`` (an ``AttributeError``),
an optional ``__post_init__``. Methods a class defines itself are kept.
Mutable defaults (list, dict, set) are refused, as dataclasses does, because
every instance would share them.

Module-level ``replace()``, ``asdict()``, ``fields()`` and ``is_record()``
stand in for their ``dataclasses`` namesakes.
"""

from __future__ import annotations

from operator import attrgetter

__all__ = ["FrozenInstanceError", "Field", "field", "record", "replace", "asdict",
           "fields", "is_record"]

_MISSING = object()
_FACTORY = object()       # the __init__ default of a default_factory field


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class Field:
    __slots__ = ("name", "default", "default_factory", "repr", "compare")

    def __init__(self, default=_MISSING, default_factory=_MISSING, repr=True, compare=True):
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING or self.default_factory is not _MISSING

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(*, default=_MISSING, default_factory=_MISSING, repr: bool = True,
          compare: bool = True) -> Field:
    """Like ``dataclasses.field`` (the options records support)."""
    return Field(default, default_factory, repr, compare)


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r} of frozen "
                              f"{type(self).__name__}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r} of frozen {type(self).__name__}")


def _eq(self, other):
    if other.__class__ is self.__class__:
        key = self.__record_key__
        return key(self) == key(other)
    return NotImplemented


def _hash(self):
    return hash(self.__record_key__(self))


def _repr(self):
    parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record_repr__)
    return f"{type(self).__qualname__}({parts})"


def _key(names: tuple[str, ...]):
    # Always a tuple, like dataclasses' (a, b) comparison and hash((a, b)).
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return attrgetter(*names)


def _is_classvar(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _collect(cls) -> dict[str, Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        found.update(base.__dict__.get("__record_fields__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        if isinstance(f.default, (list, dict, set)):
            raise ValueError(f"{cls.__name__}.{name}: mutable default "
                             f"{type(f.default).__name__}; use default_factory")
        f.name = name
        if isinstance(value, Field):
            if f.default is _MISSING:
                delattr(cls, name)     # no class attribute shadowing a required field
            else:
                setattr(cls, name, f.default)
        found[name] = f
    return found


def _check_order(cls, flds: list[Field]) -> None:
    seen_default = False
    for f in flds:
        if f.has_default:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__name__}: non-default field {f.name!r} "
                            "follows a field with a default")


# Instantiations served by the generic __init__ before the class gets a compiled
# one. Compiling costs one exec (~100-200 us); the generic one a few us more per
# call than the compiled one, so the exec pays off after a few dozen calls.
COMPILE_AFTER = 48


def _lazy_init(cls, flds: list[Field], frozen: bool):
    """An ``__init__`` that binds arguments generically for the first
    ``COMPILE_AFTER`` instantiations, then compiles the real one and replaces itself.

    Many records are never instantiated in a given process (a hook never builds
    a SandboxSpec), and most that are are built a few times (a hook builds one
    Profile): neither pays for an exec. Hot records get the compiled one.
    """
    generic = _generic_init(cls, flds, frozen)
    calls = 0

    def __init__(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        if calls < COMPILE_AFTER:
            return generic(self, *args, **kwargs)
        real = _make_init(cls, flds, frozen)
        cls.__init__ = real
        real(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _generic_init(cls, flds: list[Field], frozen: bool):
    """The compiled ``__init__``'s semantics without an exec (same TypeErrors for
    missing, extra, duplicate and unknown arguments)."""
    names = tuple(f.name for f in flds)
    by_name = {f.name: f for f in flds}
    post = hasattr(cls, "__post_init__")
    put = object.__setattr__ if frozen else setattr
    where = f"{cls.__qualname__}.__init__()"

    def init(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{where} takes {len(names) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in by_name:
                raise TypeError(f"{where} got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{where} got multiple values for argument {key!r}")
            values[key] = value
        for name in names:
            if name in values:
                value = values[name]
            else:
                f = by_name[name]
                if f.default_factory is not _MISSING:
                    value = f.default_factory()
                elif f.default is not _MISSING:
                    value = f.default
                else:
                    raise TypeError(f"{where} missing required argument: {name!r}")
            put(self, name, value)
        if post:
            self.__post_init__()

    return init


def _make_init(cls, flds: list[Field], frozen: bool):
    env: dict = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    params, body = [], []
    for f in flds:
        n = f.name
        if f.default_factory is not _MISSING:
            env[f"_f_{n}"] = f.default_factory
            params.append(f"{n}=_FACTORY")
            value = f"_f_{n}() if {n} is _FACTORY else {n}"
        elif f.default is not _MISSING:
            env[f"_d_{n}"] = f.default
            params.append(f"{n}=_d_{n}")
            value = n
        else:
            params.append(n)
            value = n
        body.append(f"_set(self, {n!r}, {value})" if frozen else f"self.{n} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    src = (f"def __init__(self, {', '.join(params)}):\n    "
           + "\n    ".join(body or ["pass"]) + "\n")
    exec(src, env)   # noqa: S102 - source built from identifiers of our own classes
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def record(cls=None, /, *, frozen: bool = True):
    """Class decorator: ``@record`` (frozen) or ``@record(frozen=False)``."""

    def wrap(cls):
        flds = _collect(cls)
        items = list(flds.values())
        own = cls.__dict__

        def put(name, value):
            if name not in own:
                setattr(cls, name, value)

        cls.__record_fields__ = flds
        cls.__record_key__ = staticmethod(_key(tuple(f.name for f in items if f.compare)))
        cls.__record_repr__ = tuple(f.name for f in items if f.repr)
        cls.__match_args__ = tuple(flds)
        _check_order(cls, items)
        put("__init__", _lazy_init(cls, items, frozen))
        put("__repr__", _repr)
        put("__eq__", _eq)
        explicit_hash = own.get("__hash__", _MISSING) is not None and "__hash__" in own
        if not explicit_hash:
            cls.__hash__ = _hash if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        return cls

    return wrap if cls is None else wrap(cls)


def is_record(obj) -> bool:
    """True for a record class or instance."""
    return hasattr(obj if isinstance(obj, type) else type(obj), "__record_fields__")


def fields(obj) -> tuple[Field, ...]:
    try:
        return tuple(obj.__record_fields__.values())
    except AttributeError:
        raise TypeError(f"{obj!r} is not a record") from None


def replace(obj, /, **changes):
    """A copy of ``obj`` with ``changes`` (unknown names are a TypeError)."""
    for name in obj.__record_fields__:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)


def asdict(obj, *, dict_factory=dict):
    """Recursively convert records (and lists/tuples/dicts of them) to dicts."""
    if hasattr(type(obj), "__record_fields__"):
        return dict_factory((n, asdict(getattr(obj, n), dict_factory=dict_factory))
                            for n in obj.__record_fields__)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):          # namedtuple
        return type(obj)(*(asdict(v, dict_factory=dict_factory) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(asdict(v, dict_factory=dict_factory) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((asdict(k, dict_factory=dict_factory),
                          asdict(v, dict_factory=dict_factory)) for k, v in obj.items())
    return obj
