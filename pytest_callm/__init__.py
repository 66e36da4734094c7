"""pytest-callm: a pytest plugin that benchmarks the LLM at the centre of a cascaded phone agent."""

__version__ = "0.1.0"
