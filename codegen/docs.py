"""``docs/rules.md``: every rule with its docstring and before/after examples, rendered from the rule classes."""

import inspect

from codegen.rules import RULES


def _block(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```\n"


def render_rules() -> str:
    lines = [
        "# Codegen rules\n",
        "Every rule is one class in `codegen/rules/`; its examples below are also its tests",
        "(`tests/codegen/test_rules.py`). Every rule checks first, on the untouched template, so a refusal names",
        "`src_template/<file>:<line>:<col>`; the rewrites then run in this order. Outputs are shown before the",
        "formatter (imports sorted and code formatted by the pinned ruff in the real build).\n",
        "| rule | kind | packages |",
        "|---|---|---|",
    ]
    for rule in RULES:
        kind = {(True, True): "check + rewrite", (False, True): "rewrite"}.get(
            (rule.checks(), rule.rewrites()), "refusal"
        )
        backends = ", ".join(f"`oqupy_{b}`" for b in rule.BACKENDS)
        lines.append(f"| [`{rule.NAME}`](#{rule.NAME}) | {kind} | {backends} |")
    lines.append("")
    for rule in RULES:
        lines.append(f"## {rule.NAME}\n")
        lines.append(inspect.cleandoc(rule.__doc__ or "") + "\n")
        for index, example in enumerate(rule.VALID, 1):
            lines.append(f"**Example {index}.** Template:\n")
            lines.append(_block(example.template))
            for backend in ("numpy", "jax"):
                output = getattr(example, backend)
                if output is not None:
                    lines.append(f"`oqupy_{backend}`:\n")
                    lines.append(_block(output))
        for invalid in rule.INVALID:
            lines.append("Refused:\n")
            lines.append(_block(invalid.template))
            lines.append(f"with a diagnostic containing `{invalid.message}`.\n")
        for index, idiom in enumerate(rule.IDIOMS, 1):
            lines.append(f"**Idiom {index}.** Refused:\n")
            lines.append(_block(idiom.before))
            lines.append("translates when written as:\n")
            lines.append(_block(idiom.after))
    return "\n".join(lines)
