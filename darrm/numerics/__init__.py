"""Numerics shared by every layer: binomial and Poisson-binomial pmfs, composed δ."""
