"""The web chat: its page and widget, the request protocol and the streamed answers."""
