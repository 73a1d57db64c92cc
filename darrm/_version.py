"""The package version, in one place (the facade, γ files and CLIs read it)."""

__version__ = "0.1.0"
