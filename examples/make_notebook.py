"""Builds examples/notebook.ipynb from examples/notebook.py (cells split at "# %%"); run from the
repository root after editing notebook.py: python3 examples/make_notebook.py"""
import json
import re
src = open("examples/notebook.py").read()
cells = []
for block in re.split(r"^# %%", src, flags=re.M)[1:]:
    head, _, body = block.partition("\n")
    if head.strip() == "[markdown]":
        text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.strip().splitlines())
        cells.append({"cell_type": "markdown", "metadata": {}, "source": text.splitlines(keepends=True)})
    else:
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                      "source": body.strip().splitlines(keepends=True)})
nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
      "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
open("examples/notebook.ipynb", "w").write(json.dumps(nb, indent=1) + "\n")
