"""Session-wide test setup.

hypothesis is imported here, at start-up, while the main thread is the only thread. Its pytest plugin otherwise
imports it lazily at session end (terminal summary) when a run collected no hypothesis test, and pytest's assertion
rewriting then calls ``ast.parse`` while demo-server and worker threads may still be compiling code: CPython 3.11's
AST recursion counter is shared between threads (cpython#106905), which fails the run with "SystemError: AST
constructor recursion depth mismatch" although every test passed.
"""

import hypothesis  # noqa: F401
