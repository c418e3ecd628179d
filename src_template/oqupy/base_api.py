"""Base class of every user-facing object: a name and a description (plain Python, runs on the host)."""

from typing import Optional

from oqupy.config import SEPERATOR

__runs_on__ = "host"

_UNNAMED = "__unnamed__"
_NO_DESCRIPTION = "__no_description__"


class BaseAPIClass:
    """Base class with a ``name`` and a ``description``.

    Parameters
    ----------
    name: str
        Name of the object (default ``"__unnamed__"``).
    description: str
        Free-text description (default ``"__no_description__"``).
    """

    _str_key_width = 14  # column of the "=" in ``str()``, as OQuPy 0.5 prints each class

    def __init__(self, name: Optional[str] = None, description: Optional[str] = None) -> None:
        self.name = name
        self.description = description

    def __str__(self) -> str:
        lines = [SEPERATOR, f"{type(self).__name__} object: {self.name}\n", f" {self.description}\n"]
        for key, value in self._str_items():
            lines.append(f"  {key:<{self._str_key_width}}= {value} \n")
        return "".join(lines)

    def _str_items(self) -> list:
        """(key, value) pairs that subclasses add to ``__str__``."""
        return []

    @property
    def name(self) -> str:
        """Name of the object."""
        return self._name

    @name.setter
    def name(self, new_name: Optional[str] = None) -> None:
        if new_name is None:
            new_name = _UNNAMED
        assert isinstance(new_name, str), "Name must be text."
        self._name = new_name

    @name.deleter
    def name(self) -> None:
        self.name = None

    @property
    def description(self) -> str:
        """Detailed description of the object."""
        return self._description

    @description.setter
    def description(self, new_description: Optional[str] = None) -> None:
        if new_description is None:
            new_description = _NO_DESCRIPTION
        assert isinstance(new_description, str), "Description must be text."
        self._description = new_description

    @description.deleter
    def description(self) -> None:
        self.description = None
