"""Differential cases: greeting, framing, tokenizer, argument counts, close.

Every case runs on a fresh connection to mpd and to the system under test; the
transcripts (greeting included) must be identical.  See README.md.
"""

import pytest
from mpdtest import case, differential, differential_table


@differential
def test_greeting():
    """Connect and send nothing: only the greeting arrives, the connection stays."""
    return []


@differential(replies=1)
def test_ping():
    return "ping\n"


@differential(replies=2)
def test_status_and_stats():
    """Fresh state; uptime/playtime/db_update are masked (both scanned the same library)."""
    return "status\nstats\n"


@differential(replies=3)
def test_pipelined_in_one_write():
    return "ping\nfoo\nping\n"


@differential(replies=1)
def test_line_split_across_writes():
    return ["pi", "n", "g\n"]


@differential(replies=2)
def test_two_lines_split_mid_line():
    return ["ping\npi", "ng\n"]


# --- unknown commands -------------------------------------------------------

test_unknown_command = differential_table({
    "foo": "foo\n",
    "foo with arguments": "foo bar baz\n",
    "digits in name": "p1ng\n",
    "underscore suffix": "ping_\n",
    "prefix of a command": "pin\n",
    "command plus suffix": "pingping\n",
    "single letter": "a\n",
    "long name": "x" * 300 + "\n",
    "command_list_end outside a list": "command_list_end\n",
    "noidle with an argument": "noidle x\n",
    "unknown with bad quoting": 'foo "a\n',
    "unknown with invalid unquoted char": 'foo a"b\n',
    "unknown with 64 arguments": "foo" + " a" * 64 + "\n",
}, replies=1)


# --- argument counts ----------------------------------------------------------

test_argument_count = differential_table({
    # min == max: "wrong number of arguments"
    "ping x": "ping x\n",
    "ping empty string": 'ping ""\n',
    "ping tab separated": "ping\tx\n",
    "status x": "status x\n",
    "stats x": "stats x\n",
    "currentsong x": "currentsong x\n",
    "clearerror x": "clearerror x\n",
    "commands x": "commands x\n",
    "notcommands x": "notcommands x\n",
    "channels x": "channels x\n",
    "readmessages x": "readmessages x\n",
    "subscribe (none)": "subscribe\n",
    "subscribe a b": "subscribe a b\n",
    "unsubscribe (none)": "unsubscribe\n",
    "sendmessage a": "sendmessage a\n",
    "sendmessage a b c": "sendmessage a b c\n",
    "binarylimit (none)": "binarylimit\n",
    "binarylimit 64 64": "binarylimit 64 64\n",
    "password (none)": "password\n",
    "setvol (none)": "setvol\n",
    "seek 1": "seek 1\n",
    "albumart x": "albumart x\n",
    "urlhandlers x": "urlhandlers x\n",
    "decoders x": "decoders x\n",
    "outputs x": "outputs x\n",
    # max exceeded: "too many arguments"
    "play 1 2": "play 1 2\n",
    "playid 1 2": "playid 1 2\n",
    "lsinfo a b": "lsinfo a b\n",
    "update a b": "update a b\n",
    "add a b c": "add a b c\n",
    "playlistinfo 1 2": "playlistinfo 1 2\n",
    # below min: "too few arguments"
    "find": "find\n",
    "list": "list\n",
    "count": "count\n",
    "add": "add\n",
    "plchanges": "plchanges\n",
}, replies=1)


# --- tokenizer ----------------------------------------------------------------

test_tokenizer_errors = differential_table({
    "missing closing quote": 'ping "a\n',
    "lone quote": 'ping "\n',
    "missing closing quote, second argument": 'ping "a" "b\n',
    "escaped closing quote is not a close": 'ping "a\\"\n',
    "space expected after closing quote": 'ping "a"b\n',
    "quote right after a quoted argument": 'ping "a""b"\n',
    "invalid unquoted character \"": 'ping a"b\n',
    "invalid unquoted character '": "ping a'b\n",
    "single quotes are not quotes": "ping 'a'\n",
    "invalid unquoted char on unknown idle": "idle a\"b\n",
}, replies=1)

test_invalid_word_character = differential_table({
    # The command name itself is bad: ACK, then the connection is closed.
    "quote in name": 'ping"x"\n',
    "dash in name": "pi-ng\n",
    "dot in name": "ping.\n",
    "DEL in name": "ping\x7f\n",
    "UTF-8 in name": "pingé\n",
    "followed by more lines": 'status"x"\nping\n',
}, replies=1)

test_quoted_arguments_echoed = differential_table({
    # idle echoes an unknown subsystem name verbatim
    "plain": "idle foo\n",
    "quoted": 'idle "foo"\n',
    "escaped quote": 'idle "fo\\"o"\n',
    "escaped backslash": 'idle "a\\\\b"\n',
    "backslash escapes any byte": 'idle "\\a\\n\\t"\n',
    "unquoted backslash is literal": "idle a\\b\n",
    "empty quoted": 'idle ""\n',
    "UTF-8 unquoted": "idle Ångström🎵\n",
    "UTF-8 quoted with spaces": 'idle "坂本 龍一"\n',
    "quoted then bad": 'idle database "x y"\n',
    "runs of spaces": "idle    database     foo   \n",
    "tabs between arguments": "idle\tdatabase\tfoo\n",
}, replies=1)


