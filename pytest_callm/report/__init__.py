"""Showing results: the summary tables (`summary`), `callm compare`, the HTML report and its task
pages (`report_html`, `task_pages`, `templates/`), and links to them in the terminal (`links`)."""
