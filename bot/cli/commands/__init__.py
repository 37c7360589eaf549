"""One module per ``tuvan`` subcommand (or group of subcommands)."""
