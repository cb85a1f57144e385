"""The browser suite (``make e2e``): the notebooks in a real JupyterLab, in headless Chromium."""
