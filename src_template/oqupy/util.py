"""Progress reporting, and (re-exported) validation helpers and tensor utilities.

Host code: plain Python and NumPy in both packages.  The validation helpers live in :mod:`oqupy._validation`
(the one place for them) and the tensor utilities, device code, in :mod:`oqupy._tensors`; both are re-exported
here at OQuPy's paths (``oqupy.util.check_convert``, ``oqupy.util.create_delta``, ...).
"""

import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from oqupy import config
from oqupy._tensors import add_singleton, create_delta, embed_delta, is_diagonal_matrix
from oqupy._validation import check_convert, check_dimension, check_isinstance, check_true

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

# -- validation: the helpers live in oqupy._validation (re-exported above) ---------------------------------


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
    :meth:`set_status` (an addition) records figures a long loop reports as it goes, such as a bond dimension.
    """

    def __init__(self, max_value: Optional[int] = None, title: Optional[str] = None) -> None:
        self.max_value = max_value
        self.title = title
        self.step: Optional[int] = 0
        self.status: Dict[str, Any] = {}

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

    def set_status(self, **fields: Any) -> None:
        """Show ``fields`` (e.g. ``bond=41``) beside the progress; not part of OQuPy's interface."""
        self.status.update(fields)

    def _advance(self, step: Optional[int]) -> None:
        self.step = (self.step or 0) + 1 if step is None else step

    def _status_text(self) -> str:
        return ", ".join(f"{key} {value}" for key, value in self.status.items())


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
        status = f" ({self._status_text()})" if self.status else ""
        print(f"Elapsed time: {time.perf_counter() - self._start:.1f}s{status}", file=sys.stderr)

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

    def set_status(self, **fields: Any) -> None:
        super().set_status(**fields)
        self._bar.set_postfix_str(self._status_text(), refresh=False)

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
