"""The web app: FastAPI routes over :mod:`prmkit.annotate.work`, pages from Jinja2 templates (autoescaped),
one small script for the keyboard. No build step: templates and static files ship inside the package.

Who may do what is decided per request from either a browser session (cookie, with a CSRF token that
every state-changing request must echo) or a bearer token (scripts; no cookie, so no CSRF risk). Pages
send a strict Content-Security-Policy (scripts only from this origin, none inline), so even a template
bug could not run injected script.

Hostile requests get a 4xx with a message, never a 500: bodies are capped (:class:`BodyLimit`, 413),
bodies are read strictly (``"step": "1"`` is refused, not coerced), ids are bounded to
what the database can hold (32-bit: PostgreSQL's ``integer``), texts to what it can store (no NUL, no
lone surrogate), validation errors are written so that NaN or a lone surrogate in the input cannot break
the answer, and logins are throttled per account and per client (429, see ``limits.py``). The client is
the connecting address unless it is a trusted proxy (``api.server_config``), so it cannot be made up.
"""

from __future__ import annotations

import hmac
from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from prmkit.annotate import auth, work
from prmkit.annotate.agreement import agreement
from prmkit.annotate.auth import User
from prmkit.annotate.limits import Limits, LoginThrottle
from prmkit.annotate.qc import annotator_items, annotator_stats, flagged_steps
from prmkit.annotate.render import math_html, observation_summary, tool_call, tool_list
from prmkit.annotate.store import HERE, Store
from prmkit.core.errors import short
from prmkit.core.http_limits import client_key
from prmkit.core.render import is_agentic

COOKIE = "prmkit_session"
LOGIN_CSRF = "prmkit_login_csrf"
CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'"


class SecurityHeaders:
    """Adds the security headers to every response (plain ASGI: cheaper than an HTTP middleware)."""

    HEADERS = (
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
    )

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """ASGI middleware: a body over ``max_bytes`` is answered 413 with a message, never handed on.

    By its ``Content-Length`` when sent (the HTTP server holds the body to it), else by counting a
    chunked body as it arrives, never holding more than the limit; so a 30 MB note never reaches the
    database. (FastAPI's own ``max_body_size`` answers a declared-too-large body with a bare "Content Too
    Large" that skips the app's handlers: no reason, no flag to change, no security headers.)
    """

    def __init__(self, app: Any, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            size = int(declared) if declared.isdigit() else -1
            if size < 0 or size > self.max_bytes:
                await self._refuse(scope, receive, send, size, exact=True)
                return
            await self.app(scope, receive, send)  # the HTTP server holds the body to its declared length
            return
        # No Content-Length (chunked): read it here up to the limit, then replay it to the app.
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._refuse(scope, receive, send, size)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: dict, receive: Any, send: Any, size: int, exact: bool = False) -> None:
        if size < 0:
            detail, code = "Content-Length: expected a number of bytes, found something else", 400
        else:
            detail = (
                f"request body: expected at most {self.max_bytes} bytes, found {size}{'' if exact else ' or more'}; "
                "send less text (the server's limit is `prmkit annotate serve --max-body-bytes`)"
            )
            code = 413
        await JSONResponse({"detail": detail}, status_code=code)(scope, receive, send)


MAX_ID = 2**31 - 1
"""Largest id the store's ``Integer`` columns hold on PostgreSQL (32-bit); larger ones are refused (422)."""
Id = Annotated[int, PathParam(ge=1, le=MAX_ID, description="an id the database can hold")]
UserName = Annotated[str, PathParam(min_length=1, max_length=128, description="an account name")]


