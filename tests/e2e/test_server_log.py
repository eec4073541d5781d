"""The server-log filter the browser tests use (no browser needed): a browser that left mid-message is
dropped, every other traceback is kept whole."""

from .conftest import app_errors

# how both start: the stream endpoint's receive fails, and its close raises again
FIRST = """Exception in ASGI application
Traceback (most recent call last):
  File "starlette_websocket.py", line 516, in _websocket_endpoint
    data = await websocket.receive_bytes()
starlette.websockets.WebSocketDisconnected: WebSocket is not connected. Need to call "accept" first.

During handling of the above exception, another exception occurred:

"""
RACE = (
    FIRST
    + """Traceback (most recent call last):
  File "starlette/websockets.py", line 104, in send
    raise WebSocketDisconnected('Cannot call "send" once a close message has been sent.')
starlette.websockets.WebSocketDisconnected: Cannot call "send" once a close message has been sent.
"""
)
APP_ERROR = (
    FIRST
    + """Traceback (most recent call last):
  File "ui/jobs.py", line 10, in ensure
KeyError: 'job'
"""
)


def test_a_browser_that_left_mid_message_is_not_an_error():
    log = "server started\n" + RACE + "  Stopping...\n"
    assert app_errors(log) == "server started\n  Stopping...\n"


def test_every_other_traceback_is_kept_whole():
    assert app_errors(APP_ERROR) == APP_ERROR  # it starts like the race: only its last exception tells
    assert app_errors(RACE + APP_ERROR) == APP_ERROR
    assert app_errors(APP_ERROR + RACE) == APP_ERROR
    plain = 'Traceback (most recent call last):\n  File "app.py", line 1\nValueError: x\n'
    assert app_errors(plain) == plain
