"""``python -m frontend``: serve the dashboard (host, port and API URL from Settings)."""

from frontend.app import main

if __name__ == "__main__":
    main()
