"""``python -m bot.cli``: the ``tuvan`` command."""

from bot.cli import main

main()
