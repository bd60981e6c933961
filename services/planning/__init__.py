"""The planning service: day plans, decomposition, react-or-continue decisions and decided actions."""
