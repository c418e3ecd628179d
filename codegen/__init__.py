"""Source-to-source generator: ``src_template/oqupy`` -> ``generated/oqupy_numpy`` and ``generated/oqupy_jax``."""
