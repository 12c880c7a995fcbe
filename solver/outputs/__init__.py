"""What goes out: plain text and Markdown for people (``text``, ``markdown``), safe files
and workbooks, the report (Jinja2 templates in ``templates/``), purchase orders, FOCUS
rows, notebook display helpers."""
