"""A benchmark run's life in one process (`run_session`: its folder, results, summary, report and
what a stopped run says; `run_models`: the models it talks to, their keys and servers), above the
attempts it plays (`runs`) and the pages it writes (`report`), under the pytest layer that drives it."""
