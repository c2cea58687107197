"""Views: the Dash app (app.py), pure figure builders (figures.py) and the static
report and figure files (report.py)."""
