"""The transformer's promise, fuzzed: whatever it accepts means the same in the template, ``oqupy_numpy``
and ``oqupy_jax`` (results and the caller's inputs afterwards); whatever it refuses carries a diagnostic
with ``file:line:col`` and a rule.

The CI run is derandomized (a fixed sequence of programs) with a small budget; a maintainer's long run:
``OQUPY_FUZZ_EXAMPLES=5000 pytest tests/codegen/test_fuzz_codegen.py -k random`` (and ``OQUPY_FUZZ_STATS=path``
to write the counts of agreements and refusals by rule as JSON).  See docs/architecture.md.
"""

import collections
import json
import os

import jax
import pytest
from hypothesis import HealthCheck, given, settings

from tests.codegen.fuzz_programs import judge, programs

jax.config.update("jax_enable_x64", True)

EXAMPLES = int(os.environ.get("OQUPY_FUZZ_EXAMPLES", "60"))
STATS = os.environ.get("OQUPY_FUZZ_STATS")
_counts: collections.Counter = collections.Counter()
_failures: list[str] = []


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(programs())
def test_random_programs_translate_exactly_or_are_refused(source):
    outcome = judge(source)
    _counts["programs"] += 1
    _counts[outcome.kind] += 1
    for rule in outcome.rules:
        _counts[f"refused-by:{rule}"] += 1
    if STATS:
        if outcome.kind in ("silent", "loud"):
            _failures.append(f"{outcome.kind}: {outcome.detail}\n{source}")
        with open(STATS, "w") as handle:
            json.dump({"counts": dict(sorted(_counts.items())), "failures": _failures}, handle, indent=1)
        return
    assert outcome.kind in ("agree", "refused"), f"{outcome.kind}: {outcome.detail}\n\n{source}"
