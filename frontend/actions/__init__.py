"""What the dashboard's callbacks do, as plain functions of an ``ApiClient`` and values.

One module per page, same names as ``frontend/pages`` (and ``tuning`` for the live
page's tuning panel, ``queries`` for the classes page's continuous queries). A callback
only collects its inputs, opens a client and hands over to a function here, which
returns plain values and Dash components; the functions are tested against the real
API (tests/frontend) without a browser.
"""
