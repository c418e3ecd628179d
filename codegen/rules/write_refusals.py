"""Refusals of writes whose meaning would differ between the packages: into arguments, through views or
aliases, into attributes, chained subscripts and closures (:mod:`codegen.flow` files the findings)."""

from codegen.rules.base import Example, Idiom, Invalid
from codegen.rules.refusal_base import _FlowRefusal

_HDF5_STORE = """
import h5py


class Store:
    def create(self, filename: str):
        self._f = h5py.File(filename, "w")
        self._data = self._f.create_dataset("data", (0,), maxshape=(None,), dtype="f8")

    def open(self, filename: str):
        self._f = h5py.File(filename, "r")
        self._data = self._f["data"]

    def put(self, step: int, value: float):
        _write(step, self._data, value)


def _write(step, data, value):
    if step >= data.shape[0]:
        data.resize((step + 1,))
    data[step] = value
"""


class ArgumentWrite(_FlowRefusal):
    """Refuse in-place writes into arguments: ``x[i] = v`` or ``x += v`` on a parameter, on a view or alias of
    one (``y = x[1:]``, ``y = np.atleast_1d(x)``), or on a parameter without an ``np.ndarray`` / ``list`` /
    ``dict`` / scalar annotation (it may be an array).  NumPy callers would see the change, JAX callers not.
    ``@host`` functions too: they get the caller's array as NumPy has it in ``oqupy_numpy``, and a read-only
    copy or view of a ``jax.Array`` in ``oqupy_jax``.

    A write by string keys (``h5file.attrs["name"] = v``) is never one into a JAX array (none has string keys):
    it stays the object's ``__setitem__`` in both packages and is not refused.  Nor is a write into a parameter
    of a private module function (``_name``) that every call in the module passes no array: an attribute of
    ``self`` that the class binds only to HDF5 datasets (``self._f.create_dataset(...)``, ``self._f["k"]`` with
    ``self._f = h5py.File(...)``), lists or ``None`` (``codegen/flow/call_sites.py``).

    Idiom: ``x = x.copy()`` first and return the result; annotate parameters.
    """

    HOST = True
    VALID = (
        # every call passes an HDF5 dataset: h5py's own ``resize`` and ``__setitem__``, unchanged in both packages
        Example(_HDF5_STORE, numpy=_HDF5_STORE, jax=_HDF5_STORE),
    )

    def renders(self, finding) -> bool:
        return not self.in_host or any(key == "argument" for key, _ in finding.facts)

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(x: np.ndarray):
                x[0] = 1.0
                return x
            """,
            """
            import numpy as np


            def f(x: np.ndarray):
                y = np.array(x, dtype=np.float64)
                y[:1] = 1.0
                return y
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x[0] = 1.0
                return x
            """,
            "argument `x`",
        ),
        Invalid(  # one call passes what may be an array: the parameter may be one
            """
            import h5py
            import numpy as np


            class Store:
                def create(self, filename: str):
                    self._f = h5py.File(filename, "w")
                    self._data = self._f.create_dataset("data", (4,), dtype="f8")

                def put(self, step: int, value: float):
                    _write(step, self._data, value)
                    _write(step, np.zeros(4), value)


            def _write(step, data, value):
                data[step] = value
            """,
            "unannotated argument `data`",
        ),
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x += 1.0
                return x
            """,
            "argument `x`",
        ),
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                y = np.atleast_1d(x)
                y[0] = 1.0
                return y
            """,
            "argument `x` through `y`",
        ),
        Invalid(
            """
            def f(u):
                u += 1.0
                return u
            """,
            "unannotated argument `u`",
        ),
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import host


            @host
            def normalise(x: np.ndarray):
                y = np.asarray(x)
                y[:] = y / y.sum()
            """,
            "in-place write to the argument `x` through `y`",
        ),
    )


