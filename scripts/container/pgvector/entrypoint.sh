#!/bin/sh
# The stand-in's start: as root, give the data directory to postgres and step down; as
# postgres, create the cluster on the first start (superuser POSTGRES_USER with
# POSTGRES_PASSWORD, database POSTGRES_DB), then run the server on every address.
set -eu
if [ "${1:-}" != postgres ]; then
    exec "$@"
fi
shift
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    chown -R postgres:postgres "$(dirname "$PGDATA")"
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the password of the database superuser}"
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 \
        --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        # psql interpolates :"db" (quoted as an identifier) in its input, not in -c.
        echo 'CREATE DATABASE :"db"' | psql -v ON_ERROR_STOP=1 -q --username="$user" \
            --dbname=postgres --set=db="$db"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "database cluster created in $PGDATA"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
