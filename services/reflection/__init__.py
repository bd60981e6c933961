"""Reflection service: importance accumulator and reflection runs (Celery jobs)."""
