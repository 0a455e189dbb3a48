"""User names for uids: the one lookup of this host's passwd database.

    >>> user_name(0)
    'root'
    >>> user_name(4294967296) is None, user_name("x") is None
    (True, True)

The rule, for every command and the service alike: a uid the passwd
database knows has its name; anything else has none (``None``): a uid with
no entry, and what is not a uid (not an integer or a string of one, a
bool, a negative or too large number).  Where a name is missing each view
shows the uid in its place, as it always did: ``uid N`` in ``flux dws
rabbits`` (who drained) and ``flux dws job``, the bare number in ``flux
dws jobs``' USER column, the service's word for the owner in ``flux dws
persistent``; the service leaves the uid unnamed.

The lookup may block on a remote directory (NSS): the service calls it
off its reactor where it can (its group lookups run on a thread).
"""

from __future__ import annotations

import pwd

__all__ = ["passwd", "user_name"]


def passwd(uid: object) -> pwd.struct_passwd | None:
    """The passwd entry of ``uid`` (an int, or a str of one), or None."""
    if isinstance(uid, str):
        try:
            uid = int(uid)
        except ValueError:
            return None
    if not isinstance(uid, int) or isinstance(uid, bool) or uid < 0:
        return None
    try:
        return pwd.getpwuid(uid)
    except (KeyError, OverflowError):
        return None


def user_name(uid: object) -> str | None:
    """The user name of ``uid``, or None (the rule above)."""
    entry = passwd(uid)
    return entry.pw_name if entry is not None else None
