"""Dash pages, loaded by ``dash.Dash(use_pages=True)``; one module per page.

These modules call ``dash.register_page`` at import, so they can only be imported by a
Dash app that was created with ``use_pages=True`` (``frontend.app.create_app``). The
work their callbacks do lives in ``frontend.actions`` and is tested there.
"""
