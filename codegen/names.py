"""The NumPy/SciPy -> JAX mapping table, keyed by qualified name.

Only names listed here may appear in code that reaches ``oqupy_jax`` outside ``@host`` functions; any
other ``numpy.*`` / ``scipy.*`` name there is refused at generation time.  The value is the
expression written into the JAX package.
"""

_NUMPY_SAME = """
abs absolute all allclose amax amin any append arange argmax argmin argsort argwhere array asarray atleast_1d atleast_2d
bool_ broadcast_to ceil clip complex128 concatenate conj conjugate copy cos cosh count_nonzero cumprod cumsum
diag diagonal diff dot dtype e einsum empty empty_like exp expand_dims eye finfo flatnonzero flip float64 floor full
full_like heaviside hstack identity imag indices inf inner int32 int64 iscomplexobj isclose isfinite isnan kron linspace
log log10 matmul max maximum mean meshgrid min minimum moveaxis nan nan_to_num ndim newaxis nonzero ones ones_like outer
pad pi power prod ravel real repeat reshape round searchsorted shape sign sin sinh size sort sqrt square squeeze
stack std sum swapaxes take take_along_axis tan tanh tensordot tile trace transpose tril triu unique vdot
vectorize vstack where zeros zeros_like
""".split()

_LINALG_SAME = "cholesky det eig eigh eigvalsh eigvals inv matrix_power norm qr solve svd".split()

_SCIPY_LINALG_SAME = "cholesky expm eigh inv qr solve sqrtm svd".split()

NUMPY_TO_JAX: dict[str, str] = {f"numpy.{name}": f"jnp.{name}" for name in _NUMPY_SAME}
NUMPY_TO_JAX.update({f"numpy.linalg.{name}": f"jnp.linalg.{name}" for name in _LINALG_SAME})
NUMPY_TO_JAX["numpy.linalg"] = "jnp.linalg"
NUMPY_TO_JAX["numpy.ndarray"] = "jax.Array"
NUMPY_TO_JAX.update({f"scipy.linalg.{name}": f"jsl.{name}" for name in _SCIPY_LINALG_SAME})

#: Modules a JAX expression needs, by the alias its spelling starts with.
JAX_IMPORTS: dict[str, tuple[str, str | None]] = {
    "jnp": ("jax.numpy", "jnp"),
    "jsl": ("jax.scipy.linalg", "jsl"),
    "jax": ("jax", None),
}

#: NumPy functions that mutate an argument in place.
INPLACE_FUNCTIONS = frozenset(f"numpy.{name}" for name in "copyto put place putmask fill_diagonal".split())

#: Functions whose output shape depends on the data (refused inside kernels).
DATA_DEPENDENT = frozenset(
    f"numpy.{name}" for name in "unique nonzero flatnonzero argwhere extract compress".split()
)

#: Calls producing boolean arrays (a subscript by such a name is a mask).
BOOLEAN_CALLS = frozenset(
    f"numpy.{name}" for name in "isclose isfinite isnan isinf logical_and logical_or logical_not".split()
)

#: Calls that stay on the host: SciPy's quadratures call a Python function (the integrand, translated, runs on
#: Python floats) and NumPy's seeded generator keeps its numbers; outside kernels they stay as written in
#: ``oqupy_jax`` too, with what they return: ``"f"`` a tuple of Python floats (value, error estimate), ``""``
#: something else (a NumPy array, a generator).  Inside a ``@kernel`` (traced) they are refused.
HOST_CALLS: dict[str, str] = {
    "scipy.integrate.quad": "f",
    "scipy.integrate.dblquad": "f",
    "scipy.integrate.tplquad": "f",
    "scipy.integrate.quad_vec": "",
    # NumPy's seeded generator: the same numbers in both packages (``jax.random`` is keyed and functional); a
    # kernel would freeze one draw into its compiled code, so it is refused there like the quadratures
    "numpy.random.default_rng": "",
}
