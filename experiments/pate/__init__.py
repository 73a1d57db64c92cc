"""Private semi-supervised knowledge transfer (DaRRM paper Section 6.2, Appendix D.2)."""
