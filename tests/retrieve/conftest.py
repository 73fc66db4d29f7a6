import os

import pytest


@pytest.fixture(scope="session")
def pg_server():
    """A live PostgreSQL 16 + pgvector on 127.0.0.1 for this session; sets $FACTSCOUT_PG_DSN."""
    from factscout.retrieve.postgres import DSN_ENV
    from factscout.retrieve.postgres.local import LocalPostgres

    before = os.environ.get(DSN_ENV)
    with LocalPostgres() as server:
        os.environ[DSN_ENV] = server.dsn
        try:
            yield server
        finally:
            if before is None:
                os.environ.pop(DSN_ENV, None)
            else:
                os.environ[DSN_ENV] = before
