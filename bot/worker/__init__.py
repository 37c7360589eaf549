"""The worker process: claims queued questions, answers them and delivers the replies.
Imports ``bot.channels``, ``bot.answer``, ``bot.conversations`` and below."""
