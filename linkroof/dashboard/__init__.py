"""Dash app and pure figure builders (see the dashboard issue)."""