class ViewWrite(_FlowRefusal):
    """Refuse a write into an array while another live name (or a container, attribute or call) may share
    its memory, and writes through views that may be read-only or not owned by the function.

    The analysis is flow-sensitive (facts per program point, joined at branches and loops) and alias-aware:
    ``w = a[1:]``, ``w = a``, ``a = w = np.zeros(3)``, ``lst = [a]`` all make ``a`` and ``w`` share memory;
    a write into either is refused while the other is used later.  A view whose base is dead may be
    written (``w = a[1:]; w[0] = 1; return w``).  Functions that may return views are listed in
    ``codegen/flow.py``; every NumPy function outside its fresh and writable-view tables counts as one.

    Idiom: take ``.copy()`` where the second name is bound, or bind a new name.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:]
                a[:1] = 5.0
                return a, w
            """,
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:].copy()
                a[:1] = 5.0
                return a, w
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                b = a[0]
                b[1] = 5.0
                return a
            """,
            "write into `b` while `a` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(2)
                a.real[0] = 1.0
                return a
            """,
            "view `.real`",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:]
                a[1] = 5.0
                return w
            """,
            "write into `a` while `w` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.arange(3.0)
                w = np.flip(a)
                w[0] = 5.0
                return a, w
            """,
            "write into `w` while `a` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self):
                    self.x = np.zeros(3)
                    w = self.x[1:]
                    self.x[1] = 5.0
                    return w
            """,
            "`w` shares its memory",
        ),
    )


class AttributeWrite(_FlowRefusal):
    """Refuse in-place writes into an array held by an attribute (``self.x[i] = v``, ``self.x[i] += v``,
    ``self.x += v``, or a write through ``w = self.x``) unless this function allocated that array, stored it
    in the attribute itself, and no other live name, container or call can see it (then the write becomes
    ``self.x = self.x.at[i].set(v)``).  NumPy changes the array for every holder (the caller that passed it,
    another object), JAX would rebind one attribute.  An attribute counts as a container or a number (writes
    allowed) when the class annotates it (``self.cache: dict = {}``), declares it by a property annotated with
    such a type that returns it (``def step(self) -> int: return self._step``), or only ever assigns it
    literals or local names that its method binds only to list (dict) displays (``caps = []; ...;
    self.caps = caps``).  Writes by string keys (``self._f.attrs["name"] = v``: an HDF5 file's attributes, a
    mapping; a loop variable over a list of string literals built here) are no array writes: no JAX array has
    string keys, so both packages run the object's own
    ``__setitem__``; like an unknown call, such a write may change any object's attributes.

    Idiom: build the new array in a local name and assign it to the attribute.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            class A:
                def __init__(self, x: np.ndarray):
                    self.x = x

                def bump(self, v: float):
                    self.x[:1] += v
            """,
            """
            import numpy as np


            class A:
                def __init__(self, x: np.ndarray):
                    self.x = x

                def bump(self, v: float):
                    x = np.array(self.x, dtype=np.float64)
                    x[:1] += v
                    self.x = x
            """,
        ),
    )
    VALID = (
        Example(  # a number declared by its property, a list built in a local name
            """
            import numpy as np


            class A:
                def __init__(self):
                    self._step = None
                    self._caps = []

                @property
                def step(self) -> int:
                    "The current step."
                    return self._step

                def initialise(self, step=None):
                    self._step = step

                def build(self, n: int):
                    caps = []
                    for k in range(n):
                        caps.insert(0, np.zeros(2))
                    self._caps = caps

                def advance(self, k: int):
                    self._caps[k] = np.ones(2)
                    self._step += 1
            """,
            jax="""
            import jax.numpy as jnp


            class A:
                def __init__(self):
                    self._step = None
                    self._caps = []

                @property
                def step(self) -> int:
                    "The current step."
                    return self._step

                def initialise(self, step=None):
                    self._step = step

                def build(self, n: int):
                    caps = []
                    for k in range(n):
                        caps.insert(0, jnp.zeros(2))
                    self._caps = caps

                def advance(self, k: int):
                    self._caps[k] = jnp.ones(2)
                    self._step += 1
            """,
        ),
        Example(  # string keys: an HDF5 file's attributes (or any mapping), never an array's elements
            """
            import h5py


            class Store:
                def create(self, filename: str, name: str):
                    self._f = h5py.File(filename, "w")
                    self._f.attrs["name"] = name
                    self._f.attrs[f"{name}-writing"] = True

                def rename(self, key: str, value: str):
                    self._f.attrs[key] = value


            def set_writing(h5file, writing: bool):
                h5file.attrs["writing"] = writing
            """,
            jax="""
            import h5py


            class Store:
                def create(self, filename: str, name: str):
                    self._f = h5py.File(filename, "w")
                    self._f.attrs["name"] = name
                    self._f.attrs[f"{name}-writing"] = True

                def rename(self, key: str, value: str):
                    self._f.attrs[key] = value


            def set_writing(h5file, writing: bool):
                h5file.attrs["writing"] = writing
            """,
        ),
        Example(  # string keys from a list of strings built here: a dict of lists filled by ``append``
            """
            class Table:
                def __init__(self, rows: list):
                    self._columns = {}
                    for i, name in enumerate(["time", "value"]):
                        self._columns[name] = []
                        for row in rows:
                            self._columns[name].append(row[i])
            """,
            numpy="""
            class Table:
                def __init__(self, rows: list):
                    self._columns = {}
                    for i, name in enumerate(["time", "value"]):
                        self._columns[name] = []
                        for row in rows:
                            self._columns[name].append(row[i])
            """,
            jax="""
            class Table:
                def __init__(self, rows: list):
                    self._columns = {}
                    for i, name in enumerate(["time", "value"]):
                        self._columns[name] = []
                        for row in rows:
                            self._columns[name].append(row[i])
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, v: float):
                    self.x[1:] = v
            """,
            "the attribute `self.x`",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self):
                    w = self.x
                    w[0] = 1.0
                    return w
            """,
            "`w`, which may be the array of an attribute",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, v: float):
                    self.total += v
            """,
            "`+=` on the attribute `self.total`",
        ),
        Invalid(  # the unannotated argument may be an array: no property declares the attribute a number
            """
            class A:
                def initialise(self, step=None):
                    self._step = step

                def advance(self):
                    self._step += 1
            """,
            "`+=` on the attribute `self._step`",
        ),
        Invalid(  # ``caps`` is also bound to an argument: it may hold the caller's array
            """
            import numpy as np


            class A:
                def build(self, given=None):
                    caps = []
                    if given is not None:
                        caps = given
                    self._caps = caps

                def advance(self, k: int):
                    self._caps[k] = np.ones(2)
            """,
            "the attribute `self._caps`",
        ),
        Invalid(  # an integer key: the attribute may hold an array
            """
            class A:
                def f(self, key: int, value: float):
                    self._f.attrs[key] = value
            """,
            "the attribute `self._f.attrs`",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, helper):
                    self.x = np.zeros(3)
                    helper(self)
                    self.x[0] = 1.0
                    return self.x
            """,
            "the attribute `self.x`",
        ),
    )


class ClosureWrite(_FlowRefusal):
    """Refuse writes from a nested function into an array of the enclosing function, from a function into an
    array of the module, and into names declared ``global`` / ``nonlocal`` (``x = x.at[i].set(v)`` would bind a
    new local name in JAX, and the array itself cannot be written).

    Idiom: pass the array in and return the updated one.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g():
                    a[:1] = 1.0

                g()
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g(b):
                    return np.concatenate([np.ones(1), b[1:]])

                a = g(a)
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g():
                    a[0] = 1.0

                g()
                return a
            """,
            "enclosing scope",
        ),
        Invalid(
            """
            import numpy as np

            TABLE = np.zeros(3)


            def f(v: float):
                TABLE[0] = v
                return TABLE
            """,
            "module-level array",
        ),
    )
