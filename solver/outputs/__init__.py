"""What goes out: safe files and workbooks, the report (Jinja2 templates in
``templates/``), purchase orders, FOCUS rows, notebook display helpers."""
