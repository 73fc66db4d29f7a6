"""Scale-out on Ray: the batch jobs and sharded retrieval of factscout on a Ray cluster.

Ray (``pip install 'factscout[ray]'``) schedules the work, restarts dead actors
(``max_restarts``), retries their in-flight calls (``max_task_retries``) and retries tasks
lost with a worker (``max_retries``); factscout adds only what Ray cannot know: how a corpus is
sharded and merged (:mod:`factscout.retrieve.sharded`) and which results must come back in
input order so that a run on a cluster writes the same bytes as a run in one process.

* :mod:`.cluster` — ``--ray auto|ADDRESS``: connect to a cluster (or start a local one);
* :mod:`.shards` — shard indexes built as Ray tasks, shard actors that answer queries;
* :mod:`.jobs` — an ordered map over a pool of Ray actors (BFS trajectories, ``check``);
* :mod:`.encode` — dense corpus encoding on Ray Data actors, in the in-process batches.

Importing this package registers the ``ray`` backends into the runtime packages, which never
import it: the shard backend (``SHARD_BACKENDS`` of :mod:`factscout.retrieve.sharded`), the
corpus encoder (``CORPUS_ENCODERS`` of :mod:`factscout.text.encoder`) and the BFS worker
pool (``BFS_POOLS`` of :mod:`factscout.rewrite.generate`). The CLI imports it when ``--ray`` is
given; a library caller imports it before passing ``ray=...``. Without ``--ray`` the same code
runs in-process; Ray itself is imported only when a backend is used.
"""

from factscout.scale import encode, jobs, shards  # noqa: F401  (registers the "ray" backends)
