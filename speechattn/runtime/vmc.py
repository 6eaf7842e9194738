"""VRM mouth blendshapes over the VMC protocol (OSC over UDP), for VSeeFace-style avatar apps.

The VMC protocol (Virtual Motion Capture, https://protocol.vmc.info) carries an avatar's blendshapes as OSC
messages: `/VMC/Ext/Blend/Val <name> <value>` for each, then `/VMC/Ext/Blend/Apply` to show them together.  A
performer app (VSeeFace, VNyan, Warudo ...) with "VMC receiver" on listens on UDP port 39540 and lets an
external source drive some blendshapes; we send VRM's five mouth clips A I U E O, weights 0-1 from the phone
posteriors (visemes.VRM; silence and P B M close the mouth: all five 0).
"""

from __future__ import annotations

import socket

import numpy as np

from speechattn.errors import SpeechattnError, UsageError
from speechattn_export.visemes import VRM, VRM_BLENDSHAPES

VMC_PORT = 39540  # the protocol's default for the receiving side ("Assistant"/performer)
BLEND_VALUE, BLEND_APPLY = "/VMC/Ext/Blend/Val", "/VMC/Ext/Blend/Apply"


def parse_address(text: str) -> tuple[str, int]:
    """HOST or HOST:PORT (port 39540 when left out; [v6]:PORT for an IPv6 address)."""
    host, port = text, str(VMC_PORT)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") or port
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:  # not "３９５４０"
        raise UsageError(f"--vmc {text}: give HOST or HOST:PORT (port 1-65535; default {VMC_PORT})")
    if not text.startswith("["):
        try:  # what getaddrinfo would fail on with a UnicodeError: an empty or over-long (64+) label, 254+ in all
            encoded = host.encode("idna")
        except UnicodeError:
            encoded = b""
        if not encoded or len(encoded.rstrip(b".")) > 253:
            raise UsageError(f"--vmc {text}: {host!r} is not a host name (labels of 1 to 63 characters between dots)")
    return host, int(port)


class VmcSender:
    """send(vrm_weights (S,) in VRM.shapes order) -> one Val message per mouth blendshape, then Apply."""

    def __init__(self, host: str, port: int = VMC_PORT) -> None:
        from pythonosc.udp_client import SimpleUDPClient

        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
            self.client = SimpleUDPClient(host, port, allow_broadcast=True)
        except OSError as error:
            raise SpeechattnError(f"--vmc {host}:{port}: cannot send there ({error})") from None
        self.columns = [VRM.shapes.index(name) for name in VRM_BLENDSHAPES]
        self.host, self.port, self.sent = host, port, 0

    def send(self, weights: np.ndarray) -> None:
        try:
            for name, column in zip(VRM_BLENDSHAPES, self.columns):
                self.client.send_message(BLEND_VALUE, [name, float(weights[column])])
            self.client.send_message(BLEND_APPLY, [])
        except OSError:  # nobody listening yet (ICMP refused) or the network is down: a live show goes on
            return
        self.sent += 1
