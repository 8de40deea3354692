"""Accounts, passwords, tokens and expiring sessions, with nothing but the standard library's crypto.

Passwords are hashed with ``hashlib.scrypt`` at OWASP's current cost (N=2**17, r=8, p=1: 128 MiB and
about a second of one core per check, so an offline guesser gets a few per second per core). A hash
stores its own parameters, so hashes made at an older, cheaper cost still verify, and a successful login
re-hashes them at the current cost. At most :data:`HASH_SLOTS` hashes run at once (memory stays bounded
however many logins arrive). A name with no account, or an account without a password, is checked
against a dummy hash at the same cost, so the answer's timing does not tell which accounts exist.

Tokens and session ids are random 256-bit strings of which only the SHA-256 is stored, so a copy of the
database logs no one in. Each browser session carries its own CSRF token; requests made with a bearer
token (scripts, the concurrency test) send no cookie and need none.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, insert, select, update

from prmkit.annotate.models import sessions, users
from prmkit.annotate.store import Store, now, utc

ROLES = ("lead", "annotator")
SCRYPT = {"n": 2**17, "r": 8, "p": 1}
"""The cost new hashes get (OWASP Password Storage Cheat Sheet: N >= 2**17, r = 8, p = 1)."""
HASH_SLOTS = threading.BoundedSemaphore(max(1, min(4, os.cpu_count() or 1)))
"""Concurrent scrypt runs (each holds 128 MiB); further logins wait their turn."""
_MAX_N = 2**20  # a stored hash asking for more is treated as damaged (it would need 1 GiB per check)
# Never matches (scrypt does not output 32 zero bytes); makes an unknown name cost a full check.
_DUMMY = (SCRYPT["n"], SCRYPT["r"], SCRYPT["p"], bytes(16), bytes(32))


@dataclass(frozen=True)
class User:
    id: str
    role: str

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    # surrogatepass: a lone surrogate in a submitted password is just a wrong password, never an error.
    with HASH_SLOTS:
        return hashlib.scrypt(
            password.encode("utf-8", "surrogatepass"),
            salt=salt,
            n=n,
            r=r,
            p=p,
            dklen=32,
            maxmem=128 * r * (n + p + 2) + (1 << 20),
        )


def hash_password(password: str, n: int = SCRYPT["n"], r: int = SCRYPT["r"], p: int = SCRYPT["p"]) -> str:
    """A salted scrypt hash that records its own cost (``scrypt$n$r$p$salt$digest``)."""
    salt = secrets.token_bytes(16)
    return f"scrypt${n}${r}${p}${salt.hex()}${_scrypt(password, salt, n, r, p).hex()}"


def valid_user_id(user_id: str) -> bool:
    """1-128 printable characters without spaces (what an account name may be)."""
    return 0 < len(user_id) <= 128 and user_id.isprintable() and not any(c.isspace() for c in user_id)


def _params(stored: str) -> tuple[int, int, int, bytes, bytes] | None:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        n_, r_, p_ = int(n), int(r), int(p)
        parsed = (n_, r_, p_, bytes.fromhex(salt), bytes.fromhex(digest))
    except ValueError:
        return None
    ok = kind == "scrypt" and 2 <= n_ <= _MAX_N and n_ & (n_ - 1) == 0 and 1 <= r_ <= 32 and 1 <= p_ <= 16
    return parsed if ok else None


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches ``stored``; a missing or damaged hash costs a full check and fails."""
    parsed = _params(stored or "")
    n, r, p, salt, digest = parsed or _DUMMY
    got = _scrypt(password, salt, n, r, p)
    return hmac.compare_digest(got, digest) and parsed is not None


def needs_rehash(stored: str) -> bool:
    """A hash made at a cost other than the current one (re-hashed at the next successful login)."""
    parsed = _params(stored)
    return parsed is None or parsed[:3] != (SCRYPT["n"], SCRYPT["r"], SCRYPT["p"])


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def add_user(store: Store, user_id: str, role: str = "annotator", password: str | None = None) -> str:
    """Create (or reset) an account; returns a fresh login token, shown once and stored only hashed."""
    if role not in ROLES:
        raise ValueError(f"role: expected one of {ROLES}, found {role!r}")
    if not valid_user_id(user_id):
        raise ValueError(f"user id: expected 1-128 printable characters without spaces, found {user_id!r}")
    token = secrets.token_urlsafe(32)
    values = {
        "role": role,
        "password_hash": hash_password(password) if password else None,
        "token_hash": token_hash(token),
    }
    with store.write() as conn:
        exists = conn.execute(select(users.c.id).where(users.c.id == user_id)).first()
        if exists:
            conn.execute(update(users).where(users.c.id == user_id).values(**values))
        else:
            conn.execute(insert(users).values(id=user_id, created_at=now(), **values))
    return token


def list_users(store: Store) -> list[User]:
    with store.read() as conn:
        rows = conn.execute(select(users.c.id, users.c.role).order_by(users.c.id)).all()
    return [User(r.id, r.role) for r in rows]


def login_password(store: Store, user_id: str, password: str) -> User | None:
    """The user when ``password`` is theirs, else None; takes the same time whether or not the account
    exists (or has a password). An old-cost hash is upgraded on success."""
    row = None
    if valid_user_id(user_id):  # no stored id is anything else
        with store.read() as conn:
            row = conn.execute(select(users).where(users.c.id == user_id)).first()
    stored = row.password_hash if row is not None else None
    if not verify_password(password, stored) or row is None or stored is None:
        return None
    if needs_rehash(stored):
        with store.write() as conn:
            conn.execute(
                update(users)
                .where(users.c.id == row.id, users.c.password_hash == stored)
                .values(password_hash=hash_password(password))
            )
    return User(row.id, row.role)


def user_for_token(store: Store, token: str) -> User | None:
    with store.read() as conn:
        row = conn.execute(
            select(users.c.id, users.c.role).where(users.c.token_hash == token_hash(token))
        ).first()
    return None if row is None else User(row.id, row.role)


def create_session(store: Store, user: User, ttl: timedelta) -> tuple[str, str]:
    """A new browser session; returns ``(session_id, csrf_token)``. Expired sessions are swept here."""
    sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    with store.write() as conn:
        conn.execute(delete(sessions).where(sessions.c.expires_at < now()))
        conn.execute(
            insert(sessions).values(
                id_hash=token_hash(sid), user_id=user.id, csrf=csrf, expires_at=now() + ttl
            )
        )
    return sid, csrf


def session_user(store: Store, sid: str) -> tuple[User, str] | None:
    """The user and CSRF token of a live session, or None when it is unknown or expired."""
    with store.read() as conn:
        row = conn.execute(
            select(sessions.c.expires_at, sessions.c.csrf, users.c.id, users.c.role)
            .join(users, users.c.id == sessions.c.user_id)
            .where(sessions.c.id_hash == token_hash(sid))
        ).first()
    if row is None or utc(row.expires_at) <= now():
        return None
    return User(row.id, row.role), row.csrf


def end_session(store: Store, sid: str) -> None:
    with store.write() as conn:
        conn.execute(delete(sessions).where(sessions.c.id_hash == token_hash(sid)))
