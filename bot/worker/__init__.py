"""The worker process: claims queued questions, answers them and stores the replies (``loop``),
and delivers the replies within what each channel allows (``delivery``). Imports
``bot.channels``, ``bot.answer``, ``bot.conversations`` and below."""
