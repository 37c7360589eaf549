"""One module per ``tuvan`` subcommand or group of subcommands (ask/chat, ingest/reindex, crawl,
faq, augment, sources, graph, eval, demo/serve/worker, telegram, db, admin, prune). A command
parses its arguments, calls a use-case of ``bot.knowledge``, ``bot.evaluation``, ``bot.answer``,
``bot.conversations`` or ``bot.processes`` and prints the outcome: no SQL here. May import every
package of tuvan."""
