"""Root test configuration."""
