#!/usr/bin/python3
"""A stand-in for UDisks2 on a private D-Bus bus, for conformance/test_udisks.py (python3-dbus, python3-gi).

It owns org.freedesktop.UDisks2 on the system bus that DBUS_SYSTEM_BUS_ADDRESS names (the test's own
dbus-daemon, never the machine's) and exports /org/freedesktop/UDisks2 with org.freedesktop.DBus.ObjectManager's
GetManagedObjects: one block device, its `Id` given, with the org.freedesktop.UDisks2.Filesystem interface, whose
Mount returns the directory given (or fails with the message given) and whose Unmount forgets it; with
--mounted, MountPoints already names the directory. Each call is appended to --log as one line (method and path).
With --extra, GetManagedObjects also lists a drive without a file system, a file system without an id, and two
more file systems (one by its drive's id). The test's own interface org.fermata.FakeUDisks2 (not logged) adds an
object at run time (Add: path, id, whether it has a file system), emitting InterfacesAdded, and removes one
(Remove: path), emitting InterfacesRemoved, as UDisks2 does when a disk comes and goes; HangMount makes every later
Mount hang (no reply) until ReleaseMount answers the hanging calls and those after with the error message given
(a stuck UDisks2 that fails at last), or with success when the message is empty.
It writes --ready once its name is owned, and exits on SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

ROOT = "/org/freedesktop/UDisks2"
DEVICE = ROOT + "/block_devices/fake1"
FILESYSTEM = "org.freedesktop.UDisks2.Filesystem"
BLOCK = "org.freedesktop.UDisks2.Block"
DRIVE = "org.freedesktop.UDisks2.Drive"
MANAGER = "org.freedesktop.DBus.ObjectManager"
CONTROL = "org.fermata.FakeUDisks2"


def _block(block_id: str, filesystem: bool, drive_id: str = "") -> dict:
    """The interfaces of a block device with id `block_id`, a file system (not mounted) when `filesystem`."""
    interfaces = {BLOCK: {"Id": dbus.String(block_id), "Device": dbus.ByteArray(b"/dev/x\0")}}
    if drive_id:
        interfaces[DRIVE] = {"Id": dbus.String(drive_id)}
    if filesystem:
        interfaces[FILESYSTEM] = {"MountPoints": dbus.Array([], signature="ay")}
    return interfaces


#: --extra's objects, by path.
EXTRA = {
    ROOT + "/drives/disk": {DRIVE: {"Id": dbus.String("Maker-Disk-123")}},
    ROOT + "/block_devices/noid": _block("", True),
    ROOT + "/block_devices/fake2": _block("by-uuid-AAAA-0002", True),
    ROOT + "/block_devices/fake3": _block("by-uuid-0003", True, drive_id="Maker-Stick-9"),
}


class UDisks(dbus.service.Object):
    def __init__(self, bus, options):
        super().__init__(bus, ROOT)
        self.options = options
        self.mounted = options.mounted
        self.added: dict[str, dict] = dict(EXTRA) if options.extra else {}
        #: HangMount's: Mount calls wait here for ReleaseMount (their reply and error callbacks).
        self.hang = False
        self.hanging: list = []

    def record(self, line: str) -> None:
        with open(self.options.log, "a") as log:
            log.write(line + "\n")

    def properties(self):
        points = [dbus.ByteArray(self.options.directory.encode() + b"\0")] if self.mounted else []
        return {
            "org.freedesktop.UDisks2.Block": {"Id": dbus.String(self.options.id),
                                              "Device": dbus.ByteArray(b"/dev/fake1\0")},
            FILESYSTEM: {"MountPoints": dbus.Array(points, signature="ay")},
        }

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        self.record("GetManagedObjects " + ROOT)
        objects = {dbus.ObjectPath(DEVICE): self.properties()}
        objects.update({dbus.ObjectPath(path): interfaces for path, interfaces in self.added.items()})
        return dbus.Dictionary(objects, signature="oa{sa{sv}}")

    @dbus.service.signal(MANAGER, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(MANAGER, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass

    @dbus.service.method(CONTROL, in_signature="ssb")
    def Add(self, path, block_id, filesystem):
        interfaces = _block(str(block_id), bool(filesystem))
        self.added[str(path)] = interfaces
        self.InterfacesAdded(dbus.ObjectPath(path), dbus.Dictionary(interfaces, signature="sa{sv}"))

    @dbus.service.method(CONTROL)
    def HangMount(self):
        self.hang = True

    @dbus.service.method(CONTROL, in_signature="s")
    def ReleaseMount(self, message):
        self.hang = False
        if message:
            self.options.fail_mount = str(message)
        hanging, self.hanging = self.hanging, []
        for reply, error in hanging:
            self.answer_mount(reply, error)

    def answer_mount(self, reply, error) -> None:
        try:
            reply(self.mount())
        except dbus.exceptions.DBusException as failure:
            error(failure)

    def mount(self) -> str:
        if self.options.fail_mount:
            raise dbus.exceptions.DBusException(self.options.fail_mount, name="org.freedesktop.UDisks2.Error.Failed")
        if self.mounted:
            raise dbus.exceptions.DBusException(
                f"Device /dev/fake1 is already mounted at `{self.options.directory}'.",
                name="org.freedesktop.UDisks2.Error.AlreadyMounted")
        self.mounted = True
        return self.options.directory

    @dbus.service.method(CONTROL, in_signature="s")
    def Remove(self, path):
        interfaces = self.added.pop(str(path), None) or self.properties()
        self.InterfacesRemoved(dbus.ObjectPath(path), dbus.Array(list(interfaces), signature="s"))


class Device(dbus.service.Object):
    def __init__(self, bus, manager: UDisks):
        super().__init__(bus, DEVICE)
        self.manager = manager

    @dbus.service.method(FILESYSTEM, in_signature="a{sv}", out_signature="s", async_callbacks=("reply", "error"))
    def Mount(self, options, reply, error):
        self.manager.record(f"Mount {DEVICE} {len(options)}")
        if self.manager.hang:
            self.manager.hanging.append((reply, error))
            return
        self.manager.answer_mount(reply, error)

    @dbus.service.method(FILESYSTEM, in_signature="a{sv}")
    def Unmount(self, options):
        self.manager.record(f"Unmount {DEVICE} {len(options)}")
        if not self.manager.mounted:
            raise dbus.exceptions.DBusException("Device `/dev/fake1' is not mounted",
                                                name="org.freedesktop.UDisks2.Error.NotMounted")
        self.manager.mounted = False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--id", required=True)
    parser.add_argument("--directory", required=True)
    parser.add_argument("--mounted", action="store_true")
    parser.add_argument("--fail-mount", default="")
    parser.add_argument("--extra", action="store_true")
    parser.add_argument("--log", required=True)
    parser.add_argument("--ready", required=True)
    options = parser.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = UDisks(bus, options)
    Device(bus, manager)
    name = dbus.service.BusName("org.freedesktop.UDisks2", bus)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    with open(options.ready, "w") as ready:
        ready.write("ready\n")
    loop.run()
    del name
    return 0


if __name__ == "__main__":
    sys.exit(main())
