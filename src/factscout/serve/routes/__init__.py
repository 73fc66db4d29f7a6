"""The service's endpoints as FastAPI routers, one module per concern, included by
:func:`factscout.serve.app.create_app`:

* :mod:`.health`: ``GET /v1/health``, liveness, what is loaded and the queue figures;
* :mod:`.check`: ``POST /v1/check``, one claim's report, synchronously;
* :mod:`.jobs`: ``POST /v1/checks`` and ``GET /v1/checks/{job_id}``, check jobs run in the background;
* :mod:`.factchecks`: ``GET /v1/factchecks``, published fact-checks from the server's memory;
* :mod:`.queries`: ``POST /v1/search``, ``POST /v1/plan``, ``POST /v1/rewrite``, the query editor's steps;
* :mod:`.page`: ``GET /`` the page and ``GET /favicon.ico`` (the ``/static`` files are mounted by the app).

Handlers read what they share (the service, the runner, the job store, the token) from one
:class:`~.state.ServeState` through the ``get_state`` dependency (:mod:`.state`); :mod:`.errors`
writes the ``ErrorResponse`` body every failure answers with.
"""