class Strict(BaseModel):
    """Request bodies: JSON types as sent (no "1" for 1, no 0 for false), no unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid")


class RateIn(Strict):
    step: int
    rating: int
    time_ms: int = 0


class FlagIn(Strict):
    step: int
    flagged: bool = True


class RewriteIn(Strict):
    step: int
    text: str


class FinishIn(Strict):
    reason: str
    note: str = ""
    total_time_ms: int | None = None


class Who(BaseModel):
    """The caller: who they are, and the CSRF token of their session (None for bearer tokens)."""

    id: str
    role: str
    csrf: str | None = None

    @property
    def user(self) -> User:
        return User(self.id, self.role)


def _templates() -> Jinja2Templates:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")), autoescape=select_autoescape(["html"], default=True)
    )
    env.filters["math"] = math_html
    env.filters["tool_call"] = tool_call
    env.filters["observation_summary"] = observation_summary
    env.filters["tool_list"] = tool_list
    env.tests["agentic"] = is_agentic
    env.filters["duration"] = lambda ms: f"{ms / 1000:.0f} s" if ms < 60_000 else f"{ms / 60_000:.1f} min"
    return Jinja2Templates(env=env)


def _validation_error(_request: Request, err: Exception) -> JSONResponse:
    """422 naming each bad field; the input is shown by ``repr`` (cut short) and anything else that came
    from the request is escaped, so a NaN, a huge number or a lone surrogate cannot break the answer."""
    problems = []
    for e in err.errors() if isinstance(err, RequestValidationError) else []:
        if e.get("type") == "json_invalid":  # loc is ("body", character offset)
            pos = e.get("loc", (None, "?"))[-1]
            problems.append(
                f"body: expected JSON, found {e.get('ctx', {}).get('error', 'invalid')} at character {pos}"
            )
            continue
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
        found = "nothing" if e.get("type") == "missing" else short(e.get("input"))
        problems.append(f"{where[:80]}: {e.get('msg', 'invalid')}, found {found}")
    detail = "; ".join(problems[:10]) or "invalid request"
    return JSONResponse({"detail": detail.encode("utf-8", "backslashreplace").decode()}, status_code=422)


async def _http_error(request: Request, err: Exception) -> Response:
    """FastAPI's answers, with the 400 it gives for a body Python cannot read as JSON (not UTF-8, nested
    too deep, an integer of thousands of digits) made to say which."""
    if isinstance(err, StarletteHTTPException) and err.status_code == 400 and err.__cause__ is not None:
        found = str(err.__cause__)[:120].encode("utf-8", "backslashreplace").decode()
        return JSONResponse({"detail": f"body: expected JSON, found {found}"}, status_code=400)
    return await http_exception_handler(request, err)  # type: ignore[arg-type]


def create_app(
    store: Store,
    session_ttl: timedelta = timedelta(hours=12),
    secure_cookies: bool = False,
    limits: Limits | None = None,
) -> FastAPI:
    """The annotation app over an open store. ``secure_cookies`` for deployments behind HTTPS; ``limits``
    for the request body and login limits (the defaults of :class:`Limits` otherwise)."""
    limits = limits or Limits()
    app = FastAPI(title="prmkit annotate", docs_url=None, redoc_url=None, openapi_url=None)
    templates = _templates()
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    app.add_middleware(BodyLimit, max_bytes=limits.max_body_bytes)
    app.add_middleware(SecurityHeaders)  # added last, so outermost: the 413 answers carry the headers too
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)

    for exc, code in ((work.NotFound, 404), (work.Conflict, 409), (work.BadInput, 422)):

        def _handler(_request: Request, err: Exception, code: int = code) -> JSONResponse:
            return JSONResponse({"detail": str(err)}, status_code=code)

        app.add_exception_handler(exc, _handler)

    def who(request: Request) -> Who | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            user = auth.user_for_token(store, header[7:].strip())
            return None if user is None else Who(id=user.id, role=user.role)
        sid = request.cookies.get(COOKIE)
        found = auth.session_user(store, sid) if sid else None
        return None if found is None else Who(id=found[0].id, role=found[0].role, csrf=found[1])

    def api_user(request: Request) -> Who:
        caller = who(request)
        if caller is None:
            raise HTTPException(401, "log in first (session expired or no token)")
        if request.method != "GET" and caller.csrf is not None:
            sent = request.headers.get("x-csrf-token", "")
            if not _same(sent, caller.csrf):
                raise HTTPException(403, "CSRF token missing or wrong; reload the page")
        return caller

    def page_user(request: Request) -> Who:
        caller = who(request)
        if caller is None or caller.csrf is None:
            raise HTTPException(303, headers={"Location": f"/login?next={request.url.path}"})
        return caller

    @app.get("/health")
    async def health() -> dict[str, str]:
        """Liveness for a proxy or a monitor: no login, no database, answered on the event loop."""
        return {"status": "ok"}

    _login_routes(app, store, templates, session_ttl, secure_cookies, LoginThrottle(limits))
    _api_routes(app, store, api_user)
    _page_routes(app, store, templates, page_user)
    return app


def _same(sent: str, expected: str) -> bool:
    """Constant-time comparison of a token the client sent (any text, even non-ASCII) with ours."""
    return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), expected.encode())


def _login_routes(
    app: FastAPI, store: Store, templates, ttl: timedelta, secure: bool, throttle: LoginThrottle
) -> None:
    import secrets

    def form_page(request: Request, next: str, error: str, message: str = "", status: int = 200) -> Response:
        token = secrets.token_urlsafe(24)
        ctx = {"csrf": token, "next": next, "error": error, "message": message}
        resp = templates.TemplateResponse(request, "login.html", ctx, status_code=status)
        resp.set_cookie(LOGIN_CSRF, token, httponly=True, samesite="strict", secure=secure)
        return resp

    def too_many(request: Request, next: str, wait: float, why: str) -> Response:
        seconds = max(1, int(wait + 0.999))
        resp = form_page(request, next, "", f"{why}; try again in {seconds} s.", status=429)
        resp.headers["retry-after"] = str(seconds)
        return resp

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, next: str = "/", error: str = "") -> Response:
        return form_page(request, next, error)

    @app.post("/login")
    def login(
        request: Request,
        user: str = Form(""),
        password: str = Form(""),
        token: str = Form(""),
        csrf: str = Form(""),
        next: str = Form("/"),
    ) -> Response:
        expected = request.cookies.get(LOGIN_CSRF, "")
        if not expected or not _same(csrf, expected):
            raise HTTPException(403, "login form expired; reload the page")
        # Throttled before any hashing, so a burst costs the server nothing.
        wait = throttle.client_wait(client_key(request.client.host if request.client else ""))
        if wait > 0:
            return too_many(request, next, wait, "Too many login attempts from this address")
        if token:
            found = auth.user_for_token(store, token)
        else:
            wait = throttle.account_wait(user)
            if wait > 0:  # the right password is refused too, or the answer would confirm a guess
                why = "Too many wrong passwords for this name (a login token still works)"
                return too_many(request, next, wait, why)
            found = auth.login_password(store, user, password)
            (throttle.failed if found is None else throttle.succeeded)(user)
        if found is None:
            return RedirectResponse("/login?error=1", status_code=303)
        sid, _ = auth.create_session(store, found, ttl)
        target = next if next.startswith("/") and not next.startswith("//") else "/"
        resp = RedirectResponse(target, status_code=303)
        resp.set_cookie(
            COOKIE, sid, max_age=int(ttl.total_seconds()), httponly=True, samesite="lax", secure=secure
        )
        resp.delete_cookie(LOGIN_CSRF)
        return resp

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        sid = request.cookies.get(COOKIE)
        found = auth.session_user(store, sid) if sid else None
        if found is not None and _same(csrf, found[1]):
            auth.end_session(store, sid)  # type: ignore[arg-type]
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp


def _public_state(state: dict[str, Any]) -> dict[str, Any]:
    """What an annotator may see of an assignment: texts, tool calls and observations, and their own
    ratings; never gold or model labels, nor step metadata."""
    trace = state["trace"]
    return {
        "id": state["id"],
        "status": state["status"],
        "finish_reason": state["finish_reason"],
        "stop_at_first_error": state["stop_at_first_error"],
        "total_time_ms": state["total_time_ms"],
        "problem": trace.problem.text,
        "answer": trace.problem.answer,
        "steps": [s.text for s in trace.steps],
        "ratings": state["ratings"],
        # agent steps, parallel to "steps"; their metadata is left out (a world may keep its truth there)
        "tools": trace.problem.tools,
        "tool_calls": [[c.model_dump(exclude={"metadata"}) for c in s.tool_calls] for s in trace.steps],
        "observations": [[o.model_dump(exclude={"metadata"}) for o in s.observations] for s in trace.steps],
    }


def _api_routes(app: FastAPI, store: Store, api_user) -> None:
    @app.get("/api/queue")
    def api_queue(me: Who = Depends(api_user)) -> list[dict[str, Any]]:
        return work.queue(store, me.user)

    @app.get("/api/assignments/{aid}")
    def api_assignment(aid: Id, me: Who = Depends(api_user)) -> dict[str, Any]:
        return _public_state(work.assignment_state(store, me.user, aid))

    @app.post("/api/assignments/{aid}/rate")
    def api_rate(aid: Id, body: RateIn, me: Who = Depends(api_user)) -> dict[str, Any]:
        return work.rate(store, me.user, aid, body.step, body.rating, body.time_ms)

    @app.post("/api/assignments/{aid}/flag")
    def api_flag(aid: Id, body: FlagIn, me: Who = Depends(api_user)) -> dict[str, Any]:
        return work.flag(store, me.user, aid, body.step, body.flagged)

    @app.post("/api/assignments/{aid}/rewrite")
    def api_rewrite(aid: Id, body: RewriteIn, me: Who = Depends(api_user)) -> dict[str, Any]:
        return work.rewrite(store, me.user, aid, body.step, body.text)

    @app.post("/api/assignments/{aid}/undo")
    def api_undo(aid: Id, me: Who = Depends(api_user)) -> dict[str, Any]:
        return {"undone": work.undo(store, me.user, aid)}

    @app.post("/api/assignments/{aid}/finish")
    def api_finish(aid: Id, body: FinishIn, me: Who = Depends(api_user)) -> dict[str, Any]:
        return work.finish(store, me.user, aid, body.reason, body.note, body.total_time_ms)

    @app.get("/api/lead/report")
    def api_report(me: Who = Depends(api_user)) -> dict[str, Any]:
        if not me.user.is_lead:
            raise HTTPException(403, "leads only")
        return {
            "annotators": [s.to_dict() for s in annotator_stats(store)],
            "agreement": agreement(store).to_dict(),
        }


def _page_routes(app: FastAPI, store: Store, templates, page_user) -> None:
    @app.get("/")
    def home(me: Who = Depends(page_user)) -> Response:
        return RedirectResponse("/lead" if me.user.is_lead else "/annotate", status_code=303)

    @app.get("/annotate", response_class=HTMLResponse)
    def annotate_next(request: Request, me: Who = Depends(page_user)) -> Response:
        aid = work.next_assignment(store, me.user)
        if aid is not None:
            return RedirectResponse(f"/annotate/{aid}", status_code=303)
        done = work.queue(store, me.user)
        return templates.TemplateResponse(request, "done.html", {"me": me, "queue": done})

    @app.get("/annotate/{aid}", response_class=HTMLResponse)
    def annotate_page(request: Request, aid: Id, me: Who = Depends(page_user)) -> Response:
        state = work.assignment_state(store, me.user, aid)
        readonly = state["user_id"] != me.id or state["status"] == "done"
        q = work.queue(store, User(state["user_id"], "annotator"))
        position = next((i for i, a in enumerate(q) if a["id"] == aid), 0) + 1
        ctx = {"me": me, "a": state, "readonly": readonly, "position": position, "total": len(q)}
        return templates.TemplateResponse(request, "annotate.html", ctx)

    @app.get("/lead/annotators/{user}", response_class=HTMLResponse)
    def lead_annotator_page(request: Request, user: UserName, me: Who = Depends(page_user)) -> Response:
        if not me.user.is_lead:
            raise HTTPException(403, "leads only")
        queue = annotator_items(store, user)
        if queue is None:
            raise HTTPException(404, "no such account")
        ctx = {"me": me, "user": user, "queue": queue}
        return templates.TemplateResponse(request, "lead_annotator.html", ctx)

    @app.get("/lead", response_class=HTMLResponse)
    def lead_page(request: Request, me: Who = Depends(page_user)) -> Response:
        if not me.user.is_lead:
            raise HTTPException(403, "leads only")
        ctx = {
            "me": me,
            "stats": annotator_stats(store),
            "agreement": agreement(store),
            "flagged": flagged_steps(store, limit=50),
        }
        return templates.TemplateResponse(request, "lead.html", ctx)
