"""MkDocs hook: the site loads no script, stylesheet or font from another host.

The workplace forbids CDNs for front-end assets. nbconvert's page template (the notebook
pages) carries a loader that imports mermaid from a CDN when a notebook holds a mermaid
diagram; the notebooks hold none, so the loader is removed. Any other reference to an
asset on another host is logged as a warning, which fails the strict build.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger("mkdocs.hooks.no_cdn")

#: nbconvert's mermaid loader: a module script that imports mermaid from a CDN.
MERMAID_LOADER = re.compile(
    r"<script type=\"module\">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*?</script>", re.S
)
#: an empty script element nbconvert writes where its MathJax URL would go
EMPTY_SCRIPT = re.compile(r"<script src=\"\">\s*</script>")
#: an asset fetched from another host: a script or stylesheet URL, a module import, a font
EXTERNAL_ASSET = re.compile(
    r"<script[^>]+src=\"(?:https?:)?//[^\"]+\"|<link[^>]+rel=\"stylesheet\"[^>]+href=\"(?:https?:)?//"
    r"[^\"]+\"|import\(\s*[\"'](?:https?:)?//[^\"']+[\"']|@import\s+url\(\s*[\"']?(?:https?:)?//"
)


def on_post_page(output: str, page: object, config: object) -> str:
    """Drop nbconvert's CDN loader and empty script tag; warn on any other external asset."""
    output = MERMAID_LOADER.sub("", output)
    output = EMPTY_SCRIPT.sub("", output)
    for found in EXTERNAL_ASSET.finditer(output):
        log.warning("page %s loads an asset from another host: %s", page, found.group(0)[:120])
    return output
