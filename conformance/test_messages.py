"""Differential cases: client-to-client messages (subscribe, channels, sendmessage, ...)."""

from mpdtest import case, differential_table

test_channels = differential_table({
    "no channels": case("channels\n", replies=1),
    "subscribe then channels": case("subscribe x\nchannels\n", replies=2),
    "channels are sorted": case("subscribe b\nsubscribe a\nsubscribe C\nsubscribe a1\n"
                                "channels\n", replies=5),
    "channel name alphabet": case("subscribe AZaz09_.:-\nchannels\n", replies=2),
    "unsubscribe": case("subscribe x\nunsubscribe x\nchannels\n", replies=3),
    "channels across connections, unique": case(
        [("a", "subscribe c\nsubscribe d\n"), ("b", "subscribe c\nsubscribe e\nchannels\n")],
        replies=5),
    "channels after the subscriber left": case(
        [("a", "subscribe gone\n"), ("a", "close\n"), ("b", "channels\n")], replies=2),
})

test_channel_errors = differential_table({
    "invalid name: space": case('subscribe "a b"\n', replies=1),
    "invalid name: empty": case('subscribe ""\n', replies=1),
    "invalid name: UTF-8": case("subscribe é\n", replies=1),
    "invalid name: slash": case("subscribe a/b\n", replies=1),
    "invalid name: comma": case("subscribe a,b\n", replies=1),
    "already subscribed": case("subscribe x\nsubscribe x\n", replies=2),
    "not subscribed": case("unsubscribe x\n", replies=1),
    "unsubscribe invalid name": case('unsubscribe "a b"\n', replies=1),
    "unsubscribe twice": case("subscribe x\nunsubscribe x\nunsubscribe x\n", replies=3),
    "16 subscriptions, then full": case(
        "".join(f"subscribe c{i}\n" for i in range(17)) + "subscribe c5\nchannels\n",
        replies=19),
    "room again after unsubscribe": case(
        "".join(f"subscribe c{i}\n" for i in range(16)) + "unsubscribe c3\nsubscribe z\n"
        "subscribe y\nchannels\n", replies=20),
})

test_sendmessage = differential_table({
    "nobody subscribed": case("sendmessage nobody hi\n", replies=1),
    "invalid channel name": case('sendmessage "a b" hi\n', replies=1),
    "to self": case("subscribe c\nsendmessage c hi\nreadmessages\n", replies=3),
    "empty message": case('subscribe c\nsendmessage c ""\nreadmessages\n', replies=3),
    "no messages": case("readmessages\n", replies=1),
    "readmessages clears the queue": case("subscribe c\nsendmessage c hi\nreadmessages\n"
                                          "readmessages\n", replies=4),
    "messages keep order across channels": case(
        "subscribe c\nsubscribe d\nsendmessage d 1\nsendmessage c 2\nsendmessage d 3\n"
        "readmessages\n", replies=6),
    "UTF-8, quotes and backslashes": case(
        'subscribe c\nsendmessage c "Ångström \\"q\\" \\\\ 🎵"\nsendmessage c a\\b\n'
        "readmessages\n", replies=4),
    "message after unsubscribe is kept": case(
        "subscribe c\nsendmessage c hi\nunsubscribe c\nreadmessages\n", replies=4),
    "to another connection": case(
        [("a", "subscribe c\n"), ("b", "sendmessage c hello\nreadmessages\n"),
         ("a", "readmessages\n")], replies=4),
    "to two subscribers": case(
        [("a", "subscribe c\n"), ("b", "subscribe c\n"), ("c", "sendmessage c x\n"),
         ("a", "readmessages\n"), ("b", "readmessages\n")], replies=5),
    # Each client queues at most 64 messages; then the sender hears "nobody".
    "64-message limit": case(
        [("a", "subscribe c\n"), ("b", "".join(f"sendmessage c m{i}\n" for i in range(70))),
         ("a", "readmessages\n"), ("b", "sendmessage c again\n"), ("a", "readmessages\n")],
        replies=74),
    "limit is per recipient": case(
        [("a", "subscribe c\n"), ("b", "".join(f"sendmessage c m{i}\n" for i in range(64))),
         ("c", "subscribe c\n"), ("b", "sendmessage c more\n"), ("c", "readmessages\n")],
        replies=68),
})
