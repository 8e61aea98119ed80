"""Tests of the compiled core (a package, so that test_configuration.py does not clash with
tests/algorithms/test_configuration.py under pytest's default import mode)."""
