"""Accounts, passwords, tokens and expiring sessions, with nothing but the standard library's crypto.

Passwords are hashed with ``hashlib.scrypt`` (salted, memory-hard); tokens and session ids are random
256-bit strings of which only the SHA-256 is stored, so a copy of the database logs no one in. Each
browser session carries its own CSRF token; requests made with a bearer token (scripts, the
concurrency test) send no cookie and need none.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, insert, select, update

from prmkit.annotate.models import sessions, users
from prmkit.annotate.store import Store, now, utc

ROLES = ("lead", "annotator")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


@dataclass(frozen=True)
class User:
    id: str
    role: str

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str | None) -> bool:
    if not stored or not stored.startswith("scrypt$"):
        return False
    _, n, r, p, salt, digest = stored.split("$")
    got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=32)
    return hmac.compare_digest(got.hex(), digest)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_user(store: Store, user_id: str, role: str = "annotator", password: str | None = None) -> str:
    """Create (or reset) an account; returns a fresh login token, shown once and stored only hashed."""
    if role not in ROLES:
        raise ValueError(f"role: expected one of {ROLES}, found {role!r}")
    if not user_id or len(user_id) > 128 or any(c.isspace() for c in user_id):
        raise ValueError(f"user id: expected 1-128 characters without spaces, found {user_id!r}")
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
    with store.read() as conn:
        row = conn.execute(select(users).where(users.c.id == user_id)).first()
    if row is None or not verify_password(password, row.password_hash):
        return None
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
