"""Packaging data of the generated packages: names, descriptions, dependencies.

The version, the exports and the package docstring belong to the template (``src_template/oqupy/__init__.py``).
"""

PYTHON_REQUIRES = ">=3.11"

#: backend -> distribution / import name
PACKAGES = {"numpy": "oqupy_numpy", "jax": "oqupy_jax"}

DESCRIPTIONS = {
    "numpy": "TEMPO and process tensors for non-Markovian open quantum systems (NumPy/SciPy).",
    "jax": "TEMPO and process tensors for non-Markovian open quantum systems (JAX, jit-compiled, float64).",
}

_COMMON = ["numpy>=2", "scipy>=1.11", "tqdm>=4.60", "h5py>=3.8"]
DEPENDENCIES = {"numpy": _COMMON, "jax": ["jax>=0.4.36", "jaxlib>=0.4.36", *_COMMON]}
TEST_DEPENDENCIES = ["pytest>=8", "hypothesis>=6.100"]

#: optional extras of both packages (``pip install oqupy-numpy[dask]``); each imported lazily where it is used
EXTRAS = {
    "dask": ["dask[distributed]>=2024.8"],
    "plot": ["matplotlib>=3.7"],
    "test": TEST_DEPENDENCIES,
}

#: ``[project.urls]`` of both packages (label -> URL), rendered only when not empty.  Empty until the repository
#: and the documentation site have public addresses: an invented URL on PyPI is worse than none
#: (docs/releasing.md lists this among the steps of a first release).
URLS: dict[str, str] = {}
