"""The stand-in model server and its scripted models: the real client, line and caller with no key.

server.py      the OpenAI-compatible streaming server and its scripted steps (tests make models misbehave)
answer_key.py  players of one task (an answer-key agent, a caller with fixed lines), for tests
book.py        which served task a request belongs to, told from the conversation
players.py     the stand-in models that play many tasks at once (three agents and a caller)
cli.py         `callm serve-stand-in`
demo.py        `callm demo`: the stand-ins ranked on a leaderboard, keyless
"""
