"""The shape of a rule: one class with a docstring, examples, ``check_`` hooks and/or a rewrite.

A rule is a ``cst.CSTTransformer`` that the pipeline uses in two modes:

- **check**: ``rule.check(wrapper)`` walks the untouched template and calls the rule's ``check_<Node>(node)``
  hooks (pre-order; return ``False`` to skip the children) and ``check_leave_<Node>(node)`` hooks
  (post-order); they report problems with ``self.report(node, message, idiom)``.  The code of the other
  backend's ``if BACKEND == ...`` branch is not visited, so positions are exact template positions.
- **rewrite**: ``rule.rewrite(module)`` runs the ordinary libcst ``visit_<Node>`` / ``leave_<Node>`` methods
  for one backend; a rewrite calls ``self.fire()``.

In both modes the base keeps the context (``in_host``, ``in_kernel``, ``scopes``, ``arrays``,
``annotations``) around the rule's hooks, so hooks never call ``super()``.  The rule's name is its class name
in kebab case (``InplaceUpdate`` -> ``inplace-update``).
"""

import re
import textwrap
from dataclasses import dataclass
from typing import ClassVar, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider

from codegen.analysis import MarkerContext, ModuleContext, backend_test, kept_branch
from codegen.diagnostics import Diagnostic


def _code(text: str) -> str:
    """An example's code as written in an indented triple-quoted string: dedented, first newline dropped."""
    return textwrap.dedent(text).removeprefix("\n")


@dataclass(frozen=True)
class Example:
    """A template snippet and what each package must contain (``None``: not checked for that backend)."""

    template: str
    numpy: Optional[str] = None
    jax: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("template", "numpy", "jax"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _code(value))


@dataclass(frozen=True)
class Invalid:
    """A template snippet the rule must refuse, with a fragment of the expected message."""

    template: str
    message: str
    backend: str = "jax"

    def __post_init__(self) -> None:
        object.__setattr__(self, "template", _code(self.template))


@dataclass(frozen=True)
class Idiom:
    """A refused template snippet (``before``) and its translatable rewrite (``after``), for one backend."""

    before: str
    after: str
    backend: str = "jax"

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", _code(self.before))
        object.__setattr__(self, "after", _code(self.after))


class _CheckWalk(cst.CSTVisitor):
    """Drives a rule in check mode (a visitor, so the checked tree is never rebuilt)."""

    def __init__(self, rule: "Rule") -> None:
        super().__init__()
        self.rule = rule

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self.rule._check_visit(node, self)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.rule._check_leave(original_node)


class Rule(MarkerContext, cst.CSTTransformer):
    """Base class of all rules.

    ``BACKENDS``: the packages the rule applies to (its checks and its rewrite).  ``NEEDS``: qualified names
    (a trailing "." matches a prefix) or statement kinds (``"<subscript-write>"``) without which the rewrite
    cannot fire; empty: always run.  A rule that rewrites but fires on nothing in the whole template is
    reported as unused by ``python -m codegen check --full`` unless ``MAY_BE_IDLE``.
    """

    NAME: ClassVar[str] = ""
    BACKENDS: ClassVar[tuple[str, ...]] = ("numpy", "jax")
    NEEDS: ClassVar[tuple[str, ...]] = ()
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    IDIOMS: ClassVar[tuple[Idiom, ...]] = ()
    #: a refusal whose rewrite only spares authors a manual one (``a[i][j]`` -> ``a[i, j]``), or the translation of
    #: a basic construct that the template may happen not to use (``inplace-update``): the template may have
    #: nothing for it, so it is not reported as unused
    MAY_BE_IDLE: ClassVar[bool] = False

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)
    _REWRITE_METADATA = (QualifiedNameProvider, ParentNodeProvider)  # positions only matter in checks

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "NAME" not in cls.__dict__:
            cls.NAME = re.sub(r"(?<!^)(?=[A-Z])", "-", cls.__name__).lower()

    def __init__(self, ctx: ModuleContext) -> None:
        super().__init__()
        self._init_context(ctx)

    @classmethod
    def checks(cls) -> bool:
        return any(name.startswith("check_") for name in dir(cls))

    @classmethod
    def rewrites(cls) -> bool:
        return any(
            name.startswith(("visit_", "leave_")) and getattr(cls, name) is not getattr(Rule, name, None)
            for name in dir(cls)
        )

    # -- the two modes -----------------------------------------------------------------------------
    def check(self, wrapper: MetadataWrapper) -> None:
        """Check mode: call the ``check_`` hooks on the untouched module of ``wrapper``."""
        self.metadata = wrapper.resolve_many(self.get_inherited_dependencies())
        try:
            wrapper.module.visit(_CheckWalk(self))
        finally:
            self.metadata = {}

    def rewrite(self, module: cst.Module) -> cst.Module:
        """Rewrite mode: the ``visit_`` / ``leave_`` methods transform ``module`` for ``self.ctx.backend``."""
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.metadata = wrapper.resolve_many(self._REWRITE_METADATA)
        try:
            return wrapper.module.visit(self)
        finally:
            self.metadata = {}

    # -- what hooks call ---------------------------------------------------------------------------
    def report(self, node: cst.CSTNode, message: str, idiom: str = "") -> None:
        self.ctx.diagnostics.append(self._diagnostic(node, message, idiom))

    def note(self, node: cst.CSTNode, message: str, idiom: str = "") -> None:
        """A finding that does not refuse the module (``ModuleContext.notes``)."""
        self.ctx.notes.append(self._diagnostic(node, message, idiom))

    def _diagnostic(self, node: cst.CSTNode, message: str, idiom: str) -> Diagnostic:
        start = self.get_metadata(PositionProvider, node).start
        return Diagnostic(self.ctx.path, start.line, start.column + 1, self.NAME, message, idiom)

    def report_findings(self, node: cst.FunctionDef | cst.Module) -> None:
        """Report what the flow analysis of ``node`` filed under this rule and :meth:`renders` selects."""
        for finding in self.flow(node).problems.values():
            if finding.rule == self.NAME and self.renders(finding):
                self.report(finding.node, finding.message, finding.idiom)

    def renders(self, finding) -> bool:
        """Whether this rule reports ``finding`` here (by default: outside ``@host`` code)."""
        return not self.in_host

    def fire(self) -> None:
        self.ctx.fire(self.NAME)

    # -- dispatch ----------------------------------------------------------------------------------
    def _check_visit(self, node: cst.CSTNode, walk: _CheckWalk) -> bool:
        self.enter_node(node)
        hook = getattr(self, f"check_{type(node).__name__}", None)
        if hook is not None and hook(node) is False:
            return False
        if isinstance(node, cst.If):
            test = backend_test(node.test, self.qname)
            if test is not None:  # visit only the branch this backend keeps
                kept = kept_branch(node, test, self.ctx.backend)
                if kept is not None and not isinstance(kept, cst.If):
                    kept.visit(walk)
                return False
        return True

    def _check_leave(self, node: cst.CSTNode) -> None:
        hook = getattr(self, f"check_leave_{type(node).__name__}", None)
        if hook is not None:
            hook(node)
        self.leave_node(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.enter_node(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        result = super().on_leave(original_node, updated_node)
        self.leave_node(original_node)
        return result
