"""Validation helpers, progress reporting, and (re-exported from :mod:`oqupy._tensors`) tensor utilities.

Host code: plain Python and NumPy in both packages.  The tensor utilities are device code and live in
:mod:`oqupy._tensors`; they are re-exported here at OQuPy's paths (``oqupy.util.create_delta``, ...).
"""

import sys
import time
from typing import Any, List, Optional, Sequence

from oqupy import config
from oqupy._tensors import add_singleton, create_delta, embed_delta, is_diagonal_matrix

__runs_on__ = "host"

__all__ = [
    "BaseProgress",
    "ProgressBar",
    "ProgressSilent",
    "ProgressSimple",
    "add_singleton",
    "check_convert",
    "check_dimension",
    "check_isinstance",
    "check_true",
    "create_delta",
    "embed_delta",
    "get_progress",
    "increase_list_of_index",
    "is_diagonal_matrix",
]

# -- validation ---------------------------------------------------------------


def check_convert(
    variable: Any, conv_type: Any, name: Optional[str] = None, msg: Optional[str] = None
) -> Any:
    """Return ``conv_type(variable)``; raise ``TypeError`` naming the argument if that fails."""
    try:
        return conv_type(variable)
    except Exception as err:
        label = f"Variable '{name}'" if name is not None else "Variable"
        text = f"{label} must be {getattr(conv_type, '__name__', conv_type)}."
        if msg is not None:
            text += " " + msg
        raise TypeError(text) from err


def check_isinstance(
    variable: Any, types: Any, name: Optional[str] = None, msg: Optional[str] = None
) -> None:
    """Raise ``TypeError`` unless ``variable`` is an instance of ``types``."""
    if not isinstance(variable, types):
        label = f"'{name}'" if name is not None else ""
        text = f"Variable {label} is not of the type {types}."
        if msg is not None:
            text += " " + msg
        raise TypeError(text)


def check_true(expr: Any, msg: Optional[str] = None) -> None:
    """Raise ``ValueError`` with ``msg`` (default: no message) unless ``expr`` is truthy."""
    if not expr:
        raise ValueError(msg if msg is not None else "")


def check_dimension(value: Any, name: str) -> int:
    """Return ``value`` if it is a positive ``int`` (not a bool); raise ``AssertionError`` otherwise (OQuPy's type)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AssertionError(f"Argument '{name}' must be int.")
    assert value > 0, f"Argument '{name}' must be positive."
    return value


def increase_list_of_index(a: List[int], shape: Sequence[int], index: int = -1) -> bool:
    """Advance the multi-index list ``a`` (in place) like an odometer; False when it wraps."""
    a[index] += 1
    if a[index] >= shape[index]:
        if index == -len(shape):
            return False
        a[index] = 0
        return increase_list_of_index(a, shape, index - 1)
    return True


# -- progress ------------------------------------------------------------------


class BaseProgress:
    """Context manager reporting the progress of a loop of ``max_value`` steps (OQuPy's interface).

    Subclasses implement :meth:`enter` (returning the object bound by ``with``), :meth:`exit` and
    :meth:`update`; here they raise ``NotImplementedError``.  ``BaseProgress()`` takes no argument, as in OQuPy.
    """

    def __init__(self, max_value: Optional[int] = None, title: Optional[str] = None) -> None:
        self.max_value = max_value
        self.title = title
        self.step: Optional[int] = 0

    def __enter__(self) -> Any:
        return self.enter()

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        self.exit()

    def enter(self) -> Any:
        """Start reporting; returns the object bound by ``with``."""
        raise NotImplementedError()

    def exit(self) -> None:
        """Stop reporting."""
        raise NotImplementedError()

    def update(self, step: Optional[int] = None) -> None:
        """Record that ``step`` steps (default: one more) are done."""
        raise NotImplementedError()

    def _advance(self, step: Optional[int]) -> None:
        self.step = (self.step or 0) + 1 if step is None else step


class ProgressSilent(BaseProgress):
    """Reports nothing."""

    def enter(self) -> "ProgressSilent":
        return self

    def exit(self) -> None:
        pass

    def update(self, step: Optional[int] = None) -> None:
        self._advance(step)


class ProgressSimple(BaseProgress):
    """Prints the title, then the total wall time at the end."""

    def enter(self) -> "ProgressSimple":
        self._start = time.perf_counter()
        if self.title is not None:
            print(self.title, file=sys.stderr)
        return self

    def exit(self) -> None:
        print(f"Elapsed time: {time.perf_counter() - self._start:.1f}s", file=sys.stderr)

    def update(self, step: Optional[int] = None) -> None:
        self._advance(step)


class ProgressBar(BaseProgress):
    """A tqdm progress bar."""

    def enter(self) -> "ProgressBar":
        from tqdm.auto import tqdm

        self._bar = tqdm(total=self.max_value, desc=self.title, leave=True, file=sys.stderr)
        return self

    def exit(self) -> None:
        self._bar.close()

    def update(self, step: Optional[int] = None) -> None:
        previous = self.step or 0
        self._advance(step)
        self._bar.update((self.step or 0) - previous)


PROGRESS_DICT = {"silent": ProgressSilent, "simple": ProgressSimple, "bar": ProgressBar}


def get_progress(progress_type: Optional[str] = None) -> type:
    """The progress class for ``progress_type`` ('silent', 'simple', 'bar'; default from config)."""
    if progress_type is None:
        progress_type = config.PROGRESS_TYPE
    assert progress_type in PROGRESS_DICT, (
        f"Unknown progress_type='{progress_type}', choose from {list(PROGRESS_DICT)}."
    )
    return PROGRESS_DICT[progress_type]
