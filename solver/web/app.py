"""The workspace app (FastAPI): pages rendered on the server from Jinja2 templates,
vendored static files (Chart.js), a few JSON endpoints for the pages' live parts.

Routes (every state-changing one is a POST, so that sign-in, roles and CSRF tokens
wrap them in one place):

- ``GET /health``: 200 when the app and its database answer;
- ``GET /``: problems, their variants and plans, recent jobs; ``POST /problems``: a new
  problem from YAML (read by the CLI's reader: its message beside the field, nothing
  stored on an error); ``GET /problems/{id}``, ``POST /problems/{id}/yaml``,
  ``POST /problems/{id}/variants``;
- ``POST /variants/{id}/solve``: the stored plan at once when the same inputs were solved,
  else a job; ``GET /jobs``, ``GET /jobs/{id}``, ``GET /api/jobs/{id}``,
  ``POST /jobs/{id}/cancel``, ``POST /jobs/{id}/rerun``;
- ``GET /plans/{id}`` (finance first), ``GET /api/plans/{id}`` (the plan JSON of ``procure
  solve --format json``), ``GET /plans/{id}/orders.xlsx | orders.csv | focus.csv``;
- ``GET /compare?a=ID&b=ID``: two plans side by side;
- ``GET /catalog``: the catalog, filtered as ``procure catalog list``;
- ``GET|POST /plans/{id}/frontier``, ``GET|POST /plans/{id}/two-stage``,
  ``GET /api/plans/{id}/analyses``: the carbon frontier and the two-stage plan as jobs
  (:mod:`solver.web.analysis_pages`).

Sign-off: every route is behind the global guard (:mod:`solver.web.guard`:
sign-in, roles, CSRF tokens, a bound on request bodies, security headers) but ``/login``,
``/health`` and ``/static``; sign-in and the admin pages are in :mod:`solver.web.accounts`,
approvals in :mod:`solver.web.approvals`, the audit trail in :mod:`solver.web.audit`.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, select_autoescape
from sqlalchemy import text

from solver.web import faults
from solver.web.jobs import DEFAULT_TIME_LIMIT_S, JobRunner
from solver.web.store import Store, open_store

HERE = Path(__file__).resolve().parent


def _templates() -> Jinja2Templates:
    env = Environment(
        loader=ChoiceLoader(
            [FileSystemLoader(HERE / "templates"), PackageLoader("solver.outputs", "templates")]
        ),
        autoescape=select_autoescape(["j2", "html"]),
    )
    from solver.web import auth, formats

    formats.register(env)  # money, numbers, headers and durations, one way on every page
    env.globals["may"] = auth.may  # a button only for the roles that may use it
    env.globals["job_time_limit_s"] = f"{DEFAULT_TIME_LIMIT_S:g}"  # the solve form's default
    return Jinja2Templates(env=env)


def create_app(
    db_url: str,
    *,
    scheduler: str | None = None,
    catalog_dir: str | None = None,
    instance: str | None = None,
    trusted_user_header: str | None = None,
    approvals: dict[str, int] | None = None,
    trusted_proxies: str | None = None,
) -> FastAPI:
    """The workspace on the database at ``db_url`` (upgraded to the newest migration).

    Parameters
    ----------
    instance
        Names this server, the same after a restart (None: the host's name; ``procure
        serve`` gives host:port); its jobs are owned by a random instance id made now. Jobs
        left ``queued`` or ``running`` by this server's earlier run, by a server gone silent
        or by none are marked ``interrupted`` when the app starts; those of another live
        server on the same database are not (:mod:`solver.web.jobs`).
    trusted_user_header
        Off (None) by default. When set (e.g. ``X-Forwarded-User``), a request carrying
        that header is signed in as the account it names: only for a reverse proxy that
        authenticates people and always sets (or strips) the header itself.
    approvals
        The approvals a plan needs by role (default one finance and one infra).
    trusted_proxies
        Off (None) by default. The reverse proxies' addresses or networks
        (``127.0.0.1,10.0.0.0/8``): only a request from one of them has its
        ``X-Forwarded-For`` (the client, for the sign-in back-off) and
        ``X-Forwarded-Host`` (the host, for the sign-in's origin check) read.

    Raises
    ------
    ProcureError
        ``trusted_proxies`` names something that is not an address or network.
    """
    from solver.errors import ProcureError
    from solver.web import auth, signin
    from solver.web.approvals import DEFAULT_APPROVALS
    from solver.web.guard import Guard

    try:
        proxies = signin.parse_proxies(trusted_proxies)
    except ValueError as exc:
        raise ProcureError(
            str(exc), field="--trusted-proxies", fix="e.g. 127.0.0.1 or 10.0.0.0/8, comma-separated"
        ) from None
    store = open_store(db_url)
    runner = JobRunner(store, scheduler=scheduler, catalog_dir=catalog_dir, name=instance)
    interrupted = runner.start()

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        runner.close()

    app = FastAPI(
        title="procure workspace",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(faults.ids_in_range)],
    )
    app.state.store = store
    app.state.runner = runner
    app.state.catalog_dir = catalog_dir
    app.state.interrupted_at_start = interrupted
    app.state.templates = _templates()
    app.state.trusted_user_header = trusted_user_header or None
    app.state.required_approvals = dict(approvals or DEFAULT_APPROVALS)
    app.state.rate_limit = signin.SignInThrottle()
    app.state.trusted_proxies = proxies
    with store.sessions() as session:
        app.state.secret_key = auth.secret_key(session)
    app.add_middleware(Guard, web=app)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.get("/health")
    def health() -> dict:
        with store.sessions() as session:
            session.execute(text("SELECT 1"))
        return {"status": "ok"}

    from solver.web import accounts, price_upload, price_watch, routes
    from solver.web import approvals as approval_routes

    accounts.register(app)
    routes.register(app)
    price_watch.register(app)
    price_upload.register(app)
    approval_routes.register(app)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        from solver.web.redact import redact

        message = redact(str(exc.detail))  # no connection string on any error page
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=exc.status_code)
        return request.app.state.templates.TemplateResponse(
            request, "error.html.j2", {"message": message}, status_code=exc.status_code
        )

    faults.register(app)
    return app


def store_of(app: FastAPI) -> Store:
    return app.state.store
