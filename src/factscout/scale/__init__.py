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

Without ``--ray`` the same code runs in-process; Ray is imported only when asked for.
"""
