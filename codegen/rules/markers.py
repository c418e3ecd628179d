"""Host markers: ``@host`` is stripped in both packages (its code stays NumPy/SciPy)."""

import libcst as cst

from codegen.analysis import HOST_MARKER, TemplateTransformer
from codegen.rules.base import Example, Rule


class _Strip(TemplateTransformer):
    RULE = "host-marker"

    def _strip(self, original_node, updated_node):
        kept = [
            new
            for old, new in zip(original_node.decorators, updated_node.decorators)
            if self.decorator_marker(old) != HOST_MARKER
        ]
        if len(kept) != len(updated_node.decorators):
            self.fire()
            updated_node = updated_node.with_changes(decorators=kept)
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        return self._strip(original_node, super().leave_FunctionDef(original_node, updated_node))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef):
        return self._strip(original_node, super().leave_ClassDef(original_node, updated_node))


class HostMarker(Rule):
    """Strip ``@host``: the marked function or class keeps plain NumPy/SciPy in the JAX package too."""

    NAME = "host-marker"
    NEEDS = ("oqupy._codegen.host",)
    VALID = (
        Example(
            template=(
                "import numpy as np\nfrom oqupy._codegen import host\n\n\n@host\ndef f(x):\n    return np.exp(x)\n"
            ),
            numpy="import numpy as np\n\n\ndef f(x):\n    return np.exp(x)\n",
            jax="import numpy as np\n\n\ndef f(x):\n    return np.exp(x)\n",
        ),
    )
    Transformer = _Strip
