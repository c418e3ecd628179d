"""The rules, in the order the pipeline applies their transformers (checkers all run first)."""

from codegen.rules.backend_blocks import BackendBlocks
from codegen.rules.base import Example, Idiom, Invalid, Rule
from codegen.rules.call_refusals import DataDependentShape, OutArgument
from codegen.rules.chained import ChainedWrite
from codegen.rules.imports import NumpyToJax, PackageRename
from codegen.rules.inplace import InplaceUpdate
from codegen.rules.kernel import KernelJit
from codegen.rules.markers import HostMarker
from codegen.rules.refusals import DtypeSafety, InplaceMethod, UnmodelledStatement
from codegen.rules.shape_assign import ShapeAssign
from codegen.rules.subscripts import IndexSafety, ListIndex
from codegen.rules.vectorize import VectorizeSignature
from codegen.rules.write_refusals import ArgumentWrite, AttributeWrite, ClosureWrite, ViewWrite

RULES: tuple[type[Rule], ...] = (
    BackendBlocks,
    ArgumentWrite,
    AttributeWrite,
    ViewWrite,
    ChainedWrite,
    ClosureWrite,
    IndexSafety,
    ListIndex,
    DtypeSafety,
    InplaceMethod,
    OutArgument,
    DataDependentShape,
    UnmodelledStatement,
    ShapeAssign,
    VectorizeSignature,
    InplaceUpdate,
    KernelJit,
    NumpyToJax,
    HostMarker,
    PackageRename,
)

__all__ = ["RULES", "Example", "Idiom", "Invalid", "Rule"]
