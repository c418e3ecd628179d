"""The shape of a rule: a small class with a docstring, examples, a checker and/or a transformer."""

from dataclasses import dataclass
from typing import ClassVar, Optional

from codegen.analysis import TemplateTransformer, TemplateVisitor


@dataclass(frozen=True)
class Example:
    """A template snippet and what each package must contain (``None``: not checked for that backend)."""

    template: str
    numpy: Optional[str] = None
    jax: Optional[str] = None


@dataclass(frozen=True)
class Invalid:
    """A template snippet the rule must refuse, with a fragment of the expected message."""

    template: str
    message: str
    backend: str = "jax"


class Rule:
    """Base class of all rules.

    ``Checker`` runs on the untouched template (exact positions, every problem collected); ``Transformer``
    rewrites the module for the backends in ``BACKENDS``.  A rule with a transformer that never fires on
    the whole template is reported as unused by ``python -m codegen check``.
    """

    NAME: ClassVar[str] = ""
    BACKENDS: ClassVar[tuple[str, ...]] = ("numpy", "jax")
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    Checker: ClassVar[Optional[type[TemplateVisitor]]] = None
    Transformer: ClassVar[Optional[type[TemplateTransformer]]] = None
    #: qualified names (a trailing "." matches a prefix) or statement kinds ("<Assign>") without which the
    #: transformer cannot fire; empty: always run
    NEEDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def rewrites(cls) -> bool:
        return cls.Transformer is not None
