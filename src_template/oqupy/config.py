"""Package-wide constants (OQuPy 0.5 names and values)."""

import numpy as np

__runs_on__ = "device"

NpDtype = np.complex128
"""dtype of all complex data: states, operators, tensors."""

NpDtypeReal = np.float64
"""dtype of all real data."""

SEPERATOR = "----------------------------------------------\n"
"""Separator line used by ``__str__`` (spelling kept from OQuPy)."""

PROGRESS_TYPE = "bar"
"""Default progress reporting: 'silent', 'simple' or 'bar'."""

INTEGRATE_EPSREL = 2**-26
"""Relative tolerance of ``quad`` / ``quad_vec`` integrations."""

SUBDIV_LIMIT = 256
"""Subdivision limit of ``quad`` integrations."""

TEMPO_BACKEND_CONFIG: dict = {}
PT_TEMPO_BACKEND_CONFIG: dict = {}

MAX_DKMAX = 256
PT_MAX_DKMAX = 256
MAX_SYS_SAMPLES = 5000
DEFAULT_TOLERANCE = 3.9e-3
PT_DEFAULT_TOLERANCE = 3.9e-3
PT_TEBD_DEFAULT_ORDER = 2
PT_TEBD_DEFAULT_EPSREL = 1e-5

DEFAULT_TOLERANCE_DEGENERACY = 12
"""Decimals kept when detecting degenerate coupling eigenvalue pairs."""
