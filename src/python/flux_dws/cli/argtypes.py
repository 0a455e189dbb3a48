"""argparse ``type=`` functions shared by the commands: each refuses a bad
value with argparse's usage error (exit status 2) naming the value."""

from __future__ import annotations

import argparse
import ipaddress
import math


def text(value: str) -> str:
    """A string argument: UTF-8 (argv bytes that are not arrive as lone
    surrogates) and without NUL."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise argparse.ArgumentTypeError(
            f"not UTF-8 text (at character {exc.start + 1})") from None
    if "\0" in value:
        raise argparse.ArgumentTypeError("contains a NUL character")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0 (got {value})")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 (got {text})")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0 (got {text})")
    return value


def http_status(text: str) -> int:
    """An HTTP status code, 100 to 599."""
    value = _int(text)
    if not 100 <= value <= 599:
        raise argparse.ArgumentTypeError(f"must be an HTTP status from 100 to 599 (got {value})")
    return value


def _host(host: str, text: str) -> str:
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}': '{host}' is not an IPv6 address"
                                             ) from None
        return host
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    labels = host.rstrip(".").split(".")
    if not host or len(host) > 253 or not all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii()
        and not label.startswith("-") and not label.endswith("-")
        for label in labels
    ):
        raise argparse.ArgumentTypeError(f"'{text}': '{host}' is not a host name or address")
    return host


def listen_address(text: str) -> tuple[str, int]:
    """ADDR:PORT or PORT (ADDR may be omitted, a host name, an IPv4 address or a
    [bracketed] IPv6 address; PORT 0 to 65535, 0 for any free port)."""
    host, _, port = text.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': port '{port}' is not a number") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"'{text}': port must be 0 to 65535 (got {number})")
    return (_host(host, text) if host else "127.0.0.1"), number
