"""Flow-sensitive, alias-aware array facts for one function (what makes an in-place write translatable).

``oqupy_jax`` turns ``x[i] = v`` into ``x = x.at[i].set(v)``: only the name ``x`` sees the new value.  That
is NumPy's meaning only when no other live name, container or caller can see ``x``'s memory, when the
index is in bounds (JAX drops out-of-bounds writes) and free of duplicates, and when NumPy's in-place
casting rules agree with JAX's promotion.  This module proves those facts per program point and reports
every write it cannot prove; the refusal rules in :mod:`codegen.rules.refusals` print the reports.

The abstraction:

- every value is a :class:`Val`: which kinds it may have (``array``, ``num``, ``list``, ``dict``, ``other``,
  ``unknown``), which memory (*buffers*) it may share (``new@<site>`` for an allocation in this function,
  ``param:<name>`` for an argument, ``?`` for memory of unknown origin), whether it is *owned* (every buffer
  allocated here and the value writable), and when known its element kind, shape and C-contiguity;
- states map names to values, are joined at branches and iterated to a fixed point over loops; a buffer
  stored into a container, an attribute or passed to an unknown function is *escaped* for good;
- a write to ``x`` is safe when ``x`` is owned, none of its buffers escaped, and no other name that may
  share a buffer is live (read later, read in the enclosing loop, or referenced by a closure).

The rooms: :mod:`~codegen.flow.numpy_model` (which NumPy functions return fresh arrays, views or numbers; element
kinds), :mod:`~codegen.flow.values` (the lattice and :class:`Finding`), :mod:`~codegen.flow.skeleton` (source
order), :mod:`~codegen.flow.attributes` (what ``self.x`` may hold), and the interpreter
(:mod:`~codegen.flow.interpreter`) with its mixins for expressions, writes and indices.
"""

from codegen.flow.attributes import class_attribute_kinds
from codegen.flow.interpreter import FunctionFlow
from codegen.flow.numpy_model import FRESH_FUNCTIONS, WRITABLE_VIEW_FUNCTIONS, dtype_of, ufunc_inputs
from codegen.flow.skeleton import Skeleton
from codegen.flow.values import Finding, Val

__all__ = [
    "FRESH_FUNCTIONS",
    "WRITABLE_VIEW_FUNCTIONS",
    "Finding",
    "FunctionFlow",
    "Skeleton",
    "Val",
    "class_attribute_kinds",
    "dtype_of",
    "ufunc_inputs",
]