@differential(replies=3)
def test_tagtypes_enable_mixed_case():
    return 'tagtypes clear\ntagtypes enable "ArTiSt" aLbUm\ntagtypes\n'


@differential(replies=3)
def test_message_text_round_trip():
    """Quotes, backslashes and UTF-8 survive subscribe/sendmessage/readmessages."""
    return 'subscribe "chan"\nsendmessage chan "hé \\"quoted\\" \\\\ back ☃ 坂本"\nreadmessages\n'


@differential(replies=4)
def test_channel_name_quoted():
    return 'subscribe "a:b.c-D_9"\nsubscribe x\nchannels\nunsubscribe "x"\n'


# --- argument limit --------------------------------------------------------------

test_argument_limit = differential_table({
    "63 arguments (idle)": "idle" + " a" * 63 + "\n",
    "64 arguments (idle)": "idle" + " a" * 64 + "\n",
    "63 arguments, last empty": "idle" + " a" * 62 + ' ""\n',
    "64 arguments, last empty": "idle" + " a" * 63 + ' ""\n',
    "63 arguments (ping)": "ping" + " a" * 63 + "\n",
    "64 arguments (ping)": "ping" + " a" * 64 + "\n",
    "63 arguments that succeed": "tagtypes enable" + " artist" * 62 + "\n",
    "64 arguments that would succeed": "tagtypes enable" + " artist" * 63 + "\n",
    "100 quoted arguments": "idle" + ' "a"' * 100 + "\n",
}, replies=1)


# --- whitespace, line ends, odd bytes ----------------------------------------------

test_line_endings = differential_table({
    "trailing space": "ping \n",
    "trailing tab": "ping\t\n",
    "CRLF": "ping\r\n",
    "space CRLF": "ping \r\n",
    "CR CR LF": "ping\r\r\n",
    "trailing control byte": "ping\x01\n",
    "CRLF with wrong args": "ping x \r\n",
    "CRLF after quoted arg": 'idle "foo" \r\n',
    "NUL ends the line": "ping\x00\n",
    "NUL hides later arguments": "ping \x00 x\n",
    "NUL inside an argument": "idle a\x00b\n",
    "CR inside a quoted argument": 'idle "a\rb"\n',
    "form feed between arguments": "idle\x0cfoo\n",
}, replies=1)

test_silent_close = differential_table({
    # First byte not a-z: the connection is closed without a reply.
    "leading space": " ping\n",
    "leading tab": "\tping\n",
    "empty line": "\n",
    "CRLF only": "\r\n",
    "uppercase first letter": "Ping\n",
    "all uppercase": "PING\n",
    "digit first": "1ping\n",
    "underscore first": "_ping\n",
    "quote first": '"ping"\n',
    "HTTP request": "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "UTF-8 first": "éping\n",
    "NUL first": "\x00ping\n",
    "after a good command": "ping\nPing\nping\n",
    "empty line between commands": "ping\n\nping\n",
})


# --- line length (8192 bytes including the newline) -----------------------------------

def long_line(total: int, head: str = "idle ", end: str = "\n") -> bytes:
    return (head + "a" * (total - len(head) - len(end)) + end).encode()


test_line_length = differential_table({
    "8192 bytes": case(long_line(8192), replies=1),
    "8193 bytes": long_line(8193),
    "8192 bytes with CRLF": case(long_line(8192, end="\r\n"), replies=1),
    "8193 bytes with CRLF": long_line(8193, end="\r\n"),
    "8192 bytes of trailing spaces": case(b"ping" + b" " * 8187 + b"\n", replies=1),
    "9000 bytes": long_line(9000),
    "8192 bytes after a ping": case(b"ping\n" + long_line(8192) + b"ping\n", replies=3),
    "8193 bytes after a ping": b"ping\n" + long_line(8193) + b"ping\n",
    "8192 bytes in three writes": case([long_line(8192)[:3000], long_line(8192)[3000:6000],
                                        long_line(8192)[6000:]], replies=1),
    "8193 bytes in two writes": [long_line(8193)[:5000], long_line(8193)[5000:]],
    "two 8192-byte lines in one write": case(long_line(8192) * 2, replies=2),
})


# --- close -----------------------------------------------------------------------

test_close = differential_table({
    "close": "close\n",
    "close with arguments": "close x y\n",
    "close with bad quoting": 'close "x\n',
    "ping, close, ping": "ping\nclose\nping\n",
    "close in a command list": "command_list_ok_begin\nping\nclose\nping\ncommand_list_end\n",
})


test_password = differential_table({
    "wrong password": "password x\n",
    "empty password": 'password ""\n',
}, replies=1)
