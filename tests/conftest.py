"""Shared fixtures: the behavioural suite runs once per package under test.

``pytest --package oqupy_numpy`` (repeatable) selects packages; without the option every package in
``DEFAULT_PACKAGES`` is tested and must be importable (a missing package is an error, never a skip).
``--package oqupy`` runs the suite against the template itself (developer convenience).

A test marked ``one_package`` runs for the first selected package only (``oqupy_numpy`` by default, ``oqupy_jax``
under ``--package oqupy_jax``): for expensive physics whose numpy == jax agreement ``tests/test_cross_package.py``
already checks, so that the main run does not pay JAX's compilation for it a second time.
"""

import importlib

import pytest

DEFAULT_PACKAGES = ("oqupy_numpy", "oqupy_jax")


def pytest_addoption(parser):
    parser.addoption(
        "--package",
        action="append",
        default=None,
        help="package under test (repeatable): oqupy_numpy, oqupy_jax or oqupy (the template)",
    )


def selected_packages(config):
    return tuple(config.getoption("--package") or DEFAULT_PACKAGES)


def pytest_generate_tests(metafunc):
    if "oq" in metafunc.fixturenames:
        names = selected_packages(metafunc.config)
        if metafunc.definition.get_closest_marker("one_package"):
            names = names[:1]
        metafunc.parametrize("oq", names, indirect=True, ids=list(names))


@pytest.fixture
def oq(request):
    """The package under test, imported (``oq.operators``, ``oq.Tempo``, ...)."""
    return importlib.import_module(request.param)


def to_numpy(x):
    """Host copy of an array from either package."""
    import numpy as np

    return np.asarray(x)
