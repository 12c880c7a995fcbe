"""Reading a posted form without holding the event loop: an urlencoded body (what every
page's form posts) is decoded in a worker thread, so that a large one (up to the guard's
1 MB bound) does not stop every other request while it is read."""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from starlette.datastructures import FormData

URLENCODED = "application/x-www-form-urlencoded"


def parse_urlencoded(body: bytes) -> FormData:
    """The fields of an urlencoded body as Starlette reads them (bytes as Latin-1, %XX
    escapes as UTF-8, ``+`` as a space, blank values kept)."""
    pairs = parse_qsl(body.decode("latin-1"), keep_blank_values=True, encoding="utf-8")
    return FormData(pairs)


async def read_form(request: Request) -> FormData:
    """The request's form: urlencoded bodies decoded off the event loop, anything else
    (multipart) by Starlette."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == URLENCODED:
        return await run_in_threadpool(parse_urlencoded, await request.body())
    return await request.form()
