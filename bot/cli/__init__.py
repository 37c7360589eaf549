"""The ``tuvan`` command: one click group, one module per command under ``commands``.
Commands parse and print; the work lives in the packages below."""


def main() -> None:
    """The console script ``tuvan`` (imports the commands only when it runs)."""
    from bot.cli.group import main as run

    run()
