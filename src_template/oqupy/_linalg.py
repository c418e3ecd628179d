"""Linear algebra that JAX cannot do natively on every device.

``eig`` (non-symmetric eigendecomposition) is computed by LAPACK on the host through
``jax.pure_callback``, so it works inside ``jax.jit`` on any device and returns its result on the
default device.  Eigenvalues and eigenvectors are always complex128; eigenvector phases and order are
LAPACK's, as in NumPy.  No autodiff through it.  Hermitian problems should use ``eigh``, which is native.
"""

from typing import Tuple

import jax
import numpy as np

from oqupy._codegen import host

__backends__ = ("jax",)


@host
def _host_eig(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    values, vectors = np.linalg.eig(np.asarray(matrix))
    return values.astype(np.complex128), vectors.astype(np.complex128)


def eig(matrix: jax.Array) -> Tuple[jax.Array, jax.Array]:
    """Eigenvalues ``w`` and right eigenvectors ``v`` (columns) with ``matrix @ v = v * w``."""
    shapes = (
        jax.ShapeDtypeStruct(matrix.shape[:-1], np.complex128),
        jax.ShapeDtypeStruct(matrix.shape, np.complex128),
    )
    return jax.pure_callback(_host_eig, shapes, matrix, vmap_method="sequential")
