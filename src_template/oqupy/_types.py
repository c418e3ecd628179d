"""Array type aliases used in annotations; the generator reads them to derive vectorize signatures."""

import numpy as np

__runs_on__ = "device"

Matrix = np.ndarray
"""A square (m, m) matrix."""

Vector = np.ndarray
"""A vector of shape (m,)."""
