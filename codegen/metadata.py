"""Package metadata, in one place: version, exports, dependencies of each generated package."""

VERSION = "0.1.0"

PYTHON_REQUIRES = ">=3.11"

#: backend -> distribution / import name
PACKAGES = {"numpy": "oqupy_numpy", "jax": "oqupy_jax"}

DESCRIPTIONS = {
    "numpy": "TEMPO and process tensors for non-Markovian open quantum systems (NumPy/SciPy).",
    "jax": "TEMPO and process tensors for non-Markovian open quantum systems (JAX, jit-compiled, float64).",
}

_COMMON = ["numpy>=2", "scipy>=1.11", "tqdm>=4.60", "h5py>=3.8"]
DEPENDENCIES = {"numpy": _COMMON, "jax": ["jax>=0.4.36", "jaxlib>=0.4.36", *_COMMON]}
TEST_DEPENDENCIES = ["pytest>=8"]

#: submodules imported by ``__init__`` (so ``pkg.operators`` works after ``import pkg``)
SUBMODULES = [
    "operators",
    "util",
    "config",
    "base_api",
    "dynamics",
    "bath_correlations",
    "bath",
    "system",
    "tempo",
    "control",
    "process_tensor",
    "pt_tempo",
    "system_dynamics",
]

#: (module, names) exported at top level, in OQuPy 0.5's ``__all__`` order where it has them
EXPORTS = [
    ("bath", ["Bath"]),
    ("control", ["Control"]),
    ("bath_correlations", ["CustomCorrelations", "CustomSD", "PowerLawSD"]),
    ("dynamics", ["Dynamics"]),
    (
        "process_tensor",
        ["FileProcessTensor", "SimpleProcessTensor", "TrivialProcessTensor", "import_process_tensor"],
    ),
    ("tempo", ["Tempo", "TempoParameters", "guess_tempo_parameters", "tempo_compute"]),
    ("pt_tempo", ["PtTempo", "pt_tempo_compute"]),
    ("system", ["System", "TimeDependentSystem"]),
    (
        "system_dynamics",
        ["compute_correlations", "compute_correlations_nt", "compute_dynamics", "compute_dynamics_batch"],
    ),
]
