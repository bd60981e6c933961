"""Tests of this area."""
