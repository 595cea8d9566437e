"""The HTTP server under the tests' fake APIs: a client that hangs up mid-answer is not an error.

``socketserver`` prints a traceback to stderr when a handler raises, e.g. when the code under test refuses
a 9 MiB answer unread and closes the connection while the fake is still writing it. That is the fake's own
noise, and a test that checks the command wrote nothing to stderr must not read it as the command's. The
handler's errors are kept in ``errors`` instead, for a test that wants them.
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer


class QuietThreadingHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[BaseException] = []

    def handle_error(self, request, client_address) -> None:
        import sys

        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, (BrokenPipeError, ConnectionResetError)):
            self.errors.append(error)
