"""PostgreSQL as a server search engine: the retriever contract over a live server.

``pg-bm25`` (BM25 summed from stored term weights, equal to the embedded BM25), ``pg-dense``
(pgvector kNN, exact or HNSW) and ``pg-hybrid`` (the embedded fusion over both). Settings
come as for the embedded backends (``bm25``, ``dense``, ``hybrid``) plus ``postgres``:
``{"dsn": ..., "name": ...}``, the DSN defaulting to ``$FACTSCOUT_PG_DSN``. The passages and
scores live on the server; an index directory records where (server, index name, generation),
never the password. ``server.py`` explains the tables and the atomic builds, ``local.py``
starts a throwaway server for tests and benchmarks. psycopg and pgvector are imported only
when a PostgreSQL index is built or loaded (``pip install 'factscout[pg]'``).
"""

from factscout.retrieve.postgres.bm25 import PgBm25Retriever
from factscout.retrieve.postgres.dense import PgDenseRetriever
from factscout.retrieve.postgres.hybrid import PgHybridRetriever
from factscout.retrieve.postgres.server import DSN_ENV, PgConfig

__all__ = ["DSN_ENV", "PgBm25Retriever", "PgConfig", "PgDenseRetriever", "PgHybridRetriever"]
