"""Playing attempts: one process's wiring (`runtime`: tool server, clients, the event loop of
`loop_thread`), attempts played, resumed or rescored (`attempts`), and calls played ahead (`in_flight`)."""
