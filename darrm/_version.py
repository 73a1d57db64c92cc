"""The package version, in one place (the facade, γ files and CLIs read it)."""

__version__ = "0.1.0"
"""The version of darrm (PEP 440), written into γ files and shown by ``darrm --version``."""
