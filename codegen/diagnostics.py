"""Diagnostics that point at the template: ``src_template/<file>:<line>:<col>: [rule] message; idiom``."""

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem found in the template."""

    path: str
    line: int
    column: int
    rule: str
    message: str
    idiom: str = ""

    def __str__(self) -> str:
        text = f"{self.path}:{self.line}:{self.column}: [{self.rule}] {self.message}"
        if self.idiom:
            text += f"; {self.idiom}"
        return text


class CodegenError(Exception):
    """Raised when the template cannot be translated; carries every diagnostic of the run."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(set(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))
