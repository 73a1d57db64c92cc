"""Which γ errs least? The γ_opt solvers (Section 5): options, the full LP, the restricted
LP, constraint generation, and :func:`solve`, the one entry point for every γ family."""
