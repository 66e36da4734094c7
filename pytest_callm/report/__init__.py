"""Showing results: the summary tables (`summary`), `callm compare`, the HTML report and its task
pages (`report_html` renders them from `builder`, `views`, `handoff_graph`, `word_diff`, `sources`,
`formatting`, `redaction`; `task_pages`, `templates/`), and links to them in the terminal (`links`)."""
