# .ci/postgres.sh is sourced by .ci/run: it gives the tests a throwaway
# PostgreSQL cluster and exports CANVAS_TEST_POSTGRES (internal/pgtest), the
# connection string of its superuser. The cluster lives in a temporary
# directory, listens on 127.0.0.1 only, on a free port, and is stopped and
# removed when the job exits. PostgreSQL comes from Debian's packages when
# initdb is missing. initdb refuses to run as root, so the cluster runs as
# the postgres user the package creates (or as a system user made for it).
#
# The cluster is for tests alone: fsync is off (it is removed at the end
# anyway), and authentication is trust on loopback.

pg_bindir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    echo "$dir"
  elif command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

if [ -z "$(pg_bindir)" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
PG_BIN="$(pg_bindir)"
if [ -z "$PG_BIN" ]; then
  echo "postgres.sh: no initdb after installing postgresql" >&2
  exit 1
fi

# The user the cluster runs as: never root.
PG_USER="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  PG_USER=postgres
  if ! id "$PG_USER" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
  fi
fi
pg_as() {
  if [ "$(id -un)" = "$PG_USER" ]; then "$@"; else runuser -u "$PG_USER" -- "$@"; fi
}

PG_DIR="$(mktemp -d /tmp/canvas-pg.XXXXXX)"
chown "$PG_USER" "$PG_DIR"
chmod 700 "$PG_DIR"
pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" --username=postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null

canvas_pg_stop() {
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap canvas_pg_stop EXIT

# A free port: one nothing answers on; should another process take it
# before the server binds it, the start fails and the next port is tried.
pg_started=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  PG_PORT=$((20000 + RANDOM % 40000))
  if (exec 3<>"/dev/tcp/127.0.0.1/$PG_PORT") 2>/dev/null; then
    continue # in use
  fi
  if pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 60 -l "$PG_DIR/server.log" \
    -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" start >/dev/null; then
    pg_started=yes
    break
  fi
done
if [ -z "$pg_started" ]; then
  echo "postgres.sh: the cluster did not start:" >&2
  cat "$PG_DIR/server.log" >&2 || true
  exit 1
fi

export CANVAS_TEST_POSTGRES="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT ($PG_DIR), as $PG_USER"
